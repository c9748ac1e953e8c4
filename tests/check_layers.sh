#!/usr/bin/env bash
# `make check-layers`: every #include "..." stays within its layer (see
# docs/design.md), and no two folders include each other, directly or round
# a longer cycle. Rooms and what each may include:
set -u
cd "$(dirname "$0")/.." || exit 1
declare -A may=(
    [helper/base]="helper/base"                [helper/store]="helper/base helper/store"
    [overlay]="helper/base overlay"            [helper/sandbox]="helper/base helper/store overlay helper/sandbox"
    [capture]="helper/base helper/store capture" [review]="helper/base helper/store capture review"
    [helper/cli]="helper/base helper/store overlay helper/sandbox capture review helper/cli")
# The room of a path, in a variable (no subshell per include: thousands of them).
room() { case $1 in helper/*) r=${1#helper/}; r=helper/${r%%/*} ;; *) r=${1%%/*} ;; esac; }
bad=0 edges=$(mktemp)
while IFS=: read -r file inc; do
    room "$file"; from=$r
    room "$inc"; to=$r
    [[ " ${may[$from]:-} " == *" $to "* ]] || { echo "check-layers: $file includes $inc ($from may not include $to)" >&2; bad=1; }
    [ "${file%/*}" != "${inc%/*}" ] && echo "${file%/*} ${inc%/*}" >>"$edges"
done < <(git ls-files -co --exclude-standard 'helper/*' 'overlay/*' 'capture/*' 'review/*' | grep -E '\.(cc|h)$' |
         xargs grep -oE '^#include "[^"]+"' | sed -E 's/:#include "/:/; s/"$//')
tsort "$edges" >/dev/null 2>"$edges.err" || { echo "check-layers: folders include each other:" >&2; sort -u "$edges.err" | grep -v "input contains a loop" >&2; bad=1; }
rm -f "$edges" "$edges.err"
/usr/bin/python3 tests/check_py_imports.py || bad=1
[ $bad -eq 0 ] && echo "check-layers: every include respects the layers; no import cycles"
exit $bad
