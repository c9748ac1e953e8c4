"""Resource limits (issue 14): a fork bomb, a memory hog, the timeout and
--max-size, each checked on the host's processes and the session afterwards."""
import os
import subprocess
import time

import pytest

PY = "/usr/bin/python3"
BOMB = ("import os,time\nn=0\ntry:\n while n<2000:\n  if os.fork()==0:\n   time.sleep(5); os._exit(0)\n  n+=1\n"
        "except OSError as e: print('stopped', n, e.errno)\nelse: print('unbounded', n)")


def pids_with(marker):
    out = []
    for p in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if marker in f.read():
                    out.append(p)
        except OSError:
            pass
    return out


def test_fork_bomb_stops_at_max_pids_and_the_host_can_still_fork(sh):
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--max-pids", "64", "--", PY, "-c", BOMB)
    words = r.stdout.split()
    assert words[0] == b"stopped" and words[2] == b"11", r.stdout  # EAGAIN
    assert int(words[1]) <= 64
    # The host user is not starved: a process starts right away.
    assert subprocess.run(["true"]).returncode == 0
    assert b"killed" in r.stderr  # the bomb's children were named and killed at exit


def test_default_max_pids_lets_many_processes_run(sh):
    code = ("import os\nkids=[]\nfor i in range(300):\n pid=os.fork()\n if pid==0:\n  os._exit(0)\n kids.append(pid)\n"
            "[os.waitpid(k,0) for k in kids]\nprint('ok', len(kids))")
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", PY, "-c", code)
    assert r.stdout == b"ok 300\n", r.stderr


def test_memory_hog_fails_to_allocate_under_max_memory(sh):
    code = "try:\n b=bytearray(400*1024*1024); print('allocated')\nexcept MemoryError: print('MemoryError')"
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--max-memory", "200M", "--", PY, "-c", code)
    assert r.stdout == b"MemoryError\n", r.stderr
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", PY, "-c", code)
    assert r.stdout == b"allocated\n", r.stderr  # the control: the limit is what stopped it


def test_timeout_stops_everything_keeps_the_session_and_exits_124(sh):
    t0 = time.monotonic()
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--session", "slow", "--timeout", "2s", "--",
              "/bin/sh", "-c", "echo before > before.txt; sleep 3079 & sleep 3080", timeout=60)
    assert r.returncode == 124, r.stderr
    assert time.monotonic() - t0 < 30
    assert b"--timeout 2s reached" in r.stderr and b"session 'slow' kept" in r.stderr
    # Kept despite --on-exit discard, with what was written before.
    assert (sh.lo.upper("slow") / "before.txt").read_text() == "before\n"
    assert not (sh.project / "before.txt").exists()
    for _ in range(50):
        if not pids_with(b"3079") and not pids_with(b"3080"):
            break
        time.sleep(0.1)
    assert not pids_with(b"3079") and not pids_with(b"3080")


def test_max_size_stops_a_runaway_writer_and_keeps_the_session(sh):
    cmd = ("i=0; while [ $i -lt 50 ]; do head -c 1048576 /dev/zero > f$i; i=$((i+1)); sleep 0.05; done; "
           "echo finished")
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--session", "big", "--max-size", "5M", "--",
              "/bin/sh", "-c", cmd, timeout=120)
    assert r.returncode == 125, r.stderr
    assert b"finished" not in r.stdout
    assert b"--max-size 5M reached" in r.stderr
    upper = sh.lo.upper("big")
    used = sum(p.stat().st_blocks * 512 for p in upper.rglob("*"))
    # The documented overshoot: one check interval's writing (0.25 s here at
    # about 20 MB/s), far below the 50 MB it would have written.
    assert 5 << 20 < used < 30 << 20, used
    assert any(upper.iterdir())


def test_max_size_also_caps_a_single_file(sh):
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--max-size", "2M", "--", "/bin/sh", "-c",
              "head -c 10485760 /dev/zero > one; echo rc=$?; ls -l one", timeout=60)
    # RLIMIT_FSIZE: the write stops at the cap (SIGXFSZ kills head).
    size = int(r.stdout.split(b"\n")[1].split()[4]) if b"one" in r.stdout else 0
    assert size <= 2 << 20, r.stdout


@pytest.mark.parametrize("flag,value", [("--timeout", "soon"), ("--timeout", "-5s"), ("--max-pids", "3"),
                                        ("--max-pids", "x"), ("--max-size", "10%"), ("--max-size", "1k"),
                                        ("--max-memory", "lots"), ("--max-memory", "1M")])
def test_bad_limit_values_are_usage_errors_naming_the_flag(sh, flag, value):
    r = sh.lo("run", "--target", sh.project, flag, value, "--", "true")
    assert r.returncode == 125
    assert ("bad %s '%s'" % (flag, value)).encode() in r.stderr
    assert r.stderr.count(b"\n") == 1


def test_python_sandbox_takes_the_limits(sh):
    from layover import Sandbox
    with Sandbox(sh.project, state_dir=sh.lo.state, helper_env=sh.lo.env, on_exit="discard", max_pids=64,
                 max_memory="300M", timeout="10m") as sb:
        r = sb.run("import resource\nprint(resource.getrlimit(resource.RLIMIT_NPROC)[0], "
                   "resource.getrlimit(resource.RLIMIT_AS)[0] >> 20)")
        assert r.stdout == "64 300\n", r.error
