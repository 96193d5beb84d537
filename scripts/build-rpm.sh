#!/usr/bin/env bash
# Build the suite's noarch RPMs the packagers' way: `rpmbuild -ta` on the source tarball of
# `make dist` (its one spec, rpm/jumbo.spec, makes python3-jumbo, pscheduler-test-pmtu,
# pscheduler-test-jumbo-throughput, pscheduler-tool-jumbocheck, pscheduler-archiver-jumbo), in
# a private _topdir under build/rpm (nothing in ~/rpmbuild). Needs rpmbuild and the spec's
# BuildRequires (python3); JUMBO_MAINTAINER as for `make dist`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

command -v rpmbuild >/dev/null ||
  { echo "build-rpm: rpmbuild not found (EL: dnf install rpm-build; Debian: apt-get install rpm)" >&2; exit 1; }

TOP=$ROOT/build/rpm
rm -rf "$TOP"
mkdir -p "$TOP"
tarball=$(bash scripts/make-tarball.sh "$TOP/dist")

# On Debian rpm's database is empty, so it cannot see the BuildRequires dpkg installed
# (python3): skip its check there. On an EL host BuildRequires are checked as usual.
nodeps=()
rpm -q python3 >/dev/null 2>&1 || nodeps=(--nodeps)

echo "build-rpm: rpmbuild -ta $(basename "$tarball")"
rpmbuild -ta "${nodeps[@]}" --define "_topdir $TOP" "$tarball" >"$TOP/build.log" 2>&1 || {
  echo "build-rpm: rpmbuild failed; log:" >&2
  cat "$TOP/build.log" >&2
  exit 1
}

echo "build-rpm: RPMs in $TOP/RPMS/noarch, source RPM in $TOP/SRPMS:"
find "$TOP/RPMS" "$TOP/SRPMS" -name '*.rpm' | sort | sed 's/^/  /'
