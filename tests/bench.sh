#!/usr/bin/env bash
# make bench: layover's speed and memory against its peers (tar+zstd, find,
# cmp, tar -x, diff -ruN, bubblewrap, a minimal C sandbox), each measured in
# the same run, as ratios of medians (tests/bench/core.py has the rules).
# Prints the machine and a table, writes BUILD/bench/results.json, and ends
# with exactly `bench: N met, M missed` (ERROR rows count as missed); exits 1
# when any row is missed. Needs ~11 GiB of scratch space under /var/tmp
# (override: LAYOVER_BENCH_DIR=/some/dir).
#   tests/bench.sh [BUILD]                  (make bench)
#   QUICK=1 tests/bench.sh [BUILD]          (make bench QUICK=1: smaller sizes, every gated row, <= 2 min)
#   SMOKE=1 tests/bench.sh [BUILD]          (make test runs this: tiny sizes, 1 rep, ~10 s; proves every
#                                            row still runs; exits 1 only on an ERROR row, never on a ratio)
#   LAYOVER_BENCH_ONLY=save,status,apply,hunks,diff,startup,concurrency,project,steps,fork,checkpoint,python tests/bench.sh
#   LAYOVER_BENCH_STEPS=N: steps of the stepped-session rows (default 50)
#   LAYOVER_BENCH_BIN=DIR: take layover and layover-patch from DIR instead of BUILD
# As root, the sandbox and every peer run as a throwaway unprivileged uid
# from a staged copy it can read, with a clean environment: that is how
# users run layover.
set -u
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
QUICK=${QUICK:-}
SMOKE=${SMOKE:-}
ONLY=${LAYOVER_BENCH_ONLY:-}
BIN=${LAYOVER_BENCH_BIN:-$ROOT/$BUILD}
RESULTS=${LAYOVER_BENCH_RESULTS:-$ROOT/$BUILD/bench}
mkdir -p "$RESULTS"

for f in "$BIN/layover" "$BIN/layover-patch"; do
    [ -x "$f" ] || { echo "layover bench: $f missing; fix: make all" >&2; exit 2; }
done
for c in tar zstd diff find unshare setpriv; do
    command -v "$c" >/dev/null || { echo "layover bench: '$c' not found; fix: make deps" >&2; exit 2; }
done

# bubblewrap is a peer only: install it if we can, else skip it with a note.
if [ -z "$SMOKE" ] && ! command -v bwrap >/dev/null 2>&1; then
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

fsdevs=()  # loop devices of own_fs below, detached by cleanup
SCR=$(mktemp -d "${LAYOVER_BENCH_DIR:-/var/tmp}/layover-bench.XXXXXX") || exit 2
cleanup() {
    if [ -n "$SMOKE" ]; then  # deleting is slow on a discard-mounted disk: not on make test's clock
        (setsid sh -c 'chmod -R u+rwX "$1" 2>/dev/null; rm -rf "$1"' sh "$SCR" </dev/null >/dev/null 2>&1 &)
        return
    fi
    for fs in applyfs projfs stepsfs; do
        if mountpoint -q "$SCR/$fs" 2>/dev/null; then umount "$SCR/$fs" || umount -l "$SCR/$fs"; fi
    done
    for dev in "${fsdevs[@]}"; do losetup -d "$dev" 2>/dev/null; done
    chmod -R u+rwX "$SCR" 2>/dev/null; rm -rf "$SCR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$SCR"
mkdir -p "$SCR/stage/bin" "$SCR/stage/tests" "$SCR/work" "$SCR/home" "$SCR/tmp"
cp "$BIN/layover" "$BIN/layover-patch" "$SCR/stage/bin/"
cp -r "$ROOT/tests/bench" "$SCR/stage/tests/"
[ -f "$ROOT/tests/bench_python.py" ] && cp "$ROOT/tests/bench_python.py" "$SCR/stage/tests/"
[ -d "$ROOT/python" ] && cp -r "$ROOT/python" "$SCR/stage/"
find "$SCR/stage" -name __pycache__ -prune -exec rm -rf {} +
chmod -R a+rX "$SCR/stage"

envs=(HOME="$SCR/home" PATH=/usr/local/bin:/usr/bin:/bin TMPDIR="$SCR/tmp" LANG=C.UTF-8 LC_ALL=C.UTF-8
      TERM=dumb PYTHONDONTWRITEBYTECODE=1 LAYOVER_BIN="$SCR/stage/bin/layover" PYTHONPATH="$SCR/stage/python"
      LAYOVER_STATE_DIR="$SCR/work/state" LAYOVER_BENCH_STEPS="${LAYOVER_BENCH_STEPS:-50}")
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

# Rows that create tens of thousands of files get an ext4 of their own, made
# as the fixtures' disk is here (no journal, mounted with discard) and never
# written before the row: without a journal, ext4 scans past every inode
# deleted in the last 60-360 s when it makes a file, so on the shared scratch
# disk the apply row's peer took 0.2 s or 2.6 s for 10,000 creates by what was
# deleted before the run (docs/performance.md, "Apply, fourth pass"), and the
# real project's `cp -a` 0.7 s or 4.5 s ("The real project's run: an honest
# row"). Its own filesystem also keeps run's `syncfs` to the row's own data,
# not every other program's writeback on the disk. Each image is sparse, its
# loop device does direct I/O (no second page cache), so syncs cost about what
# they do on the disk itself. Root only; otherwise the rows run on the scratch
# disk, as before.
#   own_fs NAME SIZE [mkfs.ext4 options]: sets fsdir to a dir the runner owns there, or fails
own_fs() {
    local name=$1 size=$2 dev; shift 2
    fsdir=
    [ "$(id -u)" -eq 0 ] && command -v mkfs.ext4 >/dev/null && mkdir -p "$SCR/$name" &&
        truncate -s "$size" "$SCR/$name.img" &&
        mkfs.ext4 -q -F -O ^has_journal -E lazy_itable_init=0,nodiscard "$@" "$SCR/$name.img" >/dev/null 2>&1 &&
        dev=$(losetup --direct-io=on -f --show "$SCR/$name.img" 2>/dev/null) && fsdevs+=("$dev") &&
        mount -o discard "$dev" "$SCR/$name" 2>/dev/null && mkdir "$SCR/$name/t" &&
        chown "$uid:$uid" "$SCR/$name/t" && chmod 700 "$SCR/$name/t" && fsdir=$SCR/$name/t
}
wants() { [ -z "$SMOKE" ] && { [ -z "$ONLY" ] || [[ ,$ONLY, == *,$1,* ]]; }; }
fsargs=()
# The many-file apply row: 22 copies' inodes at mkfs's default ratio (~1 GB written).
if wants apply; then
    if own_fs applyfs "$([ -n "$QUICK" ] && echo 1G || echo 5G)"; then
        fsargs+=(--apply-dir "$fsdir")
    else
        echo "layover bench: note: the apply row's targets stay on the scratch disk (no loop mount: not root?);" \
             "its peer's time follows what was deleted there in the last minutes"
    fi
fi
# The stepped sessions' apply row: 11 reps of two copies of the tree (~22 x 10,100 inodes, ~1 GB) and what apply
# writes beside them.
if wants steps; then
    if own_fs stepsfs "$([ -n "$QUICK" ] && echo 1G || echo 3G)" -N "$([ -n "$QUICK" ] && echo 100000 || echo 400000)"; then
        fsargs+=(--steps-dir "$fsdir")
    else
        echo "layover bench: note: the stepped sessions' apply row stays on the scratch disk (no loop mount: not root?)"
    fi
fi
# The real project: its source, every rep's `cp -a`, session (the state dir)
# and applied tree, 11 reps of ~100,000 inodes and ~450 MB at full size.
if wants project; then
    if own_fs projfs "$([ -n "$QUICK" ] && echo 2G || echo 8G)" -N "$([ -n "$QUICK" ] && echo 200000 || echo 1600000)"; then
        fsargs+=(--project-dir "$fsdir")
    else
        echo "layover bench: note: the real project's row stays on the scratch disk (no loop mount: not root?);" \
             "its times follow what was deleted and written there by others"
    fi
fi

mkdir -p "$SCR/out"; chmod 777 "$SCR/out"
if [ -z "$ONLY" ] || [ "$ONLY" != python ]; then
    args=()
    [ -n "$ONLY" ] && args+=(--only "$ONLY")
    [ -n "$QUICK" ] && args+=(--quick)
    [ -n "$SMOKE" ] && args+=(--smoke)
    args+=("${fsargs[@]}")
    (cd "$SCR/work" && "${runner[@]}" /usr/bin/python3 "$SCR/stage/tests/bench/bench.py" \
        --bin "$SCR/stage/bin" --scratch "$SCR/work" --results "$SCR/out/results.json" "${args[@]}" </dev/null)
fi

if [ -z "$ONLY" ] || [[ ,$ONLY, == *,python,* ]]; then
    echo
    echo "Python bindings (tests/bench_python.py):"
    rounds=40; [ -n "$QUICK" ] && rounds=10
    pyargs=(--rounds "$rounds"); [ -n "$SMOKE" ] && pyargs=(--smoke)
    (cd "$SCR/work" && "${runner[@]}" /usr/bin/python3 "$SCR/stage/tests/bench_python.py" "${pyargs[@]}" \
        --json "$SCR/out/python.json" </dev/null)
fi

# One results.json for both parts, and the last line tooling reads.
/usr/bin/python3 - "$SCR/out" "$RESULTS/results.json" "$SMOKE" <<'PY'
import json, os, sys
out, dest, smoke = sys.argv[1], sys.argv[2], sys.argv[3]
doc = {"rows": [], "met": 0, "missed": 0}
for name in ("results.json", "python.json"):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        continue
    part = json.load(open(p))
    doc.setdefault("machine", part.get("machine"))
    doc["rows"] += part["rows"]
    doc["met"] += part["met"]
    doc["missed"] += part["missed"]
json.dump(doc, open(dest, "w"), indent=1)
print("\nresults: %s" % dest)
print("bench: %d met, %d missed" % (doc["met"], doc["missed"]))
if smoke:  # only that it runs: a failed or wrong rep (ERROR), never a ratio
    errors = [r["goal"] for r in doc["rows"] if r["verdict"] == "ERROR"]
    if errors:
        print("smoke: ERROR rows: %s" % ", ".join(errors))
    sys.exit(1 if errors or not doc["rows"] else 0)
sys.exit(1 if doc["missed"] or not doc["rows"] else 0)
PY
