#!/usr/bin/env bash
# `make deb`: build layover_VERSION_ARCH.deb with dpkg-deb from the same
# staging tree as `make install` (helper/dist/install.sh with DESTDIR, PREFIX=/usr),
# the AppArmor profile included as a conffile. Prints the .deb's path.
#   BUILD (build), VERSION (required), PYTHON (/usr/bin/python3), OUT (BUILD)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
VERSION=${VERSION:?set VERSION}
OUT=${OUT:-$BUILD}
command -v dpkg-deb >/dev/null || { echo "layover deb: dpkg-deb is missing; fix: sudo apt-get install dpkg" >&2; exit 1; }
ARCH=$(dpkg --print-architecture)
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/layover-deb.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
PKG=$STAGE/pkg
mkdir -p "$PKG"

# The same files as `make install`: the profile always (AppArmor 4 reads it;
# on an older AppArmor postinst disables it, see below), Debian's dirs.
BUILD=$BUILD PREFIX=/usr DESTDIR=$PKG PYTHON=/usr/bin/python3 PYTHONDIR=/usr/lib/python3/dist-packages \
    APPARMOR=yes APPARMORDIR=/etc/apparmor.d "$ROOT/helper/dist/install.sh" >/dev/null
# dpkg keeps its own list of files; the manifest is for `make uninstall`.
rm "$PKG/usr/lib/layover/install-manifest"
gzip -9n "$PKG/usr/share/man/man1/layover.1"
# As Debian packages do: no debug info in the package (a 70 MB difference).
strip --strip-unneeded "$PKG/usr/bin/layover" "$PKG/usr/lib/layover/layover-patch"
PROFILE=/etc/apparmor.d/usr.bin.layover

mkdir -p "$PKG/DEBIAN"
size=$(du -sk "$PKG" | cut -f1)
cat >"$PKG/DEBIAN/control" <<EOF
Package: layover
Version: $VERSION
Architecture: $ARCH
Maintainer: layover developers <layover@localhost>
Installed-Size: $size
Depends: python3 (>= 3.8), libarchive13, libzstd1
Section: utils
Priority: optional
Description: run a program over an overlay of a real tree, then review its changes
 layover runs a command (or Python code) as an ordinary user over a
 copy-on-write overlay of a directory tree, in its own user and mount
 namespaces, and turns what it changed into a patch to review, apply,
 save or discard.
EOF
echo "$PROFILE" >"$PKG/DEBIAN/conffiles"
# postinst: load the profile where AppArmor runs; where this AppArmor has no
# abi/4.0 (it predates the userns rule and would fail to parse the profile,
# breaking its reload), disable it the standard way (disable/ symlink).
cat >"$PKG/DEBIAN/postinst" <<EOF
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
    if [ ! -e /etc/apparmor.d/abi/4.0 ]; then
        [ ! -d /etc/apparmor.d/disable ] || ln -sf $PROFILE /etc/apparmor.d/disable/usr.bin.layover
    elif [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null; then
        apparmor_parser -r $PROFILE || echo "layover: could not load $PROFILE; run: sudo apparmor_parser -r $PROFILE" >&2
    fi
fi
exit 0
EOF
cat >"$PKG/DEBIAN/prerm" <<EOF
#!/bin/sh
set -e
if [ "\$1" = remove ] && [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null &&
   [ -e /etc/apparmor.d/abi/4.0 ]; then
    apparmor_parser -R $PROFILE 2>/dev/null || true
fi
exit 0
EOF
cat >"$PKG/DEBIAN/postrm" <<EOF
#!/bin/sh
set -e
if [ "\$1" = purge ] || [ "\$1" = remove ]; then
    rm -f /etc/apparmor.d/disable/usr.bin.layover
fi
exit 0
EOF
chmod 0755 "$PKG/DEBIAN/postinst" "$PKG/DEBIAN/prerm" "$PKG/DEBIAN/postrm"
deb=$OUT/layover_${VERSION}_$ARCH.deb
dpkg-deb --root-owner-group -Zgzip --build "$PKG" "$deb" >/dev/null
echo "$deb"
