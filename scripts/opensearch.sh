#!/usr/bin/env bash
# A real OpenSearch 2.18.0 (the version perfSONAR 5.2 ships) for tests, the demo and benchmarks.
#
#   scripts/opensearch.sh install   fetch the integ-test-zip from Maven Central, unzip under var/opensearch/
#   scripts/opensearch.sh start     start a single node on $OPENSEARCH_HOST:$OPENSEARCH_PORT (default
#                                   127.0.0.1:9250), wait
#   scripts/opensearch.sh stop      stop it by the PID in its pid file
#   scripts/opensearch.sh status    exit 0 if it answers, 1 otherwise
#   scripts/opensearch.sh url       print its base URL
#
# The distribution has no security and no ISM plugins: plain HTTP, on loopback unless OPENSEARCH_HOST
# names a lab address (the real mesh runs it in a namespace of its own, lab/real_pscheduler/mesh.py). It refuses to run
# as root, so it runs as the dedicated system user $OPENSEARCH_USER (created here when run as root).
# Data, logs and the pid file of each port live in var/opensearch/node-$PORT/ (node-$OPENSEARCH_INSTANCE/).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

VERSION=2.18.0
ARTIFACT="org.opensearch.distribution.integ-test-zip:opensearch:$VERSION:zip"
PORT=${OPENSEARCH_PORT:-9250}
HOST=${OPENSEARCH_HOST:-127.0.0.1}
OS_USER=${OPENSEARCH_USER:-jumboos}
JAVA=${OPENSEARCH_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
BASE=$ROOT/var/opensearch
HOME_DIR=$BASE/opensearch-$VERSION
# OPENSEARCH_INSTANCE: a data directory of its own for an instance in another namespace that
# may use the same port number at the same time (the real mesh's archive)
NODE=$BASE/node-${OPENSEARCH_INSTANCE:-$PORT}
PIDFILE=$NODE/opensearch.pid
OUTFILE=$NODE/console.log
WAIT=${OPENSEARCH_WAIT:-90}
URL="http://$HOST:$PORT"

die() { echo "opensearch.sh: $*" >&2; exit 1; }

answers() { curl -fsS -m 2 "$URL/" >/dev/null 2>&1; }

running_pid() {
  [[ -f $PIDFILE ]] || return 1
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null) || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

as_user() {
  if [[ $(id -u) -eq 0 ]]; then
    runuser -u "$OS_USER" -- "$@"
  else
    "$@"
  fi
}

install() {
  [[ -x $JAVA/bin/java ]] || die "Java 17 not found at $JAVA"
  if [[ ! -x $HOME_DIR/bin/opensearch ]]; then
    local repo zip
    repo=${MAVEN_REPO:-$HOME/.m2/repository}
    zip=$repo/org/opensearch/distribution/integ-test-zip/opensearch/$VERSION/opensearch-$VERSION.zip
    if [[ ! -f $zip ]]; then
      echo "opensearch.sh: fetching $ARTIFACT from Maven Central"
      mvn -q dependency:get -Dartifact="$ARTIFACT" -Dtransitive=false >/dev/null \
        || die "mvn dependency:get failed"
    fi
    [[ -f $zip ]] || die "$zip missing after download"
    mkdir -p "$BASE"
    rm -rf "$BASE/.unzip"
    unzip -q "$zip" -d "$BASE/.unzip"
    mv "$BASE/.unzip/opensearch-$VERSION" "$HOME_DIR"
    rm -rf "$BASE/.unzip"
  fi
  if [[ $(id -u) -eq 0 ]]; then
    id "$OS_USER" >/dev/null 2>&1 \
      || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$OS_USER"
    chown -R "$OS_USER:" "$BASE"
  fi
  echo "opensearch.sh: installed in $HOME_DIR"
}

start() {
  [[ -x $HOME_DIR/bin/opensearch ]] || install
  if running_pid >/dev/null && answers; then
    echo "opensearch.sh: already running on $URL"
    return 0
  fi
  mkdir -p "$NODE/data" "$NODE/logs"
  [[ $(id -u) -eq 0 ]] && chown -R "$OS_USER:" "$NODE" "$HOME_DIR"
  rm -f "$PIDFILE"
  # -d daemonises; its output goes to a file so that a caller capturing output is not held open.
  as_user env JAVA_HOME="$JAVA" OPENSEARCH_JAVA_HOME="$JAVA" \
    OPENSEARCH_JAVA_OPTS="-Xms512m -Xmx512m" \
    "$HOME_DIR/bin/opensearch" -d -p "$PIDFILE" \
      -Ediscovery.type=single-node -Enetwork.host="$HOST" -Ehttp.port="$PORT" \
      -Etransport.port="$((PORT + 50))" -Ecluster.name="jumbo-$PORT" -Enode.name="jumbo-$PORT" \
      -Epath.data="$NODE/data" -Epath.logs="$NODE/logs" \
      -Ecluster.routing.allocation.disk.threshold_enabled=false \
      >"$OUTFILE" 2>&1 </dev/null || { tail -20 "$OUTFILE" >&2; die "start failed"; }
  local deadline=$((SECONDS + WAIT))
  while ((SECONDS < deadline)); do
    if answers; then
      # Existing indices (a restart keeps its data) must be open for writes before we say so.
      curl -fsS -m 35 "$URL/_cluster/health?wait_for_status=yellow&timeout=30s" >/dev/null 2>&1 || true
      echo "opensearch.sh: running on $URL (pid $(cat "$PIDFILE"))"
      return 0
    fi
    sleep 1
  done
  tail -20 "$OUTFILE" >&2 || true
  # a JVM that did not answer in time is still ours: never leave it behind
  stop >&2
  die "no answer on $URL after ${WAIT}s"
}

stop() {
  local pid
  if pid=$(running_pid); then
    kill "$pid"
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "opensearch.sh: stopped pid $pid"
  else
    echo "opensearch.sh: not running on port $PORT"
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) if answers; then echo "running on $URL"; else echo "not running on $URL"; exit 1; fi ;;
  url) echo "$URL" ;;
  *) echo "usage: $0 {install|start|stop|status|url}" >&2; exit 2 ;;
esac
