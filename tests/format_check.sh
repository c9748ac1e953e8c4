#!/usr/bin/env bash
# `make format-check`: every C++ file is as clang-format (.clang-format) writes it.
# `make format` rewrites them.
set -u
cd "$(dirname "$0")/.." || exit 1
mapfile -t files < <(git ls-files -co --exclude-standard 'helper/*' 'overlay/*' 'capture/*' 'review/*' 'tests/unit/*' |
                     grep -E '\.(cc|h)$')
if [ "${1:-}" = --fix ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
# One clang-format for all (fast); only when it finds something, one per file to name them.
bad=
if ! clang-format --dry-run -Werror "${files[@]}" >/dev/null 2>&1; then
    bad=$(for f in "${files[@]}"; do clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
    [ -n "$bad" ] || bad="(clang-format failed on the whole list; run it by hand)"
fi
if [ -n "$bad" ]; then
    echo "format-check: not formatted (run 'make format'):" >&2
    echo "$bad" | sed 's/^/  /' >&2
    exit 1
fi
echo "format-check: ${#files[@]} files formatted"
