#!/bin/bash
# supervise.sh LOG CMD... : run CMD again whenever it exits, as systemd's Restart=always does for
# pScheduler's daemons (the runner and archiver exit after a warm boot and expect a restart).
# SIGTERM ends the loop and CMD (by its PID).
log=$1; shift
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait; exit 0' TERM INT
while :; do
  "$@" >>"$log" 2>&1 </dev/null &
  pid=$!
  wait "$pid"
  echo "supervise.sh: $1 ended (status $?); again in 2 s" >>"$log"
  sleep 2
done
