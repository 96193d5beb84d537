#!/usr/bin/env bash
# make-tarball.sh OUTDIR: write OUTDIR/jumbo-VERSION.tar.gz (top directory jumbo-VERSION/), the
# source tarball packagers build from: `rpmbuild -ta` on it (its rpm/jumbo.spec), or
# `dpkg-buildpackage` in the directory it unpacks to (its debian/). `make dist` runs it.
#
# VERSION comes from the one place the library defines it, python-jumbo/jumbo/__init__.py.
# The maintainer is one variable, JUMBO_MAINTAINER="Name <address>", which the builder must set
# (the tree holds only the placeholder @JUMBO_MAINTAINER@): it becomes debian/control's
# Maintainer, the debian/changelog trailer, the RPM Packager and %changelog. JUMBO_RELEASE
# (default 1) is the package release / Debian revision.
#
# In a git checkout the files are the tracked and untracked-but-not-ignored ones (so .venv,
# build/, caches never get in); otherwise a plain copy of the same paths.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 1 ]] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$1

version=$(sed -n 's/^__version__ *= *"\([^"]*\)".*/\1/p' python-jumbo/jumbo/__init__.py)
[[ $version =~ ^[0-9]+(\.[0-9]+)*$ ]] ||
  { echo "make-tarball: no usable __version__ in python-jumbo/jumbo/__init__.py: '$version'" >&2; exit 1; }
release=${JUMBO_RELEASE:-1}
[[ $release =~ ^[0-9]+$ ]] || { echo "make-tarball: JUMBO_RELEASE must be a number, not '$release'" >&2; exit 2; }

maintainer=${JUMBO_MAINTAINER:-}
if [[ -z $maintainer ]]; then
  cat >&2 <<'EOF'
make-tarball: JUMBO_MAINTAINER is unset. Set it to the person or list that answers for the
packages you build, e.g.  make dist JUMBO_MAINTAINER='Jane Doe <jane@example.net>'
It becomes debian/control's Maintainer, the debian/changelog entry's signer, the RPM Packager
and the %changelog entry (the tree itself holds only the placeholder @JUMBO_MAINTAINER@).
EOF
  exit 2
fi
# "Name <local@domain>", one line, nothing sed, rpm or deb822 would read as syntax.
maintainer_re='^[A-Za-z0-9][^<>@%|&\\]* <[A-Za-z0-9._+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}>$'
if [[ $maintainer == *$'\n'* ]] || ! [[ $maintainer =~ $maintainer_re ]]; then
  echo "make-tarball: JUMBO_MAINTAINER must read 'Name <local@domain.tld>', not '$maintainer'" >&2
  exit 2
fi

paths=(python-jumbo pscheduler-test-pmtu pscheduler-test-jumbo-throughput pscheduler-tool-jumbocheck
       pscheduler-archiver-jumbo psconfig dashboards docs/man systemd scripts/pkg-install.sh rpm debian
       README.md LICENSE)
present=()
for p in "${paths[@]}"; do [[ -e $p ]] && present+=("$p"); done
top=jumbo-$version
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard -- "${present[@]}" |
    while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$stage/$top"
  mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
else
  tar --exclude='__pycache__' --exclude='*.pyc' --exclude='*.egg-info' -cf - "${present[@]}" |
    tar -xf - -C "$stage/$top"
  mtime=$(date +%s)
fi

# The placeholders, filled in; the Debian version from the same two values as the RPM's.
stamped=("$stage/$top"/rpm/*.spec "$stage/$top"/debian/control "$stage/$top"/debian/changelog
         "$stage/$top"/docs/man/*.1 "$stage/$top"/python-jumbo/jumbo/__init__.py)
for f in "${stamped[@]}"; do
  [[ -f $f ]] || continue
  sed -i -e "s|@JUMBO_VERSION@|$version|g" -e "s|@JUMBO_RELEASE@|$release|g" \
         -e "s|@JUMBO_MAINTAINER@|$maintainer|g" "$f"
done
sed -i "1s/(\([^)]*\))/($version-$release)/" "$stage/$top/debian/changelog"
if left=$(grep -rl '@JUMBO_[A-Z]*@' "$stage/$top/rpm" "$stage/$top/debian" "$stage/$top/docs/man" \
             "$stage/$top/python-jumbo/jumbo/__init__.py"); then
  echo "make-tarball: placeholders left in: $left" >&2
  exit 1
fi

mkdir -p "$out"
tarball=$(cd "$out" && pwd)/$top.tar.gz
# Reproducible: sorted names, owner root, every mtime the last commit's.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" \
    -C "$stage" -cf - "$top" | gzip -n > "$tarball"
echo "$tarball"
