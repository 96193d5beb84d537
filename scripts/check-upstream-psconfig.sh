#!/usr/bin/env bash
# Validate a mesh template with upstream pSConfig's own validator (`psconfig validate`), asking a
# real pScheduler node that has this suite installed to judge every expanded test and archive.
# A maintainer's check, not part of `make test` (CI has no pSConfig source and no network).
#
#   PSCONFIG_SRC=/path/to/perfsonar/psconfig scripts/check-upstream-psconfig.sh [--deep] [FILE]
#
# Needs: the real-pScheduler lab up (`bash lab/real_pscheduler/nodes.sh up`; it validates on
# node a, 198.18.200.1, inside its namespace), and a Python with pScheduler's library
# dependencies plus tqdm (PSCONFIG_PYTHON, default /usr/bin/python3; e.g. a venv made with
# --system-site-packages and `pip install tqdm`). FILE defaults to the shipped template.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=${PSCONFIG_SRC:?set PSCONFIG_SRC to a checkout of https://github.com/perfsonar/psconfig}
RPS=${RPS:-/srv/jumbo-rps}
PYTHON=${PSCONFIG_PYTHON:-/usr/bin/python3}
TOOL=$SRC/psconfig/perfsonar-psconfig
DEEP=()
if [ "${1:-}" = "--deep" ]; then DEEP=(--deep); shift; fi
FILE=$(realpath "${1:-psconfig/lhcone-jumbo-mesh.json}")
[ -x "$TOOL/bin/commands/validate" ] || [ -f "$TOOL/bin/commands/validate" ] || {
    echo "no psconfig validator under $TOOL" >&2; exit 2; }
ip netns pids rps-a >/dev/null 2>&1 || {
    echo "the real-pScheduler lab is not up: bash lab/real_pscheduler/nodes.sh up" >&2; exit 2; }
cd "$TOOL"
exec ip netns exec rps-a env PYTHONPATH="$TOOL:$RPS/pylib" "$PYTHON" bin/commands/validate \
    "${DEEP[@]}" --pscheduler-server 198.18.200.1 "$FILE"
