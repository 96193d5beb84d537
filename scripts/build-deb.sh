#!/usr/bin/env bash
# Build the suite's Debian packages (python3-jumbo, pscheduler-test-pmtu, pscheduler-test-jumbo-throughput,
# pscheduler-tool-jumbocheck, pscheduler-archiver-jumbo) with dpkg-buildpackage, from the same source tarball as the RPMs,
# unpacked under build/deb so that neither the checkout nor its parent directory is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

command -v dpkg-buildpackage >/dev/null ||
  { echo "build-deb: dpkg-buildpackage not found (apt-get install dpkg-dev debhelper)" >&2; exit 1; }

VERSION=$(sed -n 's/^__version__ *= *"\([^"]*\)".*/\1/p' python-jumbo/jumbo/__init__.py)
REVISION=${JUMBO_RELEASE:-1}
[[ -n $VERSION ]] || { echo "build-deb: no __version__ in python-jumbo/jumbo/__init__.py" >&2; exit 1; }
OUT=$ROOT/build/deb
rm -rf "$OUT"
mkdir -p "$OUT/src"

tarball=$(bash scripts/make-tarball.sh "$OUT/src" "$VERSION")
tar -xzf "$tarball" -C "$OUT/src"
SRC=$OUT/src/jumbo-$VERSION
# The package version follows the library's __version__ (the changelog in git may lag).
sed -i "1s/(\([^)]*\))/($VERSION-$REVISION)/" "$SRC/debian/changelog"
chmod 755 "$SRC/debian/rules"

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
