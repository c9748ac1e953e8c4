"""A rename worker that dies mid-copy (killed, the OOM killer, --max-memory,
its supervisor SIGKILLed) leaves its temporary dir in the session's upper
layer. It is named with a tag of a per-session key kept outside the sandbox
(helper/store/records/rename_temps.h) and swept before any review: at the run's end,
or by the next status, save or resume of a killed supervisor's session. A dir
the agent names `.layover-rename-...` itself is its own and stays."""
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from conftest import LAYOVER, kill9_and_reap
from test_attack20 import _rename_worker_of, _slow_to_copy_dir

TEMP = re.compile(r"\.layover-rename-[0-9a-f]+-[0-9a-f]{16}$")


def _temps(root):
    """Every dir under root named as the worker names its copies."""
    found = []
    for dirpath, dirnames, _ in os.walk(root):
        found += [os.path.join(dirpath, d) for d in dirnames if TEMP.match(d)]
    return found


def _start_slow_move(lo, session):
    """A run whose command makes its own `.layover-rename-*` dirs (one named
    as a worker's could be, with a made-up tag), then moves a real dir of
    6,000 files: the worker copies it, slowly enough to be caught mid-way."""
    _slow_to_copy_dir(lo)
    script = ("cd '%s' && mkdir -p .layover-rename-7 sub/.layover-rename-1-0123456789abcdef && "
              "echo mine > .layover-rename-7/keep.txt && echo mine > sub/.layover-rename-1-0123456789abcdef/k && "
              "python3 -c 'import os\n"
              "try: os.rename(\"many\", \"many2\"); print(\"dir 0\", flush=True)\n"
              "except OSError as e: print(\"dir\", e.errno, flush=True)\n"
              "'" % lo.target)
    args = [LAYOVER, "run", "--target", str(lo.target), "--session", session, "--on-exit", "keep", "--",
            "/bin/sh", "-c", script]
    return subprocess.Popen(args, env=lo.env, cwd=str(lo.target), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_copy(p, up):
    """The worker's temporary dir, once it holds part of the copy."""
    deadline = time.time() + 60
    while p.poll() is None and time.time() < deadline:
        found = _temps(up)
        if found and len(os.listdir(found[0])) > 10:
            return found[0]
        time.sleep(0.005)
    raise AssertionError("no temporary copy seen in %s" % up)


def _kill_supervisor_mid_copy(lo, session):
    """The slow move's supervisor SIGKILLed while its worker copies; its
    worker then gone too (PDEATHSIG). The leftover temporary dir."""
    p = _start_slow_move(lo, session)
    try:
        temp = _wait_for_copy(p, lo.upper(session))
        worker = _rename_worker_of(p.pid)
    finally:
        kill9_and_reap(p)
    deadline = time.time() + 30
    while worker and os.path.exists("/proc/%d" % worker) and time.time() < deadline:
        time.sleep(0.01)
    assert os.path.exists(temp)  # left by the kill: the key says whose it is
    return temp


def _assert_agents_own_kept(lo, name):
    up = lo.upper(name)
    assert (up / ".layover-rename-7" / "keep.txt").read_text() == "mine\n"
    assert (up / "sub" / ".layover-rename-1-0123456789abcdef" / "k").read_text() == "mine\n"


def _assert_review_clean(lo, name):
    st = lo("status", name, check=True).stdout.decode()
    assert ".layover-rename-7" in st  # the agent's own, listed
    assert not [ln for ln in st.splitlines() if re.search(r"\.layover-rename-[0-9a-f]+-[0-9a-f]{16}(/|$)", ln)
                and "0123456789abcdef" not in ln], st
    out = Path(lo.state).parent / (name + ".tar.zst")
    lo("save", name, "-o", out, check=True)
    patch = subprocess.run(["tar", "--zstd", "-tf", str(out)], capture_output=True, check=True).stdout.decode()
    hits = set(re.findall(r"\.layover-rename-[0-9a-f]+-[0-9a-f]{16}", patch))
    assert hits <= {".layover-rename-1-0123456789abcdef"}, hits
    assert ".layover-rename-7/keep.txt" in patch


def test_a_worker_killed_mid_copy_leaves_nothing_for_the_review(lo):
    p = _start_slow_move(lo, "wkill")
    up = lo.upper("wkill")
    try:
        temp = _wait_for_copy(p, up)
        worker = _rename_worker_of(p.pid)
        assert worker, "no rename worker found under the supervisor %d" % p.pid
        os.kill(worker, signal.SIGKILL)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    assert out.decode().split() == ["dir", "18"], (out, err)  # EXDEV
    assert not os.path.exists(temp)
    assert [os.path.basename(t) for t in _temps(up)] == [".layover-rename-1-0123456789abcdef"]  # the agent's
    assert not (lo.session_dir("wkill") / "rename-temps").exists()  # swept whole: the key goes
    _assert_agents_own_kept(lo, "wkill")
    _assert_review_clean(lo, "wkill")


def test_a_killed_supervisors_leftover_never_reaches_status_save_or_resume(lo):
    temp = _kill_supervisor_mid_copy(lo, "skill")
    assert (lo.session_dir("skill") / "rename-temps").exists()
    _assert_review_clean(lo, "skill")
    assert not os.path.exists(temp)  # status swept it
    _assert_agents_own_kept(lo, "skill")
    r = lo.run("ls -a; ls -a sub", session="skill", timeout=60)
    assert r.returncode == 0, r.stderr
    assert [n for n in r.stdout.decode().split() if TEMP.match(n)] == [".layover-rename-1-0123456789abcdef"], r.stdout
    # nowhere in the session (its layers, the step the resume froze): only the agent's own
    assert {os.path.basename(t) for t in _temps(lo.session_dir("skill"))} == {".layover-rename-1-0123456789abcdef"}


def test_a_leftover_of_a_killed_supervisor_is_swept_by_resume_before_the_freeze(lo):
    temp = _kill_supervisor_mid_copy(lo, "rkill")
    r = lo.run("true", session="rkill", timeout=60)  # resumed first: no status in between
    assert r.returncode == 0, r.stderr
    names = [os.path.basename(t) for t in _temps(lo.session_dir("rkill"))]
    assert set(names) <= {".layover-rename-1-0123456789abcdef"}, names
    assert not (lo.session_dir("rkill") / "rename-temps").exists()
    _assert_review_clean(lo, "rkill")
