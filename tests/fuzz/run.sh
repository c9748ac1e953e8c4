#!/usr/bin/env bash
# Run each libFuzzer target for SECONDS, one at a time and niced (2 shared
# cores): tests/fuzz/run.sh BUILD SECONDS TARGET...
# Seeds: tests/fuzz/corpus/TARGET (committed, read only here); what a run
# finds goes to BUILD/corpus/TARGET, crashers to BUILD/crashers/TARGET/.
# To commit a grown corpus, minimize it first:
#   BUILD/fuzz-T -merge=1 tests/fuzz/corpus/T BUILD/corpus/T
set -u
BUILD=$1 SECONDS_EACH=$2
shift 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bad=0
for t in "$@"; do
    mkdir -p "$ROOT/$BUILD/corpus/$t" "$ROOT/$BUILD/crashers/$t"
    dict=()
    [ -f "$ROOT/tests/fuzz/dict/$t.dict" ] && dict=(-dict="$ROOT/tests/fuzz/dict/$t.dict")
    echo "fuzz: $t for ${SECONDS_EACH}s"
    log="$ROOT/$BUILD/fuzz-$t.log"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
        nice -n 19 "$ROOT/$BUILD/fuzz-$t" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -print_final_stats=1 "${dict[@]}" \
        -artifact_prefix="$ROOT/$BUILD/crashers/$t/" "$ROOT/$BUILD/corpus/$t" "$ROOT/tests/fuzz/corpus/$t" \
        >"$log" 2>&1 || { bad=1; echo "fuzz: $t FOUND A PROBLEM: see $log and $BUILD/crashers/$t/"; }
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log" |
        sed "s/^/  $t: /"
    grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 | sed "s/^/  $t: /"
done
exit $bad
