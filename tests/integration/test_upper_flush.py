"""The upper layer's flush while the command runs (helper/sandbox/prepare/upper_flush.h):
a kept session is written back as it grows, and still synced once more after
the command's exit, before run returns; a discarding run has no flush."""
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAYOVER

MIB = 1 << 20


def _expected(i, size):
    line = b"chunk %d\n" % i
    return (line * (size // len(line) + 1))[:size]


def _write(i, size):
    return "yes \"chunk %d\" | head -c %d > f%d" % (i, size, i)


def _flush_threads(pid):
    names = []
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            names.append(Path("/proc/%d/task/%s/comm" % (pid, t)).read_text().strip())
        except OSError:
            pass
    return names.count("layover-flush")


def _wait_ready(p):
    line = p.stdout.readline()
    assert line == b"ready\n", p.stderr.read() if line == b"" else line


def _idle_cpus():
    """(idle + iowait ticks, all ticks) of /proc/stat's cpu line."""
    f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return f[3] + f[4], sum(f)


def test_writes_are_flushed_while_the_command_runs_and_the_session_is_whole(lo, tmp_path):
    if not shutil.which("strace"):
        pytest.fail("strace not found (it counts the syncfs calls); fix: make deps")
    rounds, size = 4, 6 * MIB  # each round moves the filesystem past kFlushMinBytes
    cmd = "; ".join("%s; sleep 0.4" % _write(i, size) for i in range(rounds))
    trace = tmp_path / "trace"
    idle0, all0 = _idle_cpus()
    r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=syncfs", "-o", str(trace), LAYOVER, "run",
                        "--target", str(lo.target), "--session", "grow", "--on-exit", "keep", "--",
                        "/bin/sh", "-c", cmd], capture_output=True, timeout=120, env=lo.env, cwd=str(lo.target),
                       stdin=subprocess.DEVNULL)
    idle1, all1 = _idle_cpus()
    if r.returncode != 0 and b"ptrace" in r.stderr:
        pytest.fail("strace cannot trace here: " + r.stderr.decode(errors="replace"))
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in trace.read_text().splitlines() if "syncfs" in ln]
    calls = [ln for ln in lines if "syncfs(" in ln]
    assert calls and all("= -1" not in ln for ln in lines), trace.read_text()  # the exit's, at least
    # Early flushes wait for a quarter of a CPU left idle: with most of the
    # machine idle over the run, at least one came before the exit's.
    if (idle1 - idle0) * 4 >= (all1 - all0) * 3:
        assert len(calls) >= 2, trace.read_text()
    for i in range(rounds):
        assert (lo.upper("grow") / ("f%d" % i)).read_bytes() == _expected(i, size)
    items = json.loads(lo("sessions", "--json").stdout)
    assert [(i["status"], i["changes"]) for i in items if i["name"] == "grow"] == [("kept", rounds)]


def test_a_kept_run_stopped_by_a_signal_ends_its_flush_and_keeps_every_file(lo):
    cmd = ("trap 'exit 3' TERM; i=0; while [ $i -lt 400 ]; do %s; i=$((i+1)); "
           "[ $i = 1 ] && echo ready; sleep 0.02; done") % _write(0, MIB).replace("f0", "f$i").replace("chunk 0", "chunk $i")
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), "--session", "term", "--on-exit", "keep",
                          "--", "/bin/sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=lo.env, cwd=str(lo.target))
    _wait_ready(p)
    # The flush thread names itself once it runs, which on a loaded machine
    # can come after the command's "ready" (CI failed once so): wait for it.
    deadline = time.monotonic() + 30
    while _flush_threads(p.pid) == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _flush_threads(p.pid) == 1
    time.sleep(0.3)  # let it write a few more files: not a timing assertion
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)  # a flush thread that never stopped would hang run here
    assert p.returncode == 3, err
    files = sorted(lo.upper("term").glob("f*"), key=lambda f: int(f.name[1:]))
    assert [f.name for f in files] == ["f%d" % i for i in range(len(files))]
    assert len(files) >= 1
    for f in files[:-1]:
        assert f.read_bytes() == _expected(int(f.name[1:]), MIB), f.name
    # The signal reaches the whole command: the file being written may be cut short.
    assert _expected(len(files) - 1, MIB).startswith(files[-1].read_bytes())
    items = json.loads(lo("sessions", "--json").stdout)
    assert [(i["status"], i["changes"]) for i in items if i["name"] == "term"] == [("kept", len(files))]


def test_a_discarding_run_has_no_flush(lo):
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), "--on-exit", "discard", "--", "/bin/sh", "-c",
                          "trap 'exit 4' TERM; echo x > f; echo ready; while :; do sleep 0.05; done"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=lo.env,
                         cwd=str(lo.target))
    _wait_ready(p)
    assert _flush_threads(p.pid) == 0
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    assert p.returncode == 4
    assert not (Path(lo.target) / "f").exists()
