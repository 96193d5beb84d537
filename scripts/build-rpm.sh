#!/usr/bin/env bash
# Build the suite's noarch RPMs with the real rpmbuild:
#   python3-jumbo, pscheduler-test-pmtu, pscheduler-test-jumbo-throughput, pscheduler-tool-jumbocheck, pscheduler-archiver-jumbo
# from a source tarball of this tree, in a private _topdir under build/rpm (nothing in ~/rpmbuild).
# Usage: scripts/build-rpm.sh [SPEC...]   (default: every rpm/*.spec)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

command -v rpmbuild >/dev/null || { echo "build-rpm: rpmbuild not found (Debian: apt-get install rpm)" >&2; exit 1; }

VERSION=$(sed -n 's/^__version__ *= *"\([^"]*\)".*/\1/p' python-jumbo/jumbo/__init__.py)
RELEASE=${JUMBO_RELEASE:-1}
[[ -n $VERSION ]] || { echo "build-rpm: no __version__ in python-jumbo/jumbo/__init__.py" >&2; exit 1; }
TOP=$ROOT/build/rpm
rm -rf "$TOP"
mkdir -p "$TOP"/{BUILD,BUILDROOT,RPMS,SOURCES,SPECS,SRPMS}

# Source tarball: what the packages are made of (tracked and new files, .gitignore honoured,
# so a build right after editing matches the tree you see; in CI it is the clean checkout).
bash scripts/make-tarball.sh "$TOP/SOURCES" "$VERSION" >/dev/null
# The version is written into the copy of common.inc that goes into the source RPMs, so that
# `rpmbuild --rebuild` of an SRPM gives the same version without any --define.
sed -e "s/^%{!?jumbo_version: .*/%{!?jumbo_version: %global jumbo_version $VERSION}/" \
    -e "s/^%{!?jumbo_release: .*/%{!?jumbo_release: %global jumbo_release $RELEASE}/" \
    rpm/common.inc > "$TOP/SOURCES/common.inc"

specs=("$@")
((${#specs[@]})) || specs=(rpm/*.spec)

# On Debian the rpm database is empty, so BuildRequires (python3) cannot be checked by rpm:
# dpkg already has them (scripts/setup.sh). On an EL host they are checked normally.
nodeps=()
rpm -q python3 >/dev/null 2>&1 || nodeps=(--nodeps)

for spec in "${specs[@]}"; do
  cp "$spec" "$TOP/SPECS/"
  echo "build-rpm: $(basename "$spec")"
  rpmbuild -ba --quiet "${nodeps[@]}" \
    --define "_topdir $TOP" \
    --define "jumbo_version $VERSION" \
    --define "jumbo_release $RELEASE" \
    "$TOP/SPECS/$(basename "$spec")" >"$TOP/$(basename "$spec" .spec).log" 2>&1 || {
      echo "build-rpm: rpmbuild failed for $spec; log:" >&2
      cat "$TOP/$(basename "$spec" .spec).log" >&2
      exit 1
    }
done

echo "build-rpm: RPMs in $TOP/RPMS/noarch, source RPMs in $TOP/SRPMS:"
find "$TOP/RPMS" "$TOP/SRPMS" -name '*.rpm' | sort | sed 's/^/  /'
