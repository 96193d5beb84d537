#!/usr/bin/env bash
# Install everything the suite, its tests and the demo need on a fresh Debian 12 (as root).
# Idempotent: a second run only checks. Used by `make setup` (and so by `make test`/`make demo`).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

APT_PACKAGES=(
  iperf3 iproute2 nftables iputils-ping iputils-tracepath traceroute ethtool procps util-linux
  python3 python3-venv python3-pip sqlite3
  rpm dpkg-dev debhelper fakeroot rpmlint lintian man-db
  openjdk-17-jre-headless maven unzip curl
  chromium
  # a real Prometheus for the telemetry tests and the demo (tests/prometheus_fixture.py)
  prometheus
  # the real pScheduler of the integration suite (tests/integration/, lab/real_pscheduler/)
  postgresql-15 postgresql-plpython3-15 gunicorn jq openssl make bc
  python3-psycopg2 python3-flask python3-dateutil python3-isodate python3-jsonschema
  python3-netaddr python3-netifaces python3-ntplib python3-tz python3-tzlocal python3-psutil
  python3-requests python3-pycurl python3-dnspython python3-jinja2 python3-radix python3-babel
  python3-packaging python3-dev build-essential libjq-dev libonig-dev
  # perfSONAR's pSConfig agents: the pScheduler agent of the real mesh (lab/real_mesh.py) and
  # the Grafana agent (tests/test_psconfig_grafana_agent.py), whose bin imports pyinotify
  python3-tqdm python3-pyinotify
)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The suite's Python environment, built on the system interpreter so that the unprivileged
# users the tests run tools as can read it (pyenv's lives under /root).
if [[ ! -x .venv/bin/python ]]; then
  /usr/bin/python3 -m venv .venv
fi
stamp=.venv/.jumbo-setup
if [[ ! -f $stamp || requirements-dev.txt -nt $stamp || python-jumbo/setup.py -nt $stamp ]]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -r requirements-dev.txt
  .venv/bin/pip install -q -e python-jumbo
  touch "$stamp"
fi

# The unprivileged user tools run as in tests, as pScheduler runs them as `pscheduler`.
id jumbotest >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin jumbotest

# The real pScheduler nodes (lab/real_pscheduler/nodes.sh) run as `pscheduler` on the system
# Python, which also needs modules Debian does not package (built here, from PyPI): pyjq and
# crontab for pScheduler, file-read-backwards for the pSConfig agent of the real mesh.
getent passwd pscheduler >/dev/null || \
  useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin --user-group pscheduler
pydeps=var/real-pscheduler/pydeps
if [[ ! -d $pydeps/crontab ]] || ! ls "$pydeps" | grep -qi '^_*pyjq'; then
  echo "setup: installing pyjq and crontab for /usr/bin/python3 into $pydeps"
  rm -rf "$pydeps"; mkdir -p "$pydeps"
  /usr/bin/python3 -m pip install -q --no-cache-dir --disable-pip-version-check \
    --break-system-packages --target "$pydeps" pyjq crontab
fi
if [[ ! -d $pydeps/file_read_backwards ]]; then
  echo "setup: installing file-read-backwards for /usr/bin/python3 into $pydeps"
  /usr/bin/python3 -m pip install -q --no-cache-dir --disable-pip-version-check \
    --break-system-packages --target "$pydeps" file-read-backwards
fi

# A real OpenSearch 2.18.0 (Maven Central integ-test-zip) for the archive store tests.
bash scripts/opensearch.sh install >/dev/null

echo "setup: ready (python: $ROOT/.venv/bin/python)"
