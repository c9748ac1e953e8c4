#!/usr/bin/env python3
"""The Python part of `make bench`: the three ratios of the bindings'
performance goals, each against its reference measured in the same run.

    startup   Sandbox() to the first run("1") result  vs  subprocess.run([python, "-c", "pass"])   goal <= 1.5
    run       sb.run("1+1") round trip                vs  raw Python ping-pong over a socketpair    goal <= 3.0
              (every process on one CPU; per call and in steady state: see bench_rtt)
    exec      sb.exec(["true"])                       vs  subprocess.run(["true"]) on the host      goal <= 1.5
              (every process on one CPU, as the round trip; unpinned and CPU per call as info rows)

Medians over many rounds, references and subjects interleaved so machine
noise hits both alike.  Usage: tests/bench_python.py [BUILD_DIR] [--rounds N]
Exit status 1 when a goal is missed.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from layover import Sandbox  # noqa: E402
from layover._helper import Helper  # noqa: E402

PING_CHILD = (
    "import socket,os\n"
    "s=socket.socket(fileno=int(os.environ['FD']))\n"
    "while True:\n"
    " b=s.recv(64)\n"
    " if not b: break\n"
    " s.sendall(b)\n"
)


def median_ms(samples: List[float]) -> float:
    return statistics.median(samples) * 1e3


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_startup(rounds: int, target: str, state: str) -> Tuple[float, float]:
    ref, sub = [], []
    names = []
    for _ in range(rounds):
        ref.append(timed(lambda: subprocess.run([sys.executable, "-c", "pass"])))
        t = time.perf_counter()
        sb = Sandbox(target, state_dir=state)
        sb.run("1")
        sub.append(time.perf_counter() - t)
        sb.close()
        names.append(sb.name)
    helper = Helper(state_dir=state)
    for n in names:
        helper.run(["discard", "--now", n])
    return median_ms(ref), median_ms(sub)


BATCH = 20


@contextlib.contextmanager
def one_cpu(sb: Sandbox) -> Iterator[None]:
    """This process, the REPL and what either starts from now on, on one CPU
    (the lowest this process may use) until the block ends."""
    cpus = os.sched_getaffinity(0)
    pin = "import os as _os; _os.sched_setaffinity(0, %r)"
    os.sched_setaffinity(0, {min(cpus)})
    try:
        sb.run(pin % ({min(cpus)},)).check()
        yield
    finally:
        os.sched_setaffinity(0, cpus)
        sb.run(pin % (cpus,)).check()


def bench_rtt(rounds: int, sb: Sandbox) -> Tuple[Tuple[float, float], Tuple[float, float]]:
    """(per call, steady state): each as (ping-pong ms, run ms)."""
    # Both round trips run with the bench, the ping child and the REPL on one
    # CPU.  Left to the scheduler, each pair lands on one CPU (~10 us per
    # round trip here) or on two (a cross-CPU wake-up costs ~40 us on a VM),
    # independently: the same code measured anywhere from 0.4x to 9x.  One CPU
    # is the reproducible case and the strictest reference.
    with one_cpu(sb):  # the ping child inherits it
        return _rtt(rounds, sb)


def _rtt(rounds: int, sb: Sandbox) -> Tuple[Tuple[float, float], Tuple[float, float]]:
    a, b = socket.socketpair()
    child = subprocess.Popen([sys.executable, "-c", PING_CHILD], pass_fds=[b.fileno()],
                             env=dict(os.environ, FD=str(b.fileno())))
    b.close()
    ping = b"x"
    run = sb.run
    pc = time.perf_counter
    ref, sub, bref, bsub = [], [], [], []
    try:
        for _ in range(50):  # warm-up
            a.sendall(ping)
            a.recv(64)
            run("1+1")
        for _ in range(rounds // BATCH):
            # Per call: one of each, alternating (a cold-ish call, as an
            # agent makes them between other work).
            for _ in range(BATCH):
                t = pc()
                a.sendall(ping)
                a.recv(64)
                t2 = pc()
                run("1+1")
                t3 = pc()
                ref.append(t2 - t)
                sub.append(t3 - t2)
            # Steady state: BATCH calls of one kind in a row.  On one CPU a
            # process may still be finishing its last call when the next
            # starts, and a per-call timer charges that to whichever call
            # comes next; a batch carries its own side's leftovers.
            t = pc()
            for _ in range(BATCH):
                a.sendall(ping)
                a.recv(64)
            t2 = pc()
            for _ in range(BATCH):
                run("1+1")
            t3 = pc()
            bref.append((t2 - t) / BATCH)
            bsub.append((t3 - t2) / BATCH)
    finally:
        a.close()
        child.wait()
    return (median_ms(ref), median_ms(sub)), (median_ms(bref), median_ms(bsub))


# The REPL's CPU and that of the commands it reaped, in seconds (its repr).
SANDBOX_CPU = ("import resource as _r; _s, _c = _r.getrusage(_r.RUSAGE_SELF), _r.getrusage(_r.RUSAGE_CHILDREN); "
               "_s.ru_utime + _s.ru_stime + _c.ru_utime + _c.ru_stime")


def children_cpu() -> float:
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return c.ru_utime + c.ru_stime


def bench_exec(rounds: int, sb: Sandbox) -> Tuple[Tuple[float, float], Tuple[float, float]]:
    """(wall, CPU) per call, each as (subprocess.run ms, exec ms). CPU is
    the work a call made on any CPU: this process's own (thread time) and,
    for subprocess.run, its child's; for exec, the REPL's and its
    command's (the REPL's rusage before and after the rounds: it idles
    while subprocess.run runs). Where the wall ratio moves and the CPU
    ratio does not, the time went to waiting (wake-ups, other load)."""
    true = shutil.which("true") or "/bin/true"
    ref, sub = [], []
    for _ in range(5):
        sb.exec([true])
        subprocess.run([true])
    tt, pc = time.thread_time, time.perf_counter
    host_ref = host_sub = kids = 0.0
    inside = float(sb.run(SANDBOX_CPU).value or 0)
    for _ in range(rounds):
        c, k, t = tt(), children_cpu(), pc()
        subprocess.run([true])
        t2 = pc()
        c2, k2 = tt(), children_cpu()
        t3 = pc()
        sb.exec([true])
        t4, c3 = pc(), tt()
        ref.append(t2 - t)
        sub.append(t4 - t3)
        host_ref += c2 - c
        host_sub += c3 - c2
        kids += k2 - k
    inside = float(sb.run(SANDBOX_CPU).value or 0) - inside
    return (median_ms(ref), median_ms(sub)), ((host_ref + kids) / rounds * 1e3, (host_sub + inside) / rounds * 1e3)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default=None, help="build dir holding layover (default: $LAYOVER_BIN)")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--json", default=None, help="also write the rows here (read by tests/bench.sh)")
    ap.add_argument("--smoke", action="store_true", help="a few rounds: proves it runs (make test)")
    args = ap.parse_args()
    if args.build:
        os.environ["LAYOVER_BIN"] = str(Path(args.build).resolve() / "layover")
    with tempfile.TemporaryDirectory(prefix="layover-bench-") as tmp:
        target = Path(tmp) / "target"
        (target / "src").mkdir(parents=True)
        (target / "src" / "a.txt").write_text("a\n")
        state = Path(tmp) / "state"
        state.mkdir(mode=0o700)
        startup = bench_startup(2 if args.smoke else max(10, args.rounds // 2), str(target), str(state))
        with Sandbox(target, state_dir=state, on_exit="discard") as sb:
            rtt, rtt_steady = bench_rtt(BATCH * 2 if args.smoke else args.rounds * 25, sb)
            # exec on one CPU too (the gated row): a chain of hand-offs on
            # both sides, so one CPU costs neither any parallelism; left to
            # the scheduler, the bench and the REPL land on one CPU or two,
            # and exec's two extra wake-ups cost ~10 us or ~40-90 us each on
            # this VM: 1.26-1.30x pinned against 1.25-2.51x unpinned, run to
            # run (docs/performance.md, "Python exec, third pass"). Unpinned
            # stays in view as an info row.
            n = 3 if args.smoke else args.rounds * 5
            with one_cpu(sb):
                ex, ex_cpu = bench_exec(n, sb)
            ex_free, _ = bench_exec(n, sb)
    rows = [
        ("python startup to first run('1')", "python -c pass", startup, 1.5),
        ("python run('1+1') round trip", "socketpair ping-pong", rtt, 3.0),
        ("  the same, steady state", "ping-pong, steady state", rtt_steady, 3.0),
        ("python exec(['true'])", "subprocess.run(['true'])", ex, 1.5),
        ("  the same, CPU per call (info)", "subprocess.run's CPU", ex_cpu, None),
        ("  the same, unpinned (info)", "subprocess.run, unpinned", ex_free, None),
    ]
    failed = met = 0
    out = []
    for name, ref_name, (ref, sub), goal in rows:
        ratio = sub / ref if ref > 0 else float("inf")
        ok = goal is None or ratio <= goal
        failed += not ok
        met += goal is not None and ok
        verdict = "info" if goal is None else "met" if ok else "MISS"
        print("%-34s %8.4f ms vs %-26s %8.4f ms  ratio %5.2f (%s) %s"
              % (name, sub, ref_name, ref, ratio, "info" if goal is None else "goal <= %.1f" % goal, verdict))
        out.append({"goal": name.strip(), "verdict": verdict, "layover": "%.4f ms" % sub,
                    "peer": "%.4f ms (%s)" % (ref, ref_name), "ratio": "%.2fx" % ratio,
                    "limit": "-" if goal is None else "<= %.1fx" % goal})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": out, "met": met, "missed": failed}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
