#!/usr/bin/env bash
# `make check-cases`: the whole upper x lower type grid (as binpash/try's
# check_trycase.sh enumerates it) must be handled in the code, each cell
# tagged with a comment "case: upper=X lower=Y", and named by at least one
# test (the same text in tests/unit or tests/integration). A cell nobody
# tagged fails too, not just a tag without a test.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
uppers="file dir opaque symlink fifo socket whiteout device"
lowers="none file dir symlink fifo socket device"
grid=$(for u in $uppers; do for l in $lowers; do echo "case: upper=$u lower=$l"; done; done | sort)
tags=$(grep -rhoE 'case: upper=[a-z_]+ lower=[a-z_]+' --include='*.cc' --include='*.h' \
           helper overlay capture review 2>/dev/null | sort -u)
tested=$(grep -rhoE 'case: upper=[a-z_]+ lower=[a-z_]+' tests/unit tests/integration 2>/dev/null | sort -u)
bad=0
report() {
    [ -n "$2" ] || return 0
    echo "check-cases: $1" >&2
    echo "$2" | sed 's/^/  /' >&2
    bad=1
}
report "cells of the grid no code tags:" "$(comm -23 <(echo "$grid") <(echo "$tags"))"
report "tags outside the grid (a typo?):" "$(comm -13 <(echo "$grid") <(echo "$tags"))"
report "cases no test names:" "$(comm -23 <(echo "$tags") <(echo "$tested"))"
[ $bad -eq 0 ] && echo "check-cases: all $(echo "$grid" | wc -l) cells of the upper x lower grid are tagged and tested"
exit $bad
