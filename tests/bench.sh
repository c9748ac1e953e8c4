#!/usr/bin/env bash
# make bench: layover's speed and memory against its peers (tar+zstd, find,
# tar -x, diff -ruN, unshare, bubblewrap), each measured in the same run, as
# ratios of medians. Never part of `make test`. Prints a table; exits 1 on a
# MISS or an ERROR. Runs in about 5 minutes on 2 cores and needs ~6 GiB of
# scratch space under /var/tmp (override: LAYOVER_BENCH_DIR=/some/dir).
#   tests/bench.sh [BUILD]          LAYOVER_BENCH_REPS=N (default 5)
#   LAYOVER_BENCH_ONLY=capture,status,apply,diff,startup,python tests/bench.sh
# As root, the sandbox and every peer run as a throwaway unprivileged uid
# from a staged copy it can read, with a clean environment: that is how
# users run layover.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${LAYOVER_BENCH_REPS:-5}
ONLY=${LAYOVER_BENCH_ONLY:-}

for f in "$ROOT/$BUILD/layover" "$ROOT/$BUILD/layover-patch"; do
    [ -x "$f" ] || { echo "layover bench: $f missing; fix: make all" >&2; exit 2; }
done
for c in tar zstd diff find unshare setpriv; do
    command -v "$c" >/dev/null || { echo "layover bench: '$c' not found; fix: make deps" >&2; exit 2; }
done

# bubblewrap is a peer only: install it if we can, else skip it with a note.
if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then sudo=(); elif sudo -n true 2>/dev/null; then sudo=(sudo -n); else sudo=(false); fi
    echo "layover bench: installing bubblewrap (a peer for run start-up)"
    if ! { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y -q \
             --no-install-recommends bubblewrap >/dev/null 2>&1 ||
           { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -q >/dev/null 2>&1 &&
             DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y -q \
               --no-install-recommends bubblewrap >/dev/null 2>&1; }; }; then
        echo "layover bench: note: could not install bubblewrap (no root/sudo or no network); its peer rows are skipped"
    fi
fi

SCR=$(mktemp -d "${LAYOVER_BENCH_DIR:-/var/tmp}/layover-bench.XXXXXX") || exit 2
cleanup() { chmod -R u+rwX "$SCR" 2>/dev/null; rm -rf "$SCR"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$SCR"
mkdir -p "$SCR/stage/bin" "$SCR/stage/tests" "$SCR/work" "$SCR/home" "$SCR/tmp"
cp "$ROOT/$BUILD/layover" "$ROOT/$BUILD/layover-patch" "$SCR/stage/bin/"
cp -r "$ROOT/tests/bench" "$SCR/stage/tests/"
[ -f "$ROOT/tests/bench_python.py" ] && cp "$ROOT/tests/bench_python.py" "$SCR/stage/tests/"
[ -d "$ROOT/python" ] && cp -r "$ROOT/python" "$SCR/stage/"
find "$SCR/stage" -name __pycache__ -prune -exec rm -rf {} +
chmod -R a+rX "$SCR/stage"

envs=(HOME="$SCR/home" PATH=/usr/local/bin:/usr/bin:/bin TMPDIR="$SCR/tmp" LANG=C.UTF-8 LC_ALL=C.UTF-8
      TERM=dumb PYTHONDONTWRITEBYTECODE=1 LAYOVER_BIN="$SCR/stage/bin/layover" PYTHONPATH="$SCR/stage/python"
      LAYOVER_STATE_DIR="$SCR/work/state")
if [ "$(id -u)" -eq 0 ]; then
    uid=$((64000 + RANDOM % 1000))
    chown "$uid:$uid" "$SCR/work" "$SCR/home" "$SCR/tmp"
    chmod 700 "$SCR/work" "$SCR/home"
    echo "layover bench: running as throwaway uid $uid"
    runner=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all
            env -i USER=layoverbench LOGNAME=layoverbench "${envs[@]}")
else
    runner=(env "${envs[@]}")
fi

rc=0
if [ -z "$ONLY" ] || [ "$ONLY" != python ]; then
    only_args=()
    [ -n "$ONLY" ] && only_args=(--only "$ONLY")
    (cd "$SCR/work" && "${runner[@]}" /usr/bin/python3 "$SCR/stage/tests/bench/bench.py" \
        --bin "$SCR/stage/bin" --scratch "$SCR/work" --reps "$REPS" "${only_args[@]}" </dev/null) || rc=1
fi

if [ -z "$ONLY" ] || [[ ,$ONLY, == *,python,* ]]; then
    echo
    if [ -f "$SCR/stage/tests/bench_python.py" ]; then
        echo "Python bindings (tests/bench_python.py, issue 4):"
        (cd "$SCR/work" && "${runner[@]}" /usr/bin/python3 "$SCR/stage/tests/bench_python.py" </dev/null) || rc=1
    else
        echo "Python bindings: tests/bench_python.py does not exist yet; its three goals were not measured"
    fi
fi
exit $rc
