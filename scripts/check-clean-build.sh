#!/usr/bin/env bash
# The packaging proof in a clean Debian 12 (`make check-clean-build`; as root, a few minutes, needs
# the Debian mirror): a debootstrap'd bookworm (minbase) with nothing installed but
# build-essential and what the packaging declares, where
#   1. `dpkg-buildpackage -us -uc -b` runs in the tree of the `make dist` tarball after
#      `apt-get build-dep` of that tree (debian/control's Build-Depends and nothing else);
#   2. then rpm (the packaging tool) and the spec's BuildRequires are added and `rpmbuild -ta`
#      runs on the tarball itself, with the spec's own macros;
#   3. python3-jumbo is installed from its .deb, and each command's --help and man page run.
# It prints what was installed for each build and the packages made. The chroot lives under
# build/clean-build/ and is removed at the end (KEEP_CHROOT=1 keeps it); mounts are made in a
# private mount namespace, so none outlives the script.
#   DEBIAN_MIRROR  default: the first deb.debian.org-style URI of this host's apt sources,
#                  else http://deb.debian.org/debian
#   JUMBO_MAINTAINER as for `make dist`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

[[ $(id -u) -eq 0 ]] || { echo "check-clean-build: needs root (debootstrap, chroot)" >&2; exit 1; }
for tool in debootstrap unshare chroot; do
  command -v "$tool" >/dev/null ||
    { echo "check-clean-build: $tool not found (apt-get install debootstrap util-linux coreutils)" >&2; exit 1; }
done

mirror=${DEBIAN_MIRROR:-}
if [[ -z $mirror ]]; then
  mirror=$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ \
             2>/dev/null | awk '{print $2}' | head -1 || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi

WORK=$ROOT/build/clean-build
CHROOT=$WORK/chroot
cleanup() {
  # debootstrap mounts proc/sys in the target while it runs: never leave one behind
  awk -v d="$CHROOT" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount -l "$m" || true
  done
  [[ ${KEEP_CHROOT:-0} == 1 ]] || rm -rf "$CHROOT"
}
trap cleanup EXIT
cleanup
rm -rf "$WORK"
mkdir -p "$WORK"

tarball=$(bash scripts/make-tarball.sh "$WORK")
name=$(basename "$tarball" .tar.gz)
echo "check-clean-build: debootstrap --variant=minbase bookworm from $mirror"
started=$(date +%s)
debootstrap --variant=minbase bookworm "$CHROOT" "$mirror" >"$WORK/debootstrap.log" 2>&1 || {
  echo "check-clean-build: debootstrap failed; log:" >&2; tail -30 "$WORK/debootstrap.log" >&2; exit 1; }
echo "check-clean-build: chroot ready in $(( $(date +%s) - started )) s"
cp /etc/resolv.conf "$CHROOT/etc/resolv.conf"
mkdir -p "$CHROOT/build"
cp "$tarball" "$CHROOT/build/"

# Runs inside the chroot. Every step's outcome is printed; the first failure stops it.
cat > "$CHROOT/build/run.sh" <<EOF
#!/bin/sh
set -eu
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8
cd /build
apt-get update -qq
installed() { dpkg-query -W -f '\${Package}\n' | sort; }
installed > pkgs.0
apt-get install -y -qq --no-install-recommends build-essential >/dev/null
installed > pkgs.1
tar -xzf $name.tar.gz
cd $name
echo "Build-Depends: \$(sed -n 's/^Build-Depends: *//p' debian/control)"
apt-get build-dep -y -qq --no-install-recommends ./ >/dev/null
installed > ../pkgs.2
echo "== installed for the .debs beyond minbase + build-essential: \$(comm -13 ../pkgs.1 ../pkgs.2 | tr '\n' ' ')"
dpkg-buildpackage -us -uc -b > ../deb.log 2>&1 || { tail -40 ../deb.log; exit 1; }
echo "== dpkg-buildpackage -us -uc -b: OK"
ls ../*.deb
# RPM: the packaging tool, then the spec's BuildRequires (Debian names the same packages).
brs=\$(sed -n 's/^BuildRequires: *//p' rpm/jumbo.spec | tr ',' ' ')
echo "BuildRequires: \$brs"
apt-get install -y -qq --no-install-recommends rpm \$brs >/dev/null
installed > ../pkgs.3
echo "== installed for the RPMs: \$(comm -13 ../pkgs.2 ../pkgs.3 | tr '\n' ' ')"
cd /build
rpmbuild -ta --nodeps --define "_topdir /build/rpm" $name.tar.gz > rpm.log 2>&1 || { tail -40 rpm.log; exit 1; }
echo "== rpmbuild -ta: OK"
find rpm/RPMS rpm/SRPMS -name '*.rpm' | sort
# The library's package installs with what its Depends name (Debian has them all; the plugins'
# packages need perfSONAR's pscheduler-server, which no Debian mirror has), and its commands
# and man pages work there.
apt-get install -y -qq --no-install-recommends ./python3-jumbo_*.deb man-db >/dev/null
for cmd in jumbocheck jumbo-report jumbo-alarms jumbo-replay; do
  \$cmd --help > help.txt
  echo "\$cmd --help: \$(head -1 help.txt | cut -c1-60)"
  [ -n "\$(MANWIDTH=80 man --warnings \$cmd 2>&1 >/dev/null)" ] && { echo "man \$cmd: warnings"; exit 1; }
  echo "\$(man -w \$cmd): renders without warnings"
done
echo "== python3-jumbo installed: OK"
EOF
chmod 755 "$CHROOT/build/run.sh"

echo "check-clean-build: building in the chroot"
# proc for dpkg and rpm, a private devpts for apt's log: both vanish with the namespace.
mkdir -p "$CHROOT/dev/pts"
unshare --mount --propagation private -- sh -c \
  "mount -t proc proc '$CHROOT/proc' &&
   mount -t devpts -o newinstance,ptmxmode=0666 devpts '$CHROOT/dev/pts' &&
   chroot '$CHROOT' /build/run.sh" 2>&1 | tee "$WORK/build.log"
status=${PIPESTATUS[0]}
mkdir -p "$WORK/out"
cp "$CHROOT"/build/*.deb "$CHROOT"/build/rpm/RPMS/noarch/*.rpm "$CHROOT"/build/rpm/SRPMS/*.rpm "$WORK/out/" \
  2>/dev/null || true
if ((status)); then
  echo "check-clean-build: FAILED (exit $status); logs in $WORK" >&2
  exit 1
fi
echo "check-clean-build: OK in $(( $(date +%s) - started )) s; packages in $WORK/out"
