#!/usr/bin/env bash
# Developer helper: run pytest on chosen files/args exactly as `make test`
# does (staged copy, throwaway uid when root), without the rest of the suite.
#   tests/dev_pytest.sh tests/integration/test_sandbox_core.py -k resume
# Paths under tests/ or python/ are mapped into the staged copy.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
STAGE=$(mktemp -d /tmp/layover-dev.XXXXXX)
chmod 755 "$STAGE"; mkdir -p "$STAGE/bin"
cp "$ROOT/$BUILD/layover" "$STAGE/bin/"; [ -e "$ROOT/$BUILD/layover-patch" ] && cp "$ROOT/$BUILD/layover-patch" "$STAGE/bin/"
cp -r "$ROOT/tests" "$ROOT/python" "$STAGE/"; mkdir -p "$STAGE/src"; cp -r "$ROOT/helper" "$ROOT/review" "$ROOT/capture" "$STAGE/src/"  # test_advice.py reads them; [ -d "$ROOT/examples" ] && cp -r "$ROOT/examples" "$STAGE/"
chmod -R a+rX "$STAGE"
args=()
for a in "$@"; do
    case "$a" in tests/*|python/*|examples/*) args+=("$STAGE/$a");; *) args+=("$a");; esac
done
uid=$((58000 + RANDOM % 2000))
default_state="/var/tmp/layover-$uid"  # removed at the end unless it was there before
[ -e "$default_state" ] && default_state=""
mkdir -p /home; NONTMP=$(mktemp -d /home/layover-dev.XXXXXX); chmod 755 "$NONTMP"
mkdir -p "$STAGE/home" "$STAGE/tmp" "$NONTMP/foreign"
echo "root's" > "$NONTMP/foreign/rootfile"; chmod 666 "$NONTMP/foreign/rootfile"; echo mine > "$NONTMP/foreign/mine"
chown "$uid:$uid" "$STAGE/home" "$STAGE/tmp" "$NONTMP" "$NONTMP/foreign" "$NONTMP/foreign/mine"; chmod 700 "$STAGE/home"
cd "$STAGE/tests/integration" && setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all env -i HOME="$STAGE/home" USER=layovertest \
    PATH=/usr/local/bin:/usr/bin:/bin TMPDIR="$STAGE/tmp" LAYOVER_BIN="$STAGE/bin/layover" PYTHONPATH="$STAGE/python" \
    LAYOVER_SOURCE_ROOT="$STAGE" PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 LAYOVER_TEST_NONTMP="$NONTMP" LAYOVER_TEST_THROWAWAY=1 LAYOVER_TEST_FOREIGN="$NONTMP/foreign" TERM=dumb \
    /usr/bin/python3 -m pytest -p no:cacheprovider -q ${PYTEST_X--x} "${args[@]}" </dev/null
rc=$?
rm -rf "$STAGE" "$NONTMP" ${default_state:+"$default_state"}
exit $rc
