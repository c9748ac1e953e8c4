#!/usr/bin/env bash
# `make install` (docs/design.md, "Install layout"). Settings from the
# environment, as the Makefile passes them:
#   BUILD (build), PREFIX (/usr/local), DESTDIR (), PYTHON (/usr/bin/python3),
#   PYTHONDIR (the Python package's dir; default: PYTHON's site dir for PREFIX),
#   APPARMORDIR (/etc/apparmor.d), APPARMOR (auto|yes|no; auto: where
#   APPARMORDIR exists and its AppArmor knows `userns`, abi/4.0).
# Every file and directory made is listed in PREFIX/lib/layover/install-manifest
# (final paths, without DESTDIR), which helper/dist/uninstall.sh reverses exactly.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PREFIX=${PREFIX:-/usr/local}
PREFIX=${PREFIX%/}
D=${DESTDIR:-}
PYTHON=${PYTHON:-/usr/bin/python3}
APPARMORDIR=${APPARMORDIR:-/etc/apparmor.d}
APPARMOR=${APPARMOR:-auto}
BIN=$PREFIX/bin/layover
LIB=$PREFIX/lib/layover
MANIFEST=$LIB/install-manifest

for f in "$BUILD/layover" "$BUILD/layover-patch" "$BUILD/layover.1"; do
    [ -f "$f" ] || { echo "layover install: $f is missing; run 'make all man' first" >&2; exit 1; }
done
[ -x "$PYTHON" ] || { echo "layover install: no Python at $PYTHON; set PYTHON=/path/to/python3" >&2; exit 1; }
# Not writable (a user's `make install` into /usr/local): say so before writing anything.
w=$D$PREFIX/bin
while [ ! -e "$w" ] && [ "$w" != / ] && [ -n "$w" ]; do w=$(dirname "$w"); done
if [ -e "$w" ] && [ ! -w "$w" ]; then
    echo "layover install: $w is not writable by you; run 'sudo make install', or 'make install PREFIX=${HOME:-~}/.local' to install for yourself alone" >&2
    exit 1
fi
if [ -e "$D$MANIFEST" ]; then
    # A reinstall: remove the previous one first, so the manifest stays exact.
    DESTDIR=$D PREFIX=$PREFIX "$ROOT/helper/dist/uninstall.sh" >/dev/null
fi

# DESTDIR itself is the stager's, not part of the install.
[ -z "$D" ] || mkdir -p "$D"
entries=()
# mkdir -p that records each directory it creates.
mkdirs() {
    local dir=$1 missing=()
    while [ ! -d "$D$dir" ] && [ "$dir" != / ]; do
        missing=("$dir" "${missing[@]}")
        dir=$(dirname "$dir")
    done
    for dir in "${missing[@]}"; do
        install -d -m 0755 "$D$dir"
        entries+=("d $dir")
    done
}
put() {  # put MODE SRC DEST
    mkdirs "$(dirname "$3")"
    install -m "$1" "$2" "$D$3"
    entries+=("f $3")
}

put 0755 "$BUILD/layover" "$BIN"
put 0755 "$BUILD/layover-patch" "$LIB/layover-patch"
put 0644 "$BUILD/layover.1" "$PREFIX/share/man/man1/layover.1"
put 0644 "$ROOT/helper/dist/layover.bash" "$PREFIX/share/bash-completion/completions/layover"
# Debian's zsh reads vendor-completions under /usr, site-functions elsewhere.
zshdir=$PREFIX/share/zsh/site-functions
[ "$PREFIX" = /usr ] && zshdir=/usr/share/zsh/vendor-completions
put 0644 "$ROOT/helper/dist/_layover" "$zshdir/_layover"

# The Python package, recording the binary's final path (layover/_install.py).
SITE=${PYTHONDIR:-$(PYTHON=$PYTHON "$ROOT/tests/install_python.sh" --site "$PREFIX")}
SITE=${SITE%/}
mkdirs "$SITE"
[ -e "$D$SITE/layover" ] && { echo "layover install: $D$SITE/layover exists and is not ours (no manifest); remove it first" >&2; exit 1; }
PYTHON=$PYTHON PYTHONDIR=$SITE LAYOVER_INSTALLED_BIN=$BIN DESTDIR=$D "$ROOT/tests/install_python.sh" "$D$PREFIX"
entries+=("d $SITE/layover")
while IFS= read -r p; do
    p=${p#"$D"}
    case $p in */__pycache__) entries+=("d $p") ;; *) [ "$p" != "$SITE/layover" ] && entries+=("f $p") ;; esac
done < <(find "$D$SITE/layover" -mindepth 1 | sort)
# install_python.sh links PREFIX/lib/layover/python to SITE: where `layover mcp` looks.
[ -L "$D$LIB/python" ] && entries+=("f $LIB/python")

# What `layover mcp` and other Python-side verbs need to start the package
# with no environment: the interpreter and the dir holding the package.
mkdirs "$LIB"
printf 'version=%s\npython=%s\npythonpath=%s\n' \
    "$("$BUILD/layover" --version | cut -d' ' -f2)" "$PYTHON" "$SITE" >"$D$LIB/install.conf"
chmod 0644 "$D$LIB/install.conf"
entries+=("f $LIB/install.conf")

# AppArmor (Ubuntu 23.10+ restricts unprivileged user namespaces to programs
# whose profile grants `userns`). An AppArmor without abi/4.0 does not know
# the rule (and cannot parse it), so auto installs the profile only with it.
aa_note=""
if [ "$APPARMOR" = auto ] && [ -e "$D$APPARMORDIR/abi/4.0" ] && [ ! -w "$D$APPARMORDIR" ]; then
    # A user's install (PREFIX=~/.local): the profile needs root; the rest is installed.
    aa_note="no AppArmor profile installed: $D$APPARMORDIR is not writable by you; if 'layover doctor' then fails its AppArmor check (Ubuntu 23.10+), install as root: sudo make install"
elif [ "$APPARMOR" = yes ] || { [ "$APPARMOR" = auto ] && [ -d "$D$APPARMORDIR" ] && [ -e "$D$APPARMORDIR/abi/4.0" ]; }; then
    name=$(echo "${BIN#/}" | tr / .)
    profile=$APPARMORDIR/$name
    mkdirs "$APPARMORDIR"
    sed -e "s|@NAME@|$name|g" -e "s|@BIN@|$BIN|g" -e "s|@FILE@|$profile|g" "$ROOT/helper/dist/apparmor.profile" >"$D$profile"
    chmod 0644 "$D$profile"
    entries+=("a $profile")
    if [ -z "$D" ] && [ -d /sys/kernel/security/apparmor ] && [ "$(id -u)" -eq 0 ] && command -v apparmor_parser >/dev/null; then
        apparmor_parser -r "$profile" && aa_note="loaded the AppArmor profile $profile" ||
            aa_note="could not load $profile; run: sudo apparmor_parser -r $profile"
    elif [ -z "$D" ]; then
        aa_note="to let layover create user namespaces under AppArmor, run: sudo apparmor_parser -r $profile"
    fi
elif [ "$APPARMOR" = auto ] && [ -d "$D$APPARMORDIR" ]; then
    aa_note="no AppArmor profile installed: this AppArmor has no abi/4.0, so it does not restrict user namespaces"
fi

entries+=("f $MANIFEST")
printf '%s\n' "${entries[@]}" >"$D$MANIFEST"
chmod 0644 "$D$MANIFEST"
echo "installed layover in $D$PREFIX (manifest: $D$MANIFEST)"
[ -n "$aa_note" ] && echo "$aa_note"
exit 0
