#!/usr/bin/env bash
# Install everything the suite, its tests and the demo need on a fresh Debian 12 (as root).
# Idempotent: a second run only checks. Used by `make setup` (and so by `make test`/`make demo`).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

APT_PACKAGES=(
  iperf3 iproute2 nftables iputils-ping iputils-tracepath traceroute ethtool procps util-linux
  python3 python3-venv python3-pip sqlite3
  rpm dpkg-dev debhelper fakeroot
  openjdk-17-jre-headless maven unzip curl
  chromium
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

# A real OpenSearch 2.18.0 (Maven Central integ-test-zip) for the archive store tests.
bash scripts/opensearch.sh install >/dev/null

echo "setup: ready (python: $ROOT/.venv/bin/python)"
