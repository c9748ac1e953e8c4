"""The cost of intercepting renames (docs/performance.md), measured as the
unprivileged user that runs the sandbox; never part of `make test`:
    python3 tests/bench/renames.py --bin build/layover --scratch /home/me/bench [--reps 5]
Each workload runs on the host, in `layover run` with the rename
interception, and in `layover run` without any seccomp filter
(LAYOVER_TEST_NO_SECCOMP=1: the deny table alone costs nothing measurable,
so this is the sandbox without the interception). The timing is taken inside
the sandbox, around the workload only; medians of --reps runs.
Workloads: `git checkout` back and forth between two branches of a
5,000-file repo; an editor's atomic save (write a temp file, rename it over
the file) 1,000 times; 1,000 renames of a directory made in the session;
the rename of a pre-existing directory of 1,000 files (the copy)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "init.defaultBranch=main",
       "-c", "gc.auto=0"]

WORKLOAD = r"""
import json, os, subprocess, sys, time
GIT = %r
out = {}
t = time.perf_counter()
for _ in range(2):
    subprocess.run(GIT + ["checkout", "-q", "other"], cwd="repo", check=True)
    subprocess.run(GIT + ["checkout", "-q", "main"], cwd="repo", check=True)
out["git checkout (x4)"] = time.perf_counter() - t
t = time.perf_counter()
for i in range(1000):
    with open("notes/.f.txt.swp", "w") as f:
        f.write("version %%d\n" %% i)
    os.rename("notes/.f.txt.swp", "notes/f.txt")
out["atomic save (x1000)"] = time.perf_counter() - t
os.mkdir("fresh")
t = time.perf_counter()
for i in range(500):
    os.rename("fresh", "fresh2")
    os.rename("fresh2", "fresh")
out["session dir rename (x1000)"] = time.perf_counter() - t
t = time.perf_counter()
try:
    os.rename("lowerdir", "moved")
    out["lower dir of 1,000 files (x1)"] = time.perf_counter() - t
except OSError as e:
    out["lower dir of 1,000 files (x1)"] = "EXDEV"
print(json.dumps(out))
""" % (GIT,)


def make_tree(root):
    if os.path.exists(root):
        subprocess.run(["rm", "-rf", root], check=True)
    repo = os.path.join(root, "repo")
    for d in range(50):
        os.makedirs(os.path.join(repo, "d%02d" % d))
        for f in range(100):
            with open(os.path.join(repo, "d%02d" % d, "f%03d.txt" % f), "w") as fh:
                fh.write("line %d %d\n" % (d, f) * 20)
    g = lambda *a: subprocess.run(GIT + list(a), cwd=repo, check=True, capture_output=True)  # noqa: E731
    g("init", "-q")
    g("add", "-A")
    g("commit", "-qm", "main")
    g("checkout", "-qb", "other")
    for d in range(0, 50, 2):  # half the files changed, ten dirs moved, some added and deleted
        for f in range(100):
            with open(os.path.join(repo, "d%02d" % d, "f%03d.txt" % f), "a") as fh:
                fh.write("changed\n")
    for d in range(1, 20, 2):
        g("mv", "d%02d" % d, "moved%02d" % d)
    for f in range(100):
        os.remove(os.path.join(repo, "d49", "f%03d.txt" % f))
    for f in range(500):
        with open(os.path.join(repo, "new%03d.txt" % f), "w") as fh:
            fh.write("new\n")
    g("add", "-A")
    g("commit", "-qm", "other")
    g("checkout", "-q", "main")
    os.makedirs(os.path.join(root, "notes"))
    with open(os.path.join(root, "notes", "f.txt"), "w") as fh:
        fh.write("v0\n")
    os.makedirs(os.path.join(root, "lowerdir"))
    for f in range(1000):
        with open(os.path.join(root, "lowerdir", "f%04d" % f), "w") as fh:
            fh.write("x" * 100)


def once(binary, target, mode):
    script = os.path.join(target, ".bench.py")
    with open(script, "w") as fh:
        fh.write(WORKLOAD)
    if mode == "host":
        argv = [sys.executable, script]
        env = dict(os.environ)
    else:
        env = dict(os.environ, LAYOVER_STATE_DIR=os.path.join(os.path.dirname(target), "state"))
        if mode == "no filter":
            env["LAYOVER_TEST_NO_SECCOMP"] = "1"
        argv = [binary, "run", "--target", target, "--on-exit", "discard", "--", "python3", script]
    r = subprocess.run(argv, cwd=target, env=env, capture_output=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit("%s failed: %s" % (mode, r.stderr.decode(errors="replace")))
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    target = os.path.join(a.scratch, "target")
    results = {}
    for rep in range(a.reps):
        for mode in ("host", "intercepted", "no filter"):
            make_tree(target)  # fresh: the host run changes it
            for k, v in once(os.path.abspath(a.bin), target, mode).items():
                results.setdefault(k, {}).setdefault(mode, []).append(v)
    shutil.rmtree(a.scratch, ignore_errors=True)
    print("%-32s %12s %12s %12s" % ("workload (median s)", "host", "intercepted", "no filter"))
    for k, modes in results.items():
        cells = []
        for mode in ("host", "intercepted", "no filter"):
            vals = modes[mode]
            cells.append("EXDEV" if "EXDEV" in vals else "%.4f" % statistics.median(vals))
        print("%-32s %12s %12s %12s" % (k, *cells))


if __name__ == "__main__":
    main()
