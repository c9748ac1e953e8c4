#!/usr/bin/env bash
# `make uninstall`: remove exactly what helper/dist/install.sh recorded in
# PREFIX/lib/layover/install-manifest (PREFIX and DESTDIR as at install).
# Lines: "f PATH" a file, "a PATH" the AppArmor profile (unloaded first when
# possible), "d PATH" a directory the install made (removed when empty; a
# __pycache__ also holding bytecode Python wrote later is removed whole).
set -eu
PREFIX=${PREFIX:-/usr/local}
PREFIX=${PREFIX%/}
D=${DESTDIR:-}
MANIFEST=$PREFIX/lib/layover/install-manifest
[ -f "$D$MANIFEST" ] || { echo "layover uninstall: no $D$MANIFEST; was layover installed with PREFIX=$PREFIX?" >&2; exit 1; }

mapfile -t lines <"$D$MANIFEST"
for line in "${lines[@]}"; do
    p=${line#? }
    case $p in /*) ;; *) echo "layover uninstall: bad manifest line '$line'" >&2; exit 1 ;; esac
    case /$p/ in */../*) echo "layover uninstall: bad manifest line '$line'" >&2; exit 1 ;; esac
done
status=0
for line in "${lines[@]}"; do
    kind=${line%% *} p=${line#? }
    case $kind in
        a)
            if [ -z "$D" ] && [ -d /sys/kernel/security/apparmor ] && [ "$(id -u)" -eq 0 ] &&
                command -v apparmor_parser >/dev/null; then
                apparmor_parser -R "$p" 2>/dev/null || true
            fi
            rm -f "$D$p" ;;
        f) rm -f "$D$p" ;;
    esac
done
# Directories deepest first (the manifest lists parents before children).
for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    line=${lines[i]}
    [ "${line%% *}" = d ] || continue
    p=${line#d }
    [ -d "$D$p" ] || continue
    case $p in */__pycache__) rm -rf "$D$p" ;; esac
    [ -d "$D$p" ] || continue
    rmdir "$D$p" 2>/dev/null || { echo "layover uninstall: kept $D$p (holds files not installed by layover)" >&2; status=1; }
done
echo "uninstalled layover from $D$PREFIX"
exit $status
