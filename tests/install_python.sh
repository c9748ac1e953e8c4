#!/usr/bin/env bash
# Install the layover Python package for /usr/bin/python3 (run by `make install`):
#   tests/install_python.sh DEST_PREFIX        # DEST_PREFIX = $(DESTDIR)$(PREFIX)
#   tests/install_python.sh --site PREFIX      # print the dir it would use
# PYTHON (default /usr/bin/python3) chooses the interpreter, PYTHONDIR the dir.
# It copies python/layover/ into PREFIX's site directory and records where the
# helper binary is installed in layover/_install.py (the bindings' second
# lookup, after $LAYOVER_BIN). When staging with DESTDIR, have DESTDIR in the
# environment (or set LAYOVER_INSTALLED_BIN) so the recorded path is the final one.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
PRINT_SITE=""
[ "${1:-}" = --site ] && { PRINT_SITE=1; shift; }
DEST=${1:?usage: tests/install_python.sh [--site] DEST_PREFIX}
DESTDIR=${DESTDIR:-}
PREFIX=${DEST#"$DESTDIR"}
BIN=${LAYOVER_INSTALLED_BIN:-${PREFIX%/}/bin/layover}

# Debian's python3 reads /usr/lib/python3/dist-packages and
# /usr/local/lib/python3.X/dist-packages; elsewhere, the usual site-packages.
[ -n "$PRINT_SITE" ] && DESTDIR=""
SITE=${PYTHONDIR:-$("$PY" - "$PREFIX" <<'PY'
import os, sys
prefix = os.path.normpath(sys.argv[1] or "/")
ver = "python%d.%d" % sys.version_info[:2]
dist = os.path.join(prefix, "lib", ver, "dist-packages")
if prefix == "/usr" and os.path.isdir("/usr/lib/python3/dist-packages"):
    print("/usr/lib/python3/dist-packages")
elif dist in sys.path:
    print(dist)
else:
    print(os.path.join(prefix, "lib", ver, "site-packages"))
PY
)}
[ -n "$PRINT_SITE" ] && { echo "$SITE"; exit 0; }
OUT="$DESTDIR$SITE/layover"
rm -rf "$OUT"
install -d -m 0755 "$OUT"
for f in "$ROOT"/python/layover/*.py "$ROOT"/python/layover/py.typed; do
    case "$(basename "$f")" in _install.py) continue;; esac
    install -m 0644 "$f" "$OUT/"
done
"$PY" - "$OUT/_install.py" "$BIN" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('"""Written by tests/install_python.sh at `make install`."""\n')
    f.write("BINARY = %r\n" % sys.argv[2])
PY
chmod 0644 "$OUT/_install.py"
"$PY" -m compileall -q -d "$SITE/layover" "$OUT" >/dev/null || true
# `layover mcp` (bin/layover) looks for the package in PREFIX/lib/layover/python.
install -d -m 0755 "$DESTDIR${PREFIX%/}/lib/layover"
ln -sfn "$SITE" "$DESTDIR${PREFIX%/}/lib/layover/python"
echo "installed the layover Python package in $SITE/layover (helper: $BIN)"
if ! "$PY" -c 'import sys; sys.exit(0 if sys.argv[1] in sys.path else 1)' "$SITE"; then
    echo "note: $SITE is not on $PY's path; add it to PYTHONPATH" >&2
fi
