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
cp -r "$ROOT/tests" "$ROOT/python" "$ROOT/docs" "$ROOT/Makefile" "$STAGE/"; mkdir -p "$STAGE/helper"; cp -r "$ROOT/helper/dist" "$STAGE/helper/"; [ -d "$ROOT/examples" ] && cp -r "$ROOT/examples" "$STAGE/"
[ -e "$ROOT/$BUILD/layover.1" ] && cp "$ROOT/$BUILD/layover.1" "$STAGE/bin/"
mkdir -p "$STAGE/src"; cp -r "$ROOT/helper" "$ROOT/review" "$ROOT/capture" "$ROOT/overlay" "$STAGE/src/"  # test_advice.py, test_docs_match.py read them
cp "$ROOT/README.md" "$STAGE/"  # test_docs_cli.py runs its runnable blocks
chmod -R a+rX "$STAGE"
args=()
for a in "$@"; do
    case "$a" in tests/*|python/*|examples/*) args+=("$STAGE/$a");; *) args+=("$a");; esac
done
mcp_sdk=$("$ROOT/tests/mcp_sdk.sh" sdk) || mcp_sdk=""  # npm caches of the MCP client tests
mcp_insp=$("$ROOT/tests/mcp_sdk.sh" inspector) || mcp_insp=""
mcp_conf=$("$ROOT/tests/mcp_sdk.sh" conformance) || mcp_conf=""
uid=$((58000 + RANDOM % 2000))
default_state="/var/tmp/layover-$uid"  # removed at the end unless it was there before
[ -e "$default_state" ] && default_state=""
mkdir -p /home; NONTMP=$(mktemp -d /home/layover-dev.XXXXXX); chmod 755 "$NONTMP"
mkdir -p "$STAGE/home" "$STAGE/tmp" "$NONTMP/foreign"
echo "root's" > "$NONTMP/foreign/rootfile"; chmod 666 "$NONTMP/foreign/rootfile"; echo mine > "$NONTMP/foreign/mine"
chown "$uid:$uid" "$STAGE/home" "$STAGE/tmp" "$NONTMP" "$NONTMP/foreign" "$NONTMP/foreign/mine"; chmod 700 "$STAGE/home"
cd "$STAGE/tests/integration" && setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all env -i HOME="$STAGE/home" USER=layovertest \
    PATH=/usr/local/bin:/usr/bin:/bin TMPDIR="$STAGE/tmp" LAYOVER_BIN="$STAGE/bin/layover" PYTHONPATH="$STAGE/python" \
    LAYOVER_SOURCE_ROOT="$STAGE" PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 LAYOVER_TEST_NONTMP="$NONTMP" LAYOVER_TEST_THROWAWAY=1 LAYOVER_TEST_FOREIGN="$NONTMP/foreign" TERM=dumb LAYOVER_MCP_SDK="$mcp_sdk" LAYOVER_MCP_INSPECTOR="$mcp_insp" LAYOVER_MCP_CONFORMANCE="$mcp_conf" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" LAYOVER_SANITIZED="${LAYOVER_SANITIZED:-}" \
    /usr/bin/python3 -m pytest -p no:cacheprovider -q ${PYTEST_X--x} "${args[@]}" </dev/null
rc=$?
rm -rf "$STAGE" "$NONTMP" ${default_state:+"$default_state"}
exit $rc
