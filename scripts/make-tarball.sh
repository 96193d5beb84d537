#!/usr/bin/env bash
# make-tarball.sh OUTDIR VERSION: write OUTDIR/jumbo-VERSION.tar.gz (top directory jumbo-VERSION/)
# with the files the packages are built from. In a git checkout: tracked and untracked-but-not-
# ignored files (so .venv, build/, caches never get in); otherwise a plain copy of those paths.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1 version=$2
paths=(python-jumbo pscheduler-test-pmtu pscheduler-test-jumbo-throughput pscheduler-tool-jumbocheck pscheduler-archiver-jumbo
       psconfig dashboards scripts/pkg-install.sh rpm debian README.md)
present=()
for p in "${paths[@]}"; do [[ -e $p ]] && present+=("$p"); done
mkdir -p "$out"
tarball=$out/jumbo-$version.tar.gz
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard -- "${present[@]}" |
    while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
    tar --null -T - --transform "s,^,jumbo-$version/," -czf "$tarball"
else
  tar --exclude='__pycache__' --exclude='*.pyc' --exclude='*.egg-info' \
    --transform "s,^,jumbo-$version/," -czf "$tarball" "${present[@]}"
fi
echo "$tarball"
