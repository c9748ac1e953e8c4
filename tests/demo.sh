#!/usr/bin/env bash
# `make demo`: the main job end to end on a scratch home.
# 1. a scratch home with a few files; 2. a scripted sandboxed command that
# creates, modifies and deletes files; 3. proof that the real home is
# unchanged and the session holds the changes; 4. a saved patch and its
# summary; 5. a scripted review: diff, apply, undo, and proof the tree is back;
# 6. an MCP client session through `layover mcp`, then its status and diff.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAYOVER="$ROOT/$BUILD/layover"
DEMO=$(mktemp -d /tmp/layover-demo.XXXXXX)
trap 'chmod -R u+rwX "$DEMO" 2>/dev/null; rm -rf "$DEMO"' EXIT
export LAYOVER_STATE_DIR="$DEMO/state"
mkdir -m 700 "$LAYOVER_STATE_DIR"
H="$DEMO/home"
# Bold only on a terminal and without NO_COLOR: `make demo > log` holds no escapes.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ] && [ "${TERM:-dumb}" != dumb ]; then B=$'\033[1m' N=$'\033[0m'; else B= N=; fi
step() { printf '\n%s== %s%s\n' "$B" "$*" "$N"; }

step "1. A scratch home"
mkdir -p "$H/project/src" "$H/old-notes"
printf 'hello\nworld\n' > "$H/project/README"
printf 'int main() { return 0; }\n' > "$H/project/src/main.c"
printf 'remember the milk\n' > "$H/old-notes/todo.txt"
printf 'export PATH=$PATH\n' > "$H/.bashrc"
cp -a "$H" "$DEMO/original"
(cd "$H" && find . -type f | sort)

step "2. A sandboxed command creates, modifies and deletes files"
cd "$H"
"$LAYOVER" run --target "$H" --session demo --on-exit keep -- /bin/sh -c '
    echo "hello, sandbox" >> project/README
    printf "int helper(void) { return 42; }\n" > project/src/helper.c
    rm -rf old-notes
    echo "alias ll=\"ls -l\"" >> .bashrc
    echo "inside the sandbox:"; ls -A'
cd "$ROOT"

step "3. The real home is unchanged; the session holds the changes"
diff -r "$DEMO/original" "$H" && echo "real home: unchanged (diff -r is empty)"
"$LAYOVER" status demo

step "4. Save the session as a patch and show its summary"
"$LAYOVER" save demo -o "$DEMO/demo.tar.zst"
ls -l "$DEMO/demo.tar.zst"
"$LAYOVER" show "$DEMO/demo.tar.zst"

step "5. Review: the diff"
"$LAYOVER" diff demo --no-pager || true  # colored on a terminal only

step "6. Review: apply"
"$LAYOVER" apply demo --yes --undo-to "$DEMO/undo.tar.zst"
echo "real home now:"; (cd "$H" && find . -type f | sort)
grep -q "hello, sandbox" "$H/project/README" && echo "project/README has the new line"
[ ! -e "$H/old-notes" ] && echo "old-notes/ is gone"

step "7. Review: undo"
"$LAYOVER" undo "$DEMO/undo.tar.zst" --target "$H"
diff -r "$DEMO/original" "$H" && echo "tree is back exactly as it was (diff -r is empty)"
"$LAYOVER" discard demo

step "8. An MCP agent: a scripted client edits a file and runs a command through 'layover mcp'"
cp -a "$H/project" "$DEMO/project-before"
/usr/bin/python3 "$ROOT/tests/mcp_demo.py" "$LAYOVER" "$H/project" demo-mcp
diff -r "$DEMO/project-before" "$H/project" && echo "real project: unchanged (diff -r is empty)"
"$LAYOVER" status demo-mcp
"$LAYOVER" diff demo-mcp --no-pager || true
"$LAYOVER" discard demo-mcp
printf '\n%sdemo finished%s\n' "$B" "$N"
