#!/bin/bash
# Two real upstream pScheduler nodes, built from source, in network namespaces, with this
# project's plugins installed the way its packages install them. Used by tests/integration/
# and `make bench-pscheduler`; can be driven by hand too (root, Debian 12, after scripts/setup.sh).
#
#   nodes.sh up         namespaces, syslog sink, build + start nodes a and b (fresh databases)
#   nodes.sh down       stop everything `up` started, by PID, and delete the namespaces
#   nodes.sh cli N ARGS the operator's `pscheduler` CLI of node N (a or b), inside its namespace
#   nodes.sh env        print the shell variables the nodes use (RPS, addresses)
#
# Any number of nodes in namespaces made by someone else (the real mesh, lab/real_pscheduler/
# mesh.py): RPS_NODES="NAME,NETNS,ADDR4,ADDR6 ..." names them, then
#   nodes.sh build      build the node tree ONCE (node-proto) and the shared classes/library;
#                       skipped while $RPS/build.stamp matches what it is built from (`up` uses
#                       it too and clones a and b from node-proto: one build per CI run)
#   nodes.sh start N    copy node-proto to node-N (its paths rewritten), start N, wait for its API
#   nodes.sh stop N     stop N by PID (PostgreSQL with pg_ctl)
#   nodes.sh cli N ARGS as above
#
# Environment:
#   PSCHEDULER_SRC  upstream source: the directory holding pscheduler-*.tar.gz (perfsonar/
#                   pscheduler 5.2.5, the subset a node needs), or an unpacked tree
#                   (default: ../shared/real-pscheduler/ next to the project)
#   RPS             work directory (default /srv/jumbo-rps). Short (PostgreSQL's socket path must
#                   stay under 107 bytes) and traversable by the postgres and pscheduler users.
#   RPS_DEPS        pyjq + crontab for /usr/bin/python3 (scripts/setup.sh installs them there;
#                   default var/real-pscheduler/pydeps)
#   RPS_UPSTREAM_FIXES=1  an experiment, never a default: each started node gets three
#                   one-line changes to upstream's scheduling (upstream_fixes below) in its
#                   own clone, to measure what upstream's conflict drop costs a mesh
#
# Topology (ground truth for the tests):
#   rps-a  a0 198.18.200.1/24 fd00:200::1/64 MTU 9000
#   rps-r1 r1a 198.18.200.254 fd00:200::fe MTU 9000 | r1b 198.18.201.254 fd00:201::fe MTU 8950;
#          r1 drops the ICMP frag-needed / packet-too-big it would send: a PMTUD black hole
#          at hop 1; 198.18.202.0/24 and fd00:202::/64 are routed to a blackhole (never answer)
#   rps-b  b0 198.18.201.2/24 fd00:201::2/64 MTU 8950
# A->B path MTU 8950, IPv4 and IPv6; B->A: b0 is 8950, so nothing larger leaves B.
#
# The root namespace is touched only to create/delete rps-a, rps-r1, rps-b and, when the host
# has no syslog daemon, to bind /dev/log (removed again by `down`).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PROJECT=$(cd "$HERE/../.." && pwd)
RPS=${RPS:-/srv/jumbo-rps}
PSCHEDULER_SRC=${PSCHEDULER_SRC:-$PROJECT/../shared/real-pscheduler}
RPS_DEPS=${RPS_DEPS:-$PROJECT/var/real-pscheduler/pydeps}
NAMESPACES="rps-a rps-r1 rps-b"
PG=/usr/lib/postgresql/15/bin
DB_PASSWORD=jumbo-rps-lab
declare -A NETNS=([a]=rps-a [b]=rps-b)
declare -A ADDR4=([a]=198.18.200.1 [b]=198.18.201.2)
declare -A ADDR6=([a]=fd00:200::1 [b]=fd00:201::2)
for spec in ${RPS_NODES:-}; do
  IFS=, read -r name ns4 a4 a6 <<<"$spec"
  NETNS[$name]=$ns4; ADDR4[$name]=$a4; ADDR6[$name]=$a6
done

say() { echo "nodes.sh: $*" >&2; }
die() { say "$*"; exit 1; }
# Only in the foreground: `in_ns ... &` forks a shell that runs `ip netns exec` as its child,
# so $! would be that shell, and a stop by that PID would leave the process itself running.
# What is started in the background is started with `ip netns exec ... &`: $! is the process.
in_ns() { ip netns exec "$@"; }
. "$HERE/pidtree.sh"

# ------------------------------------------------------------------------------------------
# The network

network_up() {
  local ns
  for ns in $NAMESPACES; do ip netns add "$ns"; in_ns "$ns" ip link set lo up; done
  # Both veth pairs are created inside the namespaces, never in the root namespace.
  in_ns rps-a ip link add a0 mtu 9000 type veth peer name r1a mtu 9000 netns rps-r1
  in_ns rps-r1 ip link add r1b mtu 8950 type veth peer name b0 mtu 8950 netns rps-b
  in_ns rps-a ip addr add 198.18.200.1/24 dev a0
  in_ns rps-a ip -6 addr add fd00:200::1/64 dev a0 nodad
  in_ns rps-r1 ip addr add 198.18.200.254/24 dev r1a
  in_ns rps-r1 ip -6 addr add fd00:200::fe/64 dev r1a nodad
  in_ns rps-r1 ip addr add 198.18.201.254/24 dev r1b
  in_ns rps-r1 ip -6 addr add fd00:201::fe/64 dev r1b nodad
  in_ns rps-b ip addr add 198.18.201.2/24 dev b0
  in_ns rps-b ip -6 addr add fd00:201::2/64 dev b0 nodad
  in_ns rps-a ip link set a0 up; in_ns rps-b ip link set b0 up
  in_ns rps-r1 ip link set r1a up; in_ns rps-r1 ip link set r1b up
  in_ns rps-a ip route add default via 198.18.200.254
  in_ns rps-a ip -6 route add default via fd00:200::fe
  in_ns rps-b ip route add default via 198.18.201.254
  in_ns rps-b ip -6 route add default via fd00:201::fe
  in_ns rps-r1 ip route add blackhole 198.18.202.0/24
  in_ns rps-r1 ip -6 route add blackhole fd00:202::/64
  in_ns rps-r1 sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
  # The API listens on 443 as user pscheduler; ICMP echo sockets for the tools (EL9's default).
  for ns in rps-a rps-b; do
    in_ns "$ns" sysctl -qw net.ipv4.ip_unprivileged_port_start=0 "net.ipv4.ping_group_range=0 2147483647"
  done
  in_ns rps-r1 nft -f - <<'NFT'
table inet jumbo_blackhole {
  chain output {
    type filter hook output priority 0; policy accept;
    icmp type destination-unreachable icmp code frag-needed drop
    icmpv6 type packet-too-big drop
  }
}
NFT
}

# ------------------------------------------------------------------------------------------
# Building a node from source (paths as upstream's debian/rules sets them, under $RPS/node-N)

unpack_source() {
  local tarball
  if [[ -d $PSCHEDULER_SRC/pscheduler-server ]]; then
    SRC=$PSCHEDULER_SRC
    return
  fi
  tarball=$(ls "$PSCHEDULER_SRC"/pscheduler-*.tar.gz 2>/dev/null | head -1 || true)
  [[ -n $tarball ]] || die "no upstream pScheduler source in $PSCHEDULER_SRC (see docs/developer.md, 'Tests')"
  rm -rf "$RPS/src"; mkdir -p "$RPS/src"
  tar -xzf "$tarball" -C "$RPS/src"
  SRC=$RPS/src/pscheduler
}

build_node() {
  local node=$1
  local P=$RPS/node-$node B=$RPS/build/$node
  local ETC=$P/etc/pscheduler LIB=$P/usr/lib/pscheduler SHARE=$P/usr/share/pscheduler
  rm -rf "$B" "$P"; mkdir -p "$B" "$P"
  # The CLI
  cp -a "$SRC/pscheduler-core/pscheduler-core" "$B/core"
  make -s -C "$B/core" ARCHIVEDEFAULTDIR=$ETC/default-archives BINDIR=$P/usr/bin \
    COMMANDSDIR=$LIB/commands COMMANDSINSTALLED=$LIB/commands CLASSESDIR=$CLASSES \
    CLASSESINSTALLED=$CLASSES INTERNALSDIR=$LIB/internals INTERNALSINSTALLED=$LIB/internals \
    LIMITSFILE=$ETC/limits.conf TOOLCONFIGDIR=$ETC/tool PROFILEDDIR=$P/etc/profile.d \
    BASHCOMPDIR=$P/usr/share/bash-completion/completions build install
  # The server: daemons, utilities, database, API
  local S=$B/server
  cp -a "$SRC/pscheduler-server/pscheduler-server" "$S"
  make -s -C "$S/daemons" CONFIGDIR=$ETC/daemons DAEMONDIR=$LIB/daemons \
    DSNFILE=$ETC/database/database-dsn LOGDIR=$P/var/log/pscheduler PGDATABASE=pscheduler \
    PGPASSFILE=$ETC/database/pgpassfile PGSERVICE=postgresql.service PGUSER=pscheduler \
    PSUSER=pscheduler ARCHIVERDEFAULTDIR=$ETC/default-archives \
    STORAGEDIR=$P/var/pscheduler-server VAR=$P/var build
  make -s -C "$S/daemons" CONFIGDIR=$ETC/daemons UNITDIR=$P/lib/systemd/system \
    DAEMONDIR=$LIB/daemons COMMANDDIR=$LIB/commands INTERNALSDIR=$LIB/internals \
    STORAGEDIR=$P/var/pscheduler-server install
  make -s -C "$S/utilities" CONFIGDIR=$ETC CONFIGURABLESFILE=$ETC/configurables.conf \
    LIMITSFILE=$ETC/limits.conf LOGDIR=$P/var/log/pscheduler LOGFILE=pscheduler.log \
    PGDATABASE=pscheduler PGPASSFILE=$ETC/database/pgpassfile VERSION=5.2.5-jumbo-lab
  make -s -C "$S/utilities" DESTDIR=$LIB/commands INTERNALSDIR=$LIB/internals install
  make -s -C "$S/database" DATABASE=pscheduler DATADIR=$SHARE \
    PASSWORDFILE=$ETC/database/database-password DSNFILE=$ETC/database/database-dsn \
    PGPASSFILE=$ETC/database/pgpassfile ROLE=pscheduler
  make -s -C "$S/database" DATADIR=$SHARE INTERNALSDIR=$LIB/internals install
  make -s -C "$S/api-server" USER_NAME=pscheduler GROUP_NAME=pscheduler API_ROOT=/pscheduler \
    API_DIR=$SHARE/api-server CONF_D=/etc/apache2/conf-available/ PREFIX=$B/apiroot \
    DSN_FILE=$ETC/database/database-dsn LIMITS_FILE=$ETC/limits.conf \
    RUN_DIR=$P/var/pscheduler-server PYTHON=/usr/bin/python3 install
  mkdir -p "$SHARE/api-server/pschedulerapiserver"
  cp -a "$B/apiroot/$SHARE/api-server/." "$SHARE/api-server/"
  cp "$S"/api-server/pschedulerapiserver/*.py "$SHARE/api-server/pschedulerapiserver/"
  mkdir -p "$ETC/database" "$ETC/default-archives" "$P/var/log/pscheduler" "$P/var/pscheduler-server"
  install -m 0644 "$HERE/limits.conf" "$ETC/limits.conf"
  # Upstream's postgresql-load runs `su - postgres`, which loses PGHOST (this node's socket).
  cat >"$P/usr/bin/postgresql-load" <<EOS
#!/bin/sh
# postgresql-load for node $node: feed SQL to its own cluster as postgres
role=
while [ \$# -gt 0 ]; do
  case "\$1" in
    --role) role="SET ROLE '\$2';"; shift 2 ;;
    --log-errors) shift 2 ;;
    *) break ;;
  esac
done
{ echo "\$role"; cat "\$@"; } | runuser -u postgres -- env PGOPTIONS=--client-min-messages=warning \\
  psql -h $P/pgsock -q -v ON_ERROR_STOP=1 postgres
EOS
  chmod 755 "$P/usr/bin/postgresql-load"
}

build_shared() {
  # python-pscheduler with its classes directory baked in (its Makefile's file-setup step)
  rm -rf "$CLASSES" "$PYLIB" "$RPS/bin" "$RPS/build"
  mkdir -p "$CLASSES"/{test,tool,archiver,context} "$PYLIB" "$RPS/bin" "$RPS/build"
  cp -a "$SRC/python-pscheduler/pscheduler" "$RPS/build/python-pscheduler"
  find "$RPS/build/python-pscheduler/pscheduler" -name '*.py' -exec sed -i -e "s|__CLASSES__|$CLASSES|" {} +
  cp -a "$RPS/build/python-pscheduler/pscheduler" "$PYLIB/"
  cp -a "$SRC/python-icmperror/icmperror/icmperror" "$PYLIB/"
  [[ -d $RPS_DEPS/crontab ]] && ls "$RPS_DEPS" | grep -qi '^_*pyjq' \
    || die "pyjq/crontab for /usr/bin/python3 missing in $RPS_DEPS: run scripts/setup.sh"
  cp -a "$RPS_DEPS"/. "$PYLIB/"
  # Upstream tests and tools the suite is checked beside, by their own Makefiles
  local p kind name
  # (mtu with fwmtu and tracemtu: the floor and the prober bench-pscheduler sets pmtu beside)
  for p in test-rtt/rtt test-idle/idle test-throughput/throughput test-trace/trace \
           test-mtu/mtu tool-ping/ping tool-snooze/snooze tool-iperf3/iperf3 \
           tool-tracepath/tracepath tool-fwmtu/fwmtu tool-tracemtu/tracemtu \
           archiver-syslog/syslog; do
    kind=${p%%-*}; name=${p##*/}
    make -s -C "$SRC/pscheduler-$p" DESTDIR="$CLASSES/$kind/$name" CONFDIR="$RPS/etc-tool/$name" \
      DOCDIR="$RPS/doc/$name" PYTHON=/usr/bin/python3 install >/dev/null
  done
  # This project, exactly as debian/rules and rpm/*.spec install it (only the prefix differs)
  sh "$PROJECT/scripts/pkg-install.sh" library "$PROJECT/python-jumbo/jumbo" "$PYLIB" "$RPS/bin" /usr/bin/python3
  local pair
  for pair in test/pmtu:pscheduler-test-pmtu/pmtu \
              test/jumbo-throughput:pscheduler-test-jumbo-throughput/jumbo-throughput \
              tool/jumbocheck:pscheduler-tool-jumbocheck/jumbocheck \
              archiver/jumbo:pscheduler-archiver-jumbo/jumbo; do
    sh "$PROJECT/scripts/pkg-install.sh" plugin "$PROJECT/${pair#*:}" "$CLASSES/${pair%%:*}"
  done
  /usr/bin/python3 -m compileall -q "$PYLIB/jumbo" >/dev/null
  chmod -R a+rX "$CLASSES" "$PYLIB" "$RPS/bin"
}

# ------------------------------------------------------------------------------------------
# Running a node

node_env() {
  local node=$1 P=$RPS/node-$1
  echo "PGHOST=$P/pgsock PATH=$P/usr/bin:$RPS/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
       "PYTHONPATH=$PYLIB PSCHEDULER_LOCALHOST=${ADDR4[$node]} LANG=C.UTF-8" \
       "JUMBO_SQLITE_DIRS=$RPS/archive:$RPS/archive-pair"  # the integration tests' SQLite stores (docs/security.md)
}

# The experiment RPS_UPSTREAM_FIXES=1: upstream 5.2.5's own code (this node's clone of it),
# changed where it drops exclusive runs under contention (docs/operator.md, known issues):
#  - api_proposed_times compares `run.priority >= use_priority`: a pending run whose priority
#    is NULL (every run on a node whose limits assign none) is never avoided, while the insert
#    check (run_has_conflicts) counts it as 0. Changed to COALESCE(run.priority, 0).
#  - the same function sets use_priority to NULL for a task that HAS a priority (its comment
#    says "no priority for the task"): such a task's proposals avoid no pending run at all.
#    Changed to the task's priority, as the other branch does.
#  - the scheduler declares "Gave up after too many scheduling conflicts" whenever its last
#    try was used, also when that try succeeded (the runs it posted are then left in state
#    scheduling, holding their slot). Changed to give up only on a conflict.
# Each change must match exactly once, or the node is not started.
upstream_fixes() {
  local P=$1 envv=$2 SHARE=$1/usr/share/pscheduler LIB=$1/usr/lib/pscheduler f
  f=$P/proposed-times-fixed.sql
  { echo '\c pscheduler'
    awk '/^CREATE OR REPLACE FUNCTION api_proposed_times\(/ {on = 1}
         on {print}
         on && /^\$\$ LANGUAGE plpgsql;/ {exit}' "$SHARE/database-build.sql"; } >"$f"
  [[ $(grep -c 'AND ( run.priority >= use_priority' "$f") == 1 ]] || die "upstream_fixes: priority comparison not found once"
  [[ $(grep -c 'use_priority := NULL;' "$f") == 1 ]] || die "upstream_fixes: use_priority := NULL not found once"
  sed -i -e 's/AND ( run\.priority >= use_priority/AND ( COALESCE(run.priority, 0) >= use_priority/' \
         -e 's/use_priority := NULL;/use_priority := LEAST(use_priority, taskrec.priority);/' "$f"
  env $envv "$P/usr/bin/postgresql-load" "$f" >/dev/null
  [[ $(grep -c '^    if tries_left == 0:$' "$LIB/daemons/scheduler") == 1 ]] || die "upstream_fixes: scheduler's give-up test not found once"
  sed -i 's/^    if tries_left == 0:$/    if tries_left == 0 and conflict:/' "$LIB/daemons/scheduler"
  say "$(basename "$P"): upstream scheduling changed (RPS_UPSTREAM_FIXES=1, an experiment)"
}

start_node() {
  local node=$1 ns=${NETNS[$1]} P=$RPS/node-$1
  local ETC=$P/etc/pscheduler LIB=$P/usr/lib/pscheduler SHARE=$P/usr/share/pscheduler
  local LOG=$P/log envv as_ps d
  envv=$(node_env "$node")
  as_ps="setpriv --reuid=pscheduler --regid=pscheduler --init-groups"
  mkdir -p "$LOG" "$P/pgsock" "$P/pgdata"; chown postgres "$P/pgsock" "$P/pgdata"; chmod 1777 "$LOG"
  # A PostgreSQL 15 cluster of its own, unix socket only, inside the node's namespace
  runuser -u postgres -- $PG/initdb -D "$P/pgdata" -A peer -E UTF8 >"$LOG/initdb.log"
  cat >>"$P/pgdata/postgresql.conf" <<EOC
listen_addresses = ''
unix_socket_directories = '$P/pgsock'
max_connections = 500
# A throwaway lab cluster: no flush to disk per commit (pScheduler's triggers commit often, and
# on a shared machine each flush waits on everyone's I/O); a crash loses only a test's node.
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 32MB
EOC
  printf 'local pscheduler pscheduler trust\nlocal all postgres peer\nlocal all all md5\n' >"$P/pgdata/pg_hba.conf"
  in_ns "$ns" runuser -u postgres -- env $envv $PG/pg_ctl -D "$P/pgdata" -l "$LOG/postgresql.log" -w start >/dev/null
  head -1 "$P/pgdata/postmaster.pid" >"$P/postgres.pid"
  # The database as `pscheduler internal db-update` builds it, and the DSN files of a package
  env $envv "$P/usr/bin/postgresql-load" "$SHARE/database-build-super.sql"
  env $envv "$P/usr/bin/postgresql-load" --role pscheduler "$SHARE/database-build.sql"
  echo "ALTER ROLE pscheduler WITH PASSWORD '$DB_PASSWORD';" | "$P/usr/bin/postgresql-load"
  # How far ahead the scheduler places runs (upstream's default P1D; only in the database):
  # the mesh lab shortens it as it shortens the repeats (lab/steady.py horizon).
  if [[ -n ${RPS_SCHEDULE_HORIZON:-} ]]; then
    [[ $RPS_SCHEDULE_HORIZON =~ ^PT[0-9]+S$ ]] || die "RPS_SCHEDULE_HORIZON: PT<seconds>S, not $RPS_SCHEDULE_HORIZON"
    printf '\\c pscheduler\nUPDATE configurables SET schedule_horizon = %s;\n' \
      "'$RPS_SCHEDULE_HORIZON'" | "$P/usr/bin/postgresql-load"
  fi
  if [[ ${RPS_UPSTREAM_FIXES:-} == 1 ]]; then upstream_fixes "$P" "$envv"; fi
  echo "host=$P/pgsock dbname=pscheduler user=pscheduler password=$DB_PASSWORD" >"$ETC/database/database-dsn"
  echo "$DB_PASSWORD" >"$ETC/database/database-password"
  echo "*:*:pscheduler:pscheduler:$DB_PASSWORD" >"$ETC/database/pgpassfile"
  chmod 600 "$ETC"/database/*; chown pscheduler "$ETC"/database/*
  in_ns "$ns" env $envv "$LIB/internals/warmboot"
  : >"$P/pids"
  for d in ticker scheduler runner archiver; do
    mkdir -p "$P/var/pscheduler-server/$d/tmp"; chown -R pscheduler "$P/var/pscheduler-server/$d"
    chmod 700 "$P/var/pscheduler-server/$d/tmp"
    # The runner logs at debug level: a run it never picks up is marked Missed with no error,
    # and only its debug lines (each pickup, each worker, each late start) say why.
    local debug=""; [[ $d == runner ]] && debug=--debug
    ip netns exec "$ns" "$HERE/supervise.sh" "$LOG/$d.log" $as_ps env $envv \
      TMPDIR="$P/var/pscheduler-server/$d/tmp" "$LIB/daemons/$d" \
      --dsn "@$ETC/database/database-dsn" --verbose $debug >/dev/null 2>&1 </dev/null &
    echo $! >>"$P/pids"
    # The ticker's cold boot recreates the heartbeat rows; the others must not race it.
    if [[ $d == ticker ]]; then sleep 2; fi
  done
  # The API: gunicorn in place of Apache mod_wsgi (upstream: 10 processes x 15 threads; 4 x 15
  # keeps the schedulers' 3 s API pings answered under a burst of submissions; the mesh runs
  # more nodes on the same cores and asks for fewer: RPS_API_WORKERS, RPS_API_THREADS)
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/api.key" -out "$P/api.crt" -days 2 \
    -subj "/CN=${ADDR4[$node]}" 2>/dev/null
  chown pscheduler "$P/api.key" "$P/api.crt"
  ip netns exec "$ns" $as_ps env $envv SCRIPT_NAME=/pscheduler gunicorn --chdir "$SHARE/api-server" \
    --bind "${ADDR4[$node]}:443" --bind "[${ADDR6[$node]}]:443" \
    --certfile "$P/api.crt" --keyfile "$P/api.key" --workers "${RPS_API_WORKERS:-4}" --threads "${RPS_API_THREADS:-15}" --timeout 120 \
    --access-logfile "$LOG/api-access.log" --error-logfile "$LOG/api.log" \
    pschedulerapiserver:application >"$LOG/api.out" 2>&1 </dev/null &
  echo $! >>"$P/pids"
}

stop_node() {
  local P=$RPS/node-$1 pid left=0
  stop_pid_file "$P/pids" || left=1
  if [[ -f $P/pgdata/postmaster.pid ]]; then
    runuser -u postgres -- $PG/pg_ctl -D "$P/pgdata" -m fast -w stop >/dev/null 2>&1 || {
      pid=$(cat "$P/postgres.pid" 2>/dev/null || true)
      [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null || true
    }
  fi
  ((left == 0)) || die "node $1: processes left running (see above)"
}

cli() {
  local node=$1; shift
  local P=$RPS/node-$node
  # unbuffered: a caller reading the output through a pipe sees each line as it comes
  exec ip netns exec "${NETNS[$node]}" env -i HOME=/root TERM=dumb LANG=C.UTF-8 PGHOST="$P/pgsock" \
    PYTHONUNBUFFERED=1 \
    PATH="$P/usr/bin:$RPS/bin:/usr/sbin:/usr/bin:/sbin:/bin" PYTHONPATH="$PYLIB" \
    PSCHEDULER_LOCALHOST="${ADDR4[$node]}" pscheduler "$@"
}

build_stamp() {
  # What a built tree depends on: upstream's source, the suite's installed parts, this script.
  { ls -l --time-style=+%s "$PSCHEDULER_SRC"/pscheduler-*.tar.gz 2>/dev/null || true
    echo "$RPS_DEPS"
    find "$PROJECT/python-jumbo/jumbo" "$PROJECT"/pscheduler-test-pmtu \
      "$PROJECT"/pscheduler-test-jumbo-throughput "$PROJECT"/pscheduler-tool-jumbocheck \
      "$PROJECT"/pscheduler-archiver-jumbo "$PROJECT/scripts/pkg-install.sh" "$HERE/limits.conf" \
      "$0" -type f ! -name '*.pyc' -printf '%P %s %T@\n' | sort
  } | sha256sum | cut -d' ' -f1
}

build_once() {
  # The node tree (node-proto, the classes and the library) is built once per content: the
  # two-node lab and the mesh (lab/real_mesh.py) share $RPS, so a CI run builds it once.
  local stamp
  mkdir -p "$RPS"; chmod 755 "$RPS"
  stamp=$(build_stamp)
  if [[ -d $RPS/node-proto && -f $RPS/build.stamp && $(cat "$RPS/build.stamp") == "$stamp" ]]; then
    say "node tree in $RPS is current (build.stamp): not rebuilt"
    return
  fi
  rm -f "$RPS/build.stamp"
  unpack_source
  { build_shared && build_node proto; } >"$RPS/build.log" 2>&1 \
    || { tail -20 "$RPS/build.log" >&2; die "build failed"; }
  echo "$stamp" >"$RPS/build.stamp"
}

clone_node() {
  # Every node of the mesh from the one tree built by `build`: the build's absolute paths
  # (scripts, Makefile-substituted configs) are rewritten to the node's own directory.
  local node=$1 P=$RPS/node-$1
  [[ -d $RPS/node-proto ]] || die "no node-proto in $RPS: run 'nodes.sh build' first"
  rm -rf "$P"; cp -a "$RPS/node-proto" "$P"
  grep -rlIZ -- "$RPS/node-proto" "$P" | xargs -0r sed -i -e "s|$RPS/node-proto|$P|g"
}

wait_api() {
  # RPS_API_WAIT: seconds (default 60; the mesh starts several nodes on a busy machine)
  local node=$1 wait=${RPS_API_WAIT:-60} deadline=$((SECONDS + ${RPS_API_WAIT:-60}))
  until in_ns "${NETNS[$node]}" curl -skf -m 3 "https://${ADDR4[$node]}/pscheduler/" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "node $node: API not answering after $wait s (see $RPS/node-$node/log/api.log)"
    sleep 0.5
  done
}

# ------------------------------------------------------------------------------------------

up() {
  [[ $(id -u) -eq 0 ]] || die "needs root (namespaces, PostgreSQL clusters)"
  getent passwd pscheduler >/dev/null || die "no user pscheduler: run scripts/setup.sh"
  for ns in $NAMESPACES; do
    ip netns list | grep -qw "$ns" && die "namespace $ns exists: another lab is up ('nodes.sh down' first)"
  done
  mkdir -p "$RPS"; chmod 755 "$RPS"
  rm -rf "$RPS"/node-a "$RPS"/node-b
  local t0=$SECONDS
  network_up
  if [[ ! -S /dev/log ]]; then
    : >"$RPS/syslog.log"
    /usr/bin/python3 "$HERE/syslog_sink.py" "$RPS/syslog.log" >/dev/null 2>&1 </dev/null &
    echo $! >"$RPS/syslog_sink.pid"
    for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -S /dev/log ]] && break; sleep 0.2; done
  fi
  build_once
  local built=$SECONDS
  clone_node a; clone_node b
  start_node a; start_node b
  wait_api a; wait_api b
  say "up in $((SECONDS - t0)) s (build $((built - t0)) s): node a ${ADDR4[a]} in rps-a, node b ${ADDR4[b]} in rps-b, work dir $RPS"
}

down() {
  local ns pid
  for node in a b; do stop_node "$node"; done
  # Whatever the runners started and left (tools, iperf3 servers) lives in the lab's
  # namespaces: end those processes, by PID, before deleting the namespaces.
  for ns in $NAMESPACES; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  done
  if [[ -f $RPS/syslog_sink.pid ]]; then
    pid=$(cat "$RPS/syslog_sink.pid")
    kill "$pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    rm -f "$RPS/syslog_sink.pid"
  fi
  for ns in $NAMESPACES; do ip netns del "$ns" 2>/dev/null || true; done
  say "down: nodes stopped, namespaces deleted"
}

CLASSES=$RPS/classes
PYLIB=$RPS/pylib
case ${1:-} in
  up) up ;;
  build) build_once ;;
  start)
    [[ -n ${NETNS[${2:-}]:-} ]] || die "start: unknown node '${2:-}' (RPS_NODES)"
    clone_node "$2"; start_node "$2"; wait_api "$2" ;;
  stop) [[ -n ${2:-} ]] || die "stop: which node?"; stop_node "$2" ;;
  down) down ;;
  cli) shift; cli "$@" ;;
  env) echo "RPS=$RPS PSCHEDULER_SRC=$PSCHEDULER_SRC CLASSES=$CLASSES PYLIB=$PYLIB" ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
