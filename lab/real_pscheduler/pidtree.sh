# pidtree.sh: sourced by nodes.sh and node53.sh. Stopping what a node started, by PID, with
# everything those processes started in turn (gunicorn's workers, a daemon under supervise.sh,
# the tools a runner forked): a node stopped with a process left over keeps writing into the
# node's directory and keeps talking to the next database started on the same socket.

# pid_tree PID...: the live PIDs given and all their descendants, parents first.
pid_tree() {
  local table pid child out=() todo=("$@")
  table=$(ps -e -o pid=,ppid=,stat=)
  while ((${#todo[@]})); do
    pid=${todo[0]}; todo=("${todo[@]:1}")
    # only a process that is there and not a zombie: a recorded PID that ended is not followed
    awk -v p="$pid" '$1 == p && $3 !~ /^Z/ {found = 1} END {exit !found}' <<<"$table" || continue
    out+=("$pid")
    for child in $(awk -v p="$pid" '$2 == p {print $1}' <<<"$table"); do todo+=("$child"); done
  done
  echo "${out[*]}"
}

# pids_alive PID...: how many of these are still running (zombies do not count: nobody may reap them)
pids_alive() {
  (($#)) || { echo 0; return; }
  ps -o stat= -p "$(IFS=,; echo "$*")" 2>/dev/null | grep -vc '^Z' || true
}

# stop_pid_file FILE: SIGTERM to every process of the trees of the PIDs in FILE (one per line),
# up to 10 s for them to end, SIGKILL to what is left, up to 5 s for that; FILE is removed.
# Fails (status 1, the PIDs on stderr) if a process outlives SIGKILL.
stop_pid_file() {
  local file=$1 tree _
  [[ -f $file ]] || return 0
  # the tree is taken once, before any signal: a child whose parent ends is re-parented and
  # could no longer be found by its parent's PID
  tree=$(pid_tree $(cat "$file"))
  rm -f "$file"
  [[ -n $tree ]] || return 0
  kill $tree 2>/dev/null || true
  for _ in $(seq 20); do
    (($(pids_alive $tree) == 0)) && return 0
    sleep 0.5
  done
  kill -9 $tree 2>/dev/null || true
  for _ in $(seq 10); do
    (($(pids_alive $tree) == 0)) && return 0
    sleep 0.5
  done
  echo "stop_pid_file: still running after SIGKILL: $tree" >&2
  return 1
}
