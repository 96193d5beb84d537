#!/usr/bin/env bash
# The packagers' checks, in this machine (the cheap part of the packaging proof; `make test`
# runs it through tests/test_packaging.py, `make check-packaging` alone):
#   make dist -> rpmbuild -ta on the tarball -> rpmlint (no errors)
#             -> dpkg-buildpackage -us -uc -b in the unpacked tree -> lintian (no errors)
# The same in a clean Debian 12 with nothing but the declared build dependencies is
# scripts/check-clean-build.sh (`make check-clean-build`).
# JUMBO_MAINTAINER as for `make dist`. Exit status 0 only when every step passed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# The packaging tools, each with the Debian package that has it (EL: rpm-build, rpmlint).
missing=()
for pair in rpmbuild:rpm rpmlint:rpmlint dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian \
            python3:python3; do
  command -v "${pair%%:*}" >/dev/null || missing+=("${pair%%:*} (${pair#*:})")
done
if ((${#missing[@]})); then
  echo "check-packaging: missing packaging tools: ${missing[*]}" >&2
  echo "check-packaging: Debian: apt-get install --no-install-recommends rpm rpmlint dpkg-dev debhelper lintian python3" >&2
  exit 1
fi

bash scripts/build-rpm.sh
RPMS=("$ROOT"/build/rpm/SRPMS/*.src.rpm "$ROOT"/build/rpm/RPMS/noarch/*.rpm)
# The spec as packagers get it: the one inside the tarball.
tar -xzOf "$ROOT"/build/rpm/dist/jumbo-*.tar.gz --wildcards '*/rpm/jumbo.spec' > "$ROOT/build/rpm/jumbo.spec"
echo "check-packaging: rpmlint -r rpm/jumbo.rpmlintrc (${#RPMS[@]} packages and the spec)"
status=0
rpmlint -r rpm/jumbo.rpmlintrc "${RPMS[@]}" "$ROOT/build/rpm/jumbo.spec" > "$ROOT/build/rpm/rpmlint.log" 2>&1 || status=$?
sed 's/^/  /' "$ROOT/build/rpm/rpmlint.log" | grep -E ' E: |checked;' || true
if ((status)) || grep -q ' E: ' "$ROOT/build/rpm/rpmlint.log"; then
  echo "check-packaging: rpmlint reports errors (exit $status): build/rpm/rpmlint.log" >&2
  exit 1
fi

bash scripts/build-deb.sh
echo "check-packaging: lintian --fail-on error (the .debs)"
status=0
lintian --fail-on error --tag-display-limit 0 "$ROOT"/build/deb/*.deb > "$ROOT/build/deb/lintian.log" 2>&1 || status=$?
grep -E '^E: ' "$ROOT/build/deb/lintian.log" | sed 's/^/  /' || true
echo "  $(grep -c '^E: ' "$ROOT/build/deb/lintian.log" || true) errors, $(grep -c '^W: ' "$ROOT/build/deb/lintian.log" || true) warnings"
if ((status)) || grep -q '^E: ' "$ROOT/build/deb/lintian.log"; then
  echo "check-packaging: lintian reports errors (exit $status): build/deb/lintian.log" >&2
  exit 1
fi
echo "check-packaging: OK"
