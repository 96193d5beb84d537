#!/usr/bin/env bash
# Build the suite's Debian packages (python3-jumbo, pscheduler-test-pmtu,
# pscheduler-test-jumbo-throughput, pscheduler-tool-jumbocheck, pscheduler-archiver-jumbo) the
# packagers' way: `dpkg-buildpackage -us -uc -b` in the tree the `make dist` tarball unpacks to,
# under build/deb, so that neither the checkout nor its parent directory is touched. Needs
# dpkg-buildpackage and debian/control's Build-Depends; JUMBO_MAINTAINER as for `make dist`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

command -v dpkg-buildpackage >/dev/null ||
  { echo "build-deb: dpkg-buildpackage not found (apt-get install dpkg-dev)" >&2; exit 1; }

OUT=$ROOT/build/deb
rm -rf "$OUT"
mkdir -p "$OUT/src"
tarball=$(bash scripts/make-tarball.sh "$OUT/src")
tar -xzf "$tarball" -C "$OUT/src"
SRC=$OUT/src/$(basename "$tarball" .tar.gz)

# Build-Depends first, with dpkg's own check: a missing one is named, not met half-way.
(cd "$SRC" && dpkg-checkbuilddeps) || { echo "build-deb: install the Build-Depends above" >&2; exit 1; }

echo "build-deb: dpkg-buildpackage -us -uc -b in $SRC"
(cd "$SRC" && dpkg-buildpackage -us -uc -b) >"$OUT/build.log" 2>&1 || {
  echo "build-deb: dpkg-buildpackage failed; log:" >&2
  cat "$OUT/build.log" >&2
  exit 1
}
mv "$OUT"/src/*.deb "$OUT"/
mv "$OUT"/src/*.buildinfo "$OUT"/src/*.changes "$OUT"/ 2>/dev/null || true

echo "build-deb: packages in $OUT:"
find "$OUT" -maxdepth 1 -name '*.deb' | sort | sed 's/^/  /'
