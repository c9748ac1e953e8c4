#!/usr/bin/env bash
# Run every test (Catch2 unit tests, then the pytest integration and Python
# binding suites as an unprivileged user) and end with one line:
#   N passed, N failed[, N skipped]
# As root (CI), the sandbox suites run as a throwaway uid with its own home
# in a temp dir, from a staged copy it can read, to prove no privilege is needed.
set -u
BUILD=${1:-build}
MODE=${2:-normal}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
passed=0 failed=0 skipped=0

# 1. C++ unit tests: started below, beside the first pytest job.
unit_out=$(mktemp)
run_unit() { "$ROOT/$BUILD/unit-tests" >"$unit_out" 2>&1; }
count_unit() {
    tail -n 40 "$unit_out"
    line=$(grep -E '^(All tests passed|test cases:)' "$unit_out" | tail -n 1)
    if [[ $line =~ All\ tests\ passed\ \(([0-9]+)\ assertions?\ in\ ([0-9]+)\ test\ cases? ]]; then
        passed=$((passed + BASH_REMATCH[2]))
    elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ passed\ \|\ +([0-9]+)\ failed ]]; then
        passed=$((passed + BASH_REMATCH[2])); failed=$((failed + BASH_REMATCH[3]))
    elif [[ $line =~ test\ cases:\ +([0-9]+)\ \|\ +([0-9]+)\ failed ]]; then
        failed=$((failed + BASH_REMATCH[2]))
    else
        echo "unit tests: could not read Catch2's result (crash?)" >&2
        failed=$((failed + 1))
    fi
}

# 2. Stage for the unprivileged uid.
STAGE=$(mktemp -d /tmp/layover-test.XXXXXX)
chmod 755 "$STAGE"
mkdir -p "$STAGE/bin" "$STAGE/results" "$STAGE/tmp"
cp "$ROOT/$BUILD/layover" "$ROOT/$BUILD/layover-patch" "$STAGE/bin/"
cp -r "$ROOT/tests" "$ROOT/python" "$ROOT/docs" "$ROOT/Makefile" "$STAGE/"
mkdir -p "$STAGE/helper" && cp -r "$ROOT/helper/dist" "$STAGE/helper/"
mkdir -p "$STAGE/src"; cp -r "$ROOT/helper" "$ROOT/review" "$ROOT/capture" "$ROOT/overlay" "$STAGE/src/"  # test_advice.py, test_docs_match.py read them
cp "$ROOT/README.md" "$STAGE/"  # test_docs_cli.py runs its runnable blocks
[ -d "$ROOT/examples" ] && cp -r "$ROOT/examples" "$STAGE/"
# The man page, made as `make man` makes it (the install suite installs it).
/usr/bin/python3 "$ROOT/helper/dist/man.py" "$ROOT/docs/cli.md" \
    "$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$ROOT/python/layover/_version.py")" >"$STAGE/bin/layover.1"
find "$STAGE" -name __pycache__ -prune -exec rm -rf {} +
chmod -R a+rX "$STAGE"

# Each suite runs in its own pytest (each has its own conftest.py).
suites=("$STAGE/tests/integration")
[ -d "$STAGE/tests/security" ] && suites+=("$STAGE/tests/security")
[ -d "$STAGE/python/tests" ] && suites+=("$STAGE/python/tests")
# The install suite runs as the invoking user (root in CI: it installs a
# .deb), and runs what it installed as the throwaway uid itself.
suites+=("$STAGE/tests/install")
pytest_args=(-p no:cacheprovider -q -rfEs -o junit_family=xunit2)
# A test still running after 5 minutes prints every thread's stack (pytest's
# faulthandler: output only), and a job still running after JOB_LIMIT seconds
# is killed (timeout --foreground: pytest only, Ctrl+C still reaches it) and
# fails with its log, naming where it hung, instead of holding the whole run
# until CI's own limit ends it with nothing said. A clean run's longest job
# takes a few minutes on 2 loaded cores; the stress cases have no limit.
JOB_LIMIT=${LAYOVER_TEST_JOB_LIMIT:-1800}
if [ "$MODE" = stress ]; then
    pytest_args+=(-m stress); JOB_LIMIT=${LAYOVER_TEST_JOB_LIMIT:-0}
else
    pytest_args+=(-m "not stress" -o faulthandler_timeout=300)
fi

# npm kits for the `layover mcp` client tests (the official SDK, the
# Inspector, the conformance suite), installed once into a cache dir outside the repo.
mcp_envs=()
for kit in sdk inspector conformance; do
    err=$(mktemp)
    dir=$("$ROOT/tests/mcp_sdk.sh" "$kit" 2>"$err") || { dir=""; tail -n 3 "$err" >&2; }
    mcp_envs+=("LAYOVER_MCP_${kit^^}=$dir" "LAYOVER_MCP_${kit^^}_WHY=$(tail -n 1 "$err" | head -c 300)")
    rm -f "$err"
done
envs=("${mcp_envs[@]}" LAYOVER_BIN="$STAGE/bin/layover" LAYOVER_SOURCE_ROOT="$STAGE" PYTHONPATH="$STAGE/python"
      PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8 LC_ALL=C.UTF-8 CI="${CI:-}"
      LAYOVER_ALLOW_SKIP="${LAYOVER_ALLOW_SKIP:-}" LAYOVER_STRESS="${LAYOVER_STRESS:-}"
      ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" LAYOVER_SANITIZED="${LAYOVER_SANITIZED:-}")
runner=()
if [ "$(id -u)" -eq 0 ]; then
    uid=$((61000 + RANDOM % 3000))
    # The uid's default state dir (a verb run without LAYOVER_STATE_DIR makes
    # it): removed at the end unless it was there before.
    default_state="/var/tmp/layover-$uid"
    [ -e "$default_state" ] && default_state=""
    # The uid's home, and the dir for targets that must not lie in /tmp, are
    # under /home as a real home is: /tmp and /var/tmp are private and
    # writable inside the sandbox and would hide every read-only problem.
    mkdir -p /home && NONTMP=$(mktemp -d /home/layover-test.XXXXXX)
    chmod 755 "$NONTMP"
    home="$NONTMP/home"
    mkdir -p "$home" "$STAGE/tmp"
    # A tree of the uid's holding a root-owned, world-writable file: the
    # sandbox cannot copy it up (its owner is unmapped: EOVERFLOW).
    mkdir -p "$NONTMP/foreign"
    echo "root's" > "$NONTMP/foreign/rootfile"; chmod 666 "$NONTMP/foreign/rootfile"
    echo "mine" > "$NONTMP/foreign/mine"
    chown "$uid:$uid" "$home" "$STAGE/results" "$STAGE/tmp" "$NONTMP" "$NONTMP/foreign" "$NONTMP/foreign/mine"
    chmod 700 "$home"
    echo "integration tests: running as throwaway uid $uid (HOME=$home)"
    # setpriv keeps HOME and the rest of root's environment: env -i resets it all.
    runner=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all
            env -i HOME="$home" USER=layovertest LOGNAME=layovertest PATH=/usr/local/bin:/usr/bin:/bin
            TMPDIR="$STAGE/tmp" TERM=dumb LAYOVER_TEST_NONTMP="$NONTMP" LAYOVER_TEST_THROWAWAY=1
            LAYOVER_TEST_FOREIGN="$NONTMP/foreign" "${envs[@]}")
else
    NONTMP=$(mktemp -d "$HOME/.cache/layover-test.XXXXXX" 2>/dev/null || mktemp -d /var/lib/layover-test.XXXXXX)
    runner=(env LAYOVER_TEST_NONTMP="$NONTMP" "${envs[@]}")
fi
# The tests run as jobs, three at a time (LAYOVER_TEST_JOBS): the sandbox
# tests spend much of their time waiting on processes, so two cores run two
# pytests in about half the time, and three in a quarter less again
# (docs/performance.md, "Build time"). Each test file is a job (each suite's conftest.py
# applies), largest first so that the short ones fill the gaps at the end;
# the unit tests take one slot at the start. Each job has its own pytest
# basetemp (pytest prunes the default one while another pytest uses it) and
# its own log, printed when all are done. The install suite runs last and
# alone: it installs into the system.
JOBS=${LAYOVER_TEST_JOBS:-3}
job_dir=() job_args=() alone_dir=() alone_args=()
# The install suite's files that install nothing (docs, the bench's smoke
# run) run in the pool like the others; the rest runs alone, last.
pooled_install=(test_bench_smoke.py test_docs_cli.py test_docs_match.py test_docs_tools.py)
for suite in "${suites[@]}"; do
    if [ "$suite" = "$STAGE/tests/install" ]; then
        for f in "${pooled_install[@]}"; do job_dir+=("$suite"); job_args+=("$suite/$f"); done
        continue
    fi
    while read -r _ file; do
        # test_alone_*.py: run by itself after the pool (a test whose load is
        # the user's, not its sandbox's: fds in flight on unix sockets).
        case "$file" in */test_alone_*) alone_dir+=("$suite"); alone_args+=("$file"); continue ;; esac
        job_dir+=("$suite"); job_args+=("$file")
    done < <(find "$suite" -maxdepth 1 -name 'test_*.py' -printf '%s %p\n')
done
# Largest first, across suites.
order=$(for i in "${!job_args[@]}"; do echo "$(stat -c %s "${job_args[$i]}") $i"; done | sort -rn | cut -d' ' -f2)
first_alone=${#job_args[@]}
job_dir+=("${alone_dir[@]}"); job_args+=("${alone_args[@]}")
job_dir+=("$STAGE/tests/install"); job_args+=("$STAGE/tests/install")

run_job() {  # index: one pytest, its output in results/log-N.txt
    local i=$1 suite=${job_dir[$1]} run=("${runner[@]}") extra=()
    extra=(--basetemp="$STAGE/tmp/pytest-$i")
    if [ "$suite" = "$STAGE/tests/install" ]; then
        run=(env LAYOVER_TEST_UID="${uid:-}" LAYOVER_TEST_HOME="${home:-}" LAYOVER_TEST_NONTMP="$NONTMP" "${envs[@]}")
        if [ "$i" = "$last" ]; then
            extra=()
            for f in "${pooled_install[@]}"; do extra+=(--ignore="$suite/$f"); done
        fi
    fi
    (cd "$suite" && timeout --foreground -k 30 "$JOB_LIMIT" "${run[@]}" /usr/bin/python3 -m pytest "${pytest_args[@]}" "${extra[@]}" \
        --junitxml="$STAGE/results/junit-$i.xml" "${job_args[$i]}" </dev/null) >"$STAGE/results/log-$i.txt" 2>&1
    echo $? >"$STAGE/results/rc-$i"
}
last=$((${#job_dir[@]} - 1))
running=0
if [ "$MODE" != stress ]; then run_unit & running=1; fi
for i in $order; do
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    run_job "$i" &
    running=$((running + 1))
done
wait
for ((i = first_alone; i < last; i++)); do run_job "$i"; done
run_job "$last"
[ "$MODE" != stress ] && count_unit
rm -f "$unit_out"
for ((i = 0; i <= last; i++)); do
    xml="$STAGE/results/junit-$i.xml" rc=$(cat "$STAGE/results/rc-$i" 2>/dev/null || echo 1)
    # A passing job shows its summary line; a failing one its whole log.
    echo "== ${job_args[$i]#"$STAGE/"}: $(grep -E '(passed|failed|error|no tests ran).* in [0-9.]+s' "$STAGE/results/log-$i.txt" | tail -n 1 | tr -d '=')"
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then cat "$STAGE/results/log-$i.txt"; fi
    if [ -s "$xml" ]; then
        read -r t f e s < <(/usr/bin/python3 - "$xml" <<'PY'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
suites = [r] if r.tag == "testsuite" else r.findall("testsuite")
print(*[sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")])
PY
)
        passed=$((passed + t - f - e - s)); failed=$((failed + f + e)); skipped=$((skipped + s))
    elif [ "$rc" -ne 5 ]; then
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && echo "${job_args[$i]#"$STAGE/"}: killed after ${JOB_LIMIT} s (LAYOVER_TEST_JOB_LIMIT)" >&2
        echo "${job_dir[$i]}: pytest produced no results (exit $rc)" >&2
        failed=$((failed + 1))
    fi
done
chmod -R u+rwX "$STAGE" "$NONTMP" 2>/dev/null
rm -rf "$STAGE" "$NONTMP" ${default_state:+"$default_state"} 2>/dev/null || true

summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary+=", $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
