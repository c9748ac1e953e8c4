"""The sandbox core (issue 5): writes stay in the upper layer, the overlay is
locked, the child is unprivileged and isolated. Runs the real binary as an
unprivileged user and checks the real filesystem afterwards."""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAYOVER, snapshot, without_sanitizer_notes


def test_writes_land_in_upper_and_real_tree_is_untouched(lo, home):
    before = snapshot(home)
    r = lo.run("echo changed > notes.txt && echo new > added.txt && rm docs/readme.txt && rm -rf old "
               "&& cat notes.txt && test ! -e old", session="w")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"changed\n"
    assert snapshot(home) == before
    up = lo.upper("w")
    assert (up / "notes.txt").read_text() == "changed\n"
    assert (up / "added.txt").read_text() == "new\n"
    # deletions are whiteouts (char device 0/0) in the upper layer
    for gone in ("docs/readme.txt", "old"):
        st = os.lstat(up / gone)
        assert (st.st_mode & 0o170000) == 0o020000 and st.st_rdev == 0, gone


def test_overlay_is_locked_against_umount_and_remount(lo, home):
    t = str(home)
    script = (
        "umount -l %s 2>/dev/null && echo UMOUNT-OK; "
        "mount -o remount,rw / 2>/dev/null && echo REMOUNT-OK; "
        "unshare -rm sh -c 'umount %s' 2>/dev/null && echo NESTED-UMOUNT-OK; "
        "echo after > after.txt; cat after.txt" % (t, t))
    r = lo.run(script, session="lock")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"after\n", r.stdout
    assert not (home / "after.txt").exists()
    assert (lo.upper("lock") / "after.txt").read_text() == "after\n"


def test_child_has_no_capabilities_and_no_new_privs(lo):
    r = lo.run("grep -E '^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status", check=True)
    fields = dict(line.split(":\t") for line in r.stdout.decode().splitlines())
    assert int(fields["CapEff"], 16) == 0
    assert int(fields["CapPrm"], 16) == 0
    assert int(fields["CapBnd"], 16) == 0
    assert fields["NoNewPrivs"].strip() == "1"


def test_writes_outside_target_fail_or_stay_private(lo, home, tmp_path):
    victim = home.parent / "outside.txt"
    r = lo.run("echo x > /etc/layover-x 2>/dev/null && echo ETC-OK; "
               "echo x > %s 2>/dev/null; echo x > /tmp/inside-tmp && cat /tmp/inside-tmp; "
               "echo x > /var/tmp/vt && echo x > /dev/shm/shm && echo PRIVATE-OK" % victim)
    assert r.returncode == 0, r.stderr
    assert b"ETC-OK" not in r.stdout
    assert b"x\nPRIVATE-OK" in r.stdout
    assert not Path("/etc/layover-x").exists()
    assert not victim.exists()  # the target's parent is under /tmp: private tmpfs, never the host
    assert not Path("/tmp/inside-tmp").exists()
    assert not Path("/var/tmp/vt").exists()
    assert not Path("/dev/shm/shm").exists()


def test_outside_read_only_when_target_not_under_tmp(require_sandbox, state_dir):
    # A target outside /tmp: its parent must be read-only (EROFS), not private.
    if not os.environ.get("LAYOVER_TEST_NONTMP"):
        pytest.fail("LAYOVER_TEST_NONTMP (a dir outside /tmp) is not set: run through tests/run_all.sh")
    base = Path(os.environ["LAYOVER_TEST_NONTMP"]) / ("ro-%d" % os.getpid())
    target = base / "t"
    target.mkdir(parents=True)
    try:
        env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
        r = subprocess.run([LAYOVER, "run", "--target", str(target), "--on-exit", "discard", "--",
                            "/bin/sh", "-c", "echo x > ../sibling; echo rc=$?"],
                           capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=60,
                           cwd=str(target))
        assert r.returncode == 0, r.stderr
        assert r.stdout != b"rc=0\n"
        assert b"Read-only file system" in r.stderr
        assert not (base / "sibling").exists()
    finally:
        subprocess.run(["rm", "-rf", str(base)])


def test_dev_is_minimal_and_host_ptys_unreachable(lo):
    master, slave = os.openpty()
    try:
        n = os.ttyname(slave).rsplit("/", 1)[1]
        r = lo.run("ls /dev; echo ---; ls /dev/pts; echo ---; (echo hi > /dev/pts/%s) 2>/dev/null && echo WROTE; true" % n)
        assert r.returncode == 0, r.stderr
        devs, pts, rest = r.stdout.decode().split("---\n")
        assert set(devs.split()) == {"fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin",
                                     "stdout", "tty", "urandom", "zero"}
        assert pts.split() == ["ptmx"]
        assert "WROTE" not in rest
        os.set_blocking(master, False)
        with pytest.raises(BlockingIOError):
            os.read(master, 100)
    finally:
        os.close(master)
        os.close(slave)


def test_proc_shows_only_sandbox_pids_and_state_is_hidden(lo, state_dir):
    r = lo.run("ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '; echo; "
               "ls %s 2>&1 | head -1; ls /proc/self/fd | sort -n | tr '\\n' ' '" % state_dir, session="p")
    assert r.returncode == 0, r.stderr
    pids, state_line, fds = r.stdout.decode().split("\n", 2)
    nums = [int(p) for p in pids.split()]
    assert max(nums) < 50 and 1 in nums, pids  # a fresh PID namespace: init is 1
    assert os.getpid() not in nums or os.getpid() < 50
    assert "sessions" not in state_line
    # ls itself opens one dir fd; nothing else beyond 0-2 crosses in
    assert [int(f) for f in fds.split()] == [0, 1, 2, 3]


def test_no_fd_leaks_into_the_command(lo):
    r = subprocess.run([LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
                        "for f in /proc/self/fd/*; do echo ${f##*/}; done"],
                       capture_output=True, env=lo.env, stdin=subprocess.DEVNULL, pass_fds=(), timeout=60)
    assert r.returncode == 0, r.stderr
    fds = sorted(int(x) for x in r.stdout.split())
    assert fds == [0, 1, 2, 3], fds  # 3 is the glob's own directory fd


def test_exit_status_is_passed_on(lo):
    assert lo.run("exit 7").returncode == 7
    assert lo.run("kill -TERM $$").returncode == 128 + signal.SIGTERM
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", "no-such-command-xyz")
    assert r.returncode == 127 and b"command not found" in r.stderr
    # A file that is not executable (a directory is refused before the start, exit 125: test_newuser9.py).
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", "/etc/passwd")
    assert r.returncode == 126


def test_init_stays_non_dumpable_and_child_errors_stay_one_line(lo):
    # The command's process shares init's memory until its exec (helper/sandbox/setup/init.cc,
    # start_child) and makes it dumpable for its uid_map write: init must be
    # non-dumpable again, its /proc files root's (unmapped inside), not ours.
    # init (setup that was) holds clones of the real target for checkpoints:
    # its fds stay closed to the command.
    r = lo.run("id -u; stat -c %u /proc/1/environ /proc/1/mem; cat /proc/1/environ >/dev/null 2>&1 || echo denied;"
               " ls /proc/1/fd >/dev/null 2>&1 || echo fds-denied", on_exit="discard")
    me, environ_owner, mem_owner, denied, fds_denied = r.stdout.decode().split()
    assert r.returncode == 0 and denied == "denied" and fds_denied == "fds-denied", r.stdout
    assert environ_owner == mem_owner == "65534" != me
    # A child that fails before or at exec: one line, the right code, and
    # init (suspended until then) goes on to report it.
    for cmd, code in (("no-such-command-xyz", 127), ("/etc/passwd", 126)):
        r = lo("run", "--quiet", "--target", lo.target, "--on-exit", "discard", "--", cmd)
        lines = without_sanitizer_notes(r.stderr).decode().splitlines()
        assert r.returncode == code and len(lines) == 1 and lines[0].startswith("layover: "), (code, r.stderr)
    assert lo.run("exit 5", on_exit="discard").returncode == 5


def test_closed_stdin_is_reopened_on_dev_null(lo):
    r = subprocess.run([LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
                        "cat; echo rc=$?"], capture_output=True, env=lo.env, stdin=subprocess.DEVNULL, timeout=60)
    assert r.stdout == b"rc=0\n"


def test_sessions_resume_and_accumulate(lo, home):
    assert lo.run("echo one > first.txt", session="acc").returncode == 0
    r = lo.run("cat first.txt && echo two > second.txt", session="acc")
    assert r.returncode == 0 and r.stdout == b"one\n"
    # The first run's layer was frozen as step 1 (docs/history.md); the second wrote a fresh upper.
    up, step1 = lo.upper("acc"), lo.session_dir("acc") / "steps" / "0001"
    assert (step1 / "first.txt").read_text() == "one\n" and (up / "second.txt").read_text() == "two\n"
    assert not (up / "first.txt").exists()
    assert not (home / "first.txt").exists()
    # a fresh workdir per mount: the volatile marker never blocks a resume
    assert lo.run("true", session="acc").returncode == 0


def test_session_dir_holds_meta_and_lists(lo, home):
    lo.run("echo a > a", session="listed", check=True)
    r = lo("sessions", "--json", check=True)
    items = json.loads(r.stdout)
    s = [i for i in items if i["name"] == "listed"][0]
    assert s["status"] == "kept" and s["target"] == str(home) and s["upper_bytes"] > 0
    meta = json.loads((lo.session_dir("listed") / "meta.json").read_text())
    assert meta["command"] == ["/bin/sh", "-c", "echo a > a"] and meta["exit_code"] == 0
    human = lo("sessions", check=True).stdout.decode()
    assert "listed" in human and "kept" in human


def test_discard_removes_mode_000_leftovers(lo):
    r = lo.run("mkdir -p d/e && echo x > d/e/f && chmod 000 d/e d && echo y > g && chmod 000 g", session="z")
    assert r.returncode == 0, r.stderr
    assert lo.session_dir("z").exists()
    lo("discard", "z", "--now", check=True)
    assert not lo.session_dir("z").exists()
    assert not (Path(lo.state) / "trash" / "z").exists()  # --now: gone for good
    assert lo("discard", "z").returncode == 1


def test_discard_moves_the_session_to_the_trash_and_restore_brings_it_back(lo):
    assert lo.run("echo kept > k", session="t").returncode == 0
    r = lo("discard", "t")
    assert r.returncode == 0, r.stderr
    assert b"moved to the trash for 24 hours; 'layover restore t' brings it back" in r.stderr
    assert not lo.session_dir("t").exists()
    assert (Path(lo.state) / "trash" / "t" / "upper" / "k").read_text() == "kept\n"
    listed = json.loads(lo("sessions", "--trash", "--json", check=True).stdout)
    assert [s["name"] for s in listed] == ["t"]
    # A verb naming it says where it is and how to get it back (it said only
    # "no session named 't'; list them with 'layover sessions'", where it is not).
    r = lo("status", "t")
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: no session named 't': it is in the trash (discarded); 'layover restore t' brings it back\n"), r.stderr
    assert lo("restore", "t").returncode == 0
    assert (lo.session_dir("t") / "upper" / "k").read_text() == "kept\n"
    assert lo("discard", "t", "--now", "--rejected").returncode == 2  # one or the other


def test_on_exit_discard_drops_the_session(lo):
    assert lo.run("echo x > x", session="gone", on_exit="discard").returncode == 0
    assert not lo.session_dir("gone").exists()


def test_second_run_on_a_running_session_is_refused(lo):
    p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--session", "busy", "--", "/bin/sh", "-c",
                          "echo up; sleep 30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=lo.env, cwd=str(lo.target))
    try:
        assert p.stdout.readline() == b"up\n"
        r = lo.run("true", session="busy")
        assert r.returncode == 125 and b"is running" in r.stderr
        items = json.loads(lo("sessions", "--json").stdout)
        assert [i["status"] for i in items if i["name"] == "busy"] == ["running"]
    finally:
        p.kill()
        p.wait()


def _pids_with(marker):
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if marker.encode() in f.read():
                        found.append(int(d))
            except OSError:
                pass
    return found


def test_killed_supervisor_takes_the_sandbox_down_and_session_is_crashed(lo):
    p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--session", "crash", "--", "/bin/sh", "-c",
                          "echo kept > work.txt; sleep 3071 & setsid sleep 3072 & echo up; wait"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=lo.env, cwd=str(lo.target))
    assert p.stdout.readline() == b"up\n"
    deadline = time.time() + 30
    # Both seen in one look: a second look may meet `setsid` mid-exec, whose
    # cmdline reads empty for that moment (seen once in CI).
    both = False
    while not both and time.time() < deadline:
        both = bool(_pids_with("sleep\x003071")) and bool(_pids_with("sleep\x003072"))
        if not both:
            time.sleep(0.02)
    if not both:
        p.kill()  # not left running for the rest of the suite
        p.wait()
    assert both, "the sandbox's two sleeps never showed"
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    # Gone within a deadline a loaded machine meets (the namespace's end took
    # 0.3 s of the 1 s it had with the tests starved): what is checked is that
    # nothing outlives run, not how fast the kernel reaps it.
    t0 = time.time()
    while (_pids_with("sleep\x003071") or _pids_with("sleep\x003072")) and time.time() - t0 < 20:
        time.sleep(0.02)
    assert not _pids_with("sleep\x003071") and not _pids_with("sleep\x003072")
    items = json.loads(lo("sessions", "--json").stdout)
    assert [i["status"] for i in items if i["name"] == "crash"] == ["crashed"]
    assert (lo.upper("crash") / "work.txt").read_text() == "kept\n"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_reach_the_command(lo, sig):
    p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
                          "trap 'echo got-signal; exit 3' INT TERM; echo ready; while :; do sleep 0.05; done"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=lo.env, cwd=str(lo.target))
    assert p.stdout.readline() == b"ready\n"
    p.send_signal(sig)
    out, err = p.communicate(timeout=10)
    assert out == b"got-signal\n", err
    assert p.returncode == 3


def test_background_daemon_dies_with_the_session(lo):
    r = lo.run("setsid sh -c 'sleep 3073' </dev/null >/dev/null 2>&1 & sleep 0.2; echo started")
    assert r.stdout == b"started\n"
    end = time.monotonic() + 30  # killed by now, gone once the kernel reaps it (no sleep for that)
    while _pids_with("sleep\x003073") and time.monotonic() < end:
        time.sleep(0.05)
    assert not _pids_with("sleep\x003073")


def test_discard_returns_the_status_early_and_nothing_of_the_command_survives(lo):
    # Issue 20: a discarding run returns on init's status message, before the
    # namespaces' teardown; init killed everything left before sending it.
    r = lo.run("setsid sh -c 'sleep 3091' </dev/null >/dev/null 2>&1 & sleep 0.2; echo x > f; exit 7",
               on_exit="discard")
    assert r.returncode == 7, r.stderr
    assert b"background processes at exit" in r.stderr
    assert not _pids_with("sleep\x003091")  # init reaped it before sending the status
    assert not (Path(lo.target) / "f").exists()


def test_usage_errors_exit_125_with_a_clear_message(lo, tmp_path):
    r = lo("run", "--bogus-flag", "--", "true")
    assert r.returncode == 125 and b"unknown option '--bogus-flag'" in r.stderr
    r = lo("run", "--target", str(tmp_path / "missing"), "--", "true")
    assert r.returncode == 125 and b"does not exist" in r.stderr
    r = lo("run", "--session", "bad/name", "--", "true")
    assert r.returncode == 125 and b"invalid --session name" in r.stderr
    r = lo("run", "--session=-rf", "--", "true")  # a name that would read as an option later
    assert r.returncode == 125 and b"invalid --session name '-rf'" in r.stderr and b"not starting with -" in r.stderr
    r = lo("run", "--on-exit", "explode", "--", "true")
    assert r.returncode == 125 and b"unknown --on-exit mode" in r.stderr
    r = lo("sessions", "--nope")
    assert r.returncode == 2


def test_state_dir_inside_target_is_refused(require_sandbox, home):
    env = dict(os.environ, LAYOVER_STATE_DIR=str(home / "state"))
    (home / "state").mkdir(mode=0o700)
    r = subprocess.run([LAYOVER, "run", "--target", str(home), "--", "true"], capture_output=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 125 and b"overlaps the target" in r.stderr


def test_state_dir_symlink_is_refused(require_sandbox, home, tmp_path):
    real = tmp_path / "realstate"
    real.mkdir(mode=0o700)
    link = tmp_path / "linkstate"
    link.symlink_to(real)
    env = dict(os.environ, LAYOVER_STATE_DIR=str(link))
    r = subprocess.run([LAYOVER, "run", "--target", str(home), "--", "true"], capture_output=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 125 and b"not a real directory" in r.stderr


def test_cwd_is_kept_inside_the_target(lo, home):
    r = subprocess.run([LAYOVER, "run", "--target", str(home), "--on-exit", "discard", "--", "pwd"],
                       capture_output=True, env=lo.env, cwd=str(home / "docs"), stdin=subprocess.DEVNULL)
    assert r.stdout.decode().strip() == str(home / "docs")
    r = subprocess.run([LAYOVER, "run", "--target", str(home), "--on-exit", "discard", "--", "pwd"],
                       capture_output=True, env=lo.env, cwd="/usr/share", stdin=subprocess.DEVNULL)
    # Outside the target: the command starts at the target (issue 15; --cwd chooses).
    assert r.stdout.decode().strip() == str(home)


def test_network_none_reaches_no_host_listener(lo):
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    try:
        code = ("import socket,sys\ns=socket.socket()\ns.settimeout(2)\n"
                "try:\n s.connect(('127.0.0.1',%d)); print('CONNECTED')\nexcept OSError as e: print('refused')" % port)
        r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", "/usr/bin/python3", "-c", code)
        assert r.stdout == b"refused\n", r.stderr
        r = lo("run", "--target", lo.target, "--on-exit", "discard", "--network", "host", "--",
               "/usr/bin/python3", "-c", code)
        assert r.stdout == b"CONNECTED\n", r.stderr
    finally:
        srv.close()


def test_run_hides_host_daemon_sockets(lo):
    r = lo.run("ls -A /run | wc -l")
    assert r.stdout.strip() == b"0"


def test_ipc_fd_becomes_fd_3(lo):
    import socket
    a, b = socket.socketpair()
    try:
        p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--ipc-fd",
                              str(b.fileno()), "--", "/usr/bin/python3", "-c",
                              "import os,socket; s=socket.socket(fileno=int(os.environ['LAYOVER_IPC_FD'])); "
                              "s.sendall(b'hello from ' + os.environ['LAYOVER_IPC_FD'].encode())"],
                             pass_fds=(b.fileno(),), env=lo.env, stdin=subprocess.DEVNULL)
        b.close()
        a.settimeout(30)
        assert a.recv(100) == b"hello from 3"
        assert p.wait(timeout=30) == 0
    finally:
        a.close()


def test_kill_minus_one_inside_only_hits_the_sandbox(lo):
    """`kill -9 -1` inside reaches only the sandbox's PID namespace. Under a
    developer's own uid the test is wrapped in an outer user+pid namespace, so
    a broken sandbox could not take the developer's session down with it."""
    outside = subprocess.Popen(["sleep", "3074"])
    try:
        cmd = [LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
               "sleep 3075 & sleep 0.1; kill -9 -1; sleep 0.1; echo still-here; ps -e -o comm= > /tmp/ps; sort /tmp/ps | tr '\\n' ' '"]
        if not os.environ.get("LAYOVER_TEST_THROWAWAY"):
            cmd = ["unshare", "--user", "--map-current-user", "--pid", "--fork", "--kill-child", "--"] + cmd
        r = subprocess.run(cmd, capture_output=True, env=lo.env, cwd=lo.target, stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 0, r.stderr
        # kill(-1) spares the caller and PID 1: only they are left (ps alone
        # beside them: in a pipeline, its neighbours may not have exec'd yet)
        assert r.stdout.split(b"\n")[0] == b"still-here"
        assert r.stdout.split(b"\n")[1].split() == [b"layover-init", b"ps", b"sh"]
        assert outside.poll() is None  # the host's process survived
        assert not _pids_with("sleep\x003075")
    finally:
        outside.kill()
        outside.wait()


def test_sessions_warns_about_sessions_older_than_20_days(lo):
    lo.run("echo a > a", session="old", check=True)
    meta_path = lo.session_dir("old") / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["created_ns"] -= 21 * 86400 * 10**9
    meta_path.write_text(json.dumps(meta))
    r = lo("sessions", check=True)
    assert b"20+ days old" in r.stderr and b"tmpfiles" in r.stderr
    assert json.loads(lo("sessions", "--json").stdout)[0]["age_days"] == 21
    lo.run("echo b > b", session="young", check=True)
    meta_path.unlink()  # a session without metadata is not listed, and no longer warns
    r = lo("sessions", check=True)
    assert b"20+ days" not in r.stderr


def test_a_read_only_target_root_is_read_only_inside(lo, home):
    (home / "sub").mkdir()
    os.chmod(str(home), 0o555)
    try:
        script = ('touch "$LAYOVER_TARGET/x" 2>/dev/null && echo root-writable; '
                  'echo y > "$LAYOVER_TARGET/sub/y" && echo sub-ok; stat -c %a "$LAYOVER_TARGET"')
        r = lo.run(script, session="ro")
        assert r.returncode == 0, r.stderr
        assert r.stdout.decode().split() == ["sub-ok", "555"], r.stdout  # EACCES as outside
        assert lo.run(script, session="ro").stdout.decode().split() == ["sub-ok", "555"]  # resumed: still
        st = json.loads(lo("status", "ro", "--json", check=True).stdout)
        assert [c["path"] for c in st] == ["sub/y"]  # no mode change of the root
        assert not (home / "x").exists() and oct(home.stat().st_mode & 0o777) == "0o555"
    finally:
        os.chmod(str(home), 0o755)
