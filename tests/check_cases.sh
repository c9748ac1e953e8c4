#!/usr/bin/env bash
# `make check-cases`: every overlay case tagged in the code
# (a comment "case: upper=X lower=Y") must be named by at least one test
# (the same "case: upper=X lower=Y" text in tests/unit or tests/integration).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
tags=$(grep -rhoE 'case: upper=[a-z_]+ lower=[a-z_]+' --include='*.cc' --include='*.h' \
           helper overlay capture review 2>/dev/null | sort -u)
if [ -z "$tags" ]; then
    echo "check-cases: no case tags found in the code (expected 'case: upper=X lower=Y' comments)" >&2
    exit 1
fi
tested=$(grep -rhoE 'case: upper=[a-z_]+ lower=[a-z_]+' tests/unit tests/integration 2>/dev/null | sort -u)
missing=$(comm -23 <(echo "$tags") <(echo "$tested"))
total=$(echo "$tags" | wc -l)
if [ -n "$missing" ]; then
    echo "check-cases: these cases have no test naming them:" >&2
    echo "$missing" | sed 's/^/  /' >&2
    exit 1
fi
echo "check-cases: all $total tagged cases have tests"
