"""Ways out of the sandbox a hostile agent tries, each checked on the real
filesystem and the host's processes afterwards (issue 14)."""
import os
import subprocess

import pytest

from conftest import LAYOVER


@pytest.fixture
def victim(sh):
    """A file outside the target on a real path (not the private /tmp)."""
    out = sh.root / "outside"
    out.mkdir()
    (out / "victim.txt").write_text("precious\n")
    return out


def test_leaked_fd_to_the_real_target_never_reaches_the_command(sh):
    # The caller leaks an fd to the real target without CLOEXEC: inside,
    # nothing can write through it, since only fds 0-2 (and the IPC socket)
    # cross.
    fd = os.open(sh.project, os.O_RDONLY | os.O_DIRECTORY)
    os.set_inheritable(fd, True)
    try:
        code = ("import os\nfor n in range(3, 64):\n try:\n"
                "  f=os.open('pwned', os.O_WRONLY|os.O_CREAT, 0o644, dir_fd=n); print('WROTE', n)\n"
                " except OSError: pass\nprint(sorted(int(x) for x in os.listdir('/proc/self/fd')))")
        r = subprocess.run([LAYOVER, "run", "--target", str(sh.project), "--on-exit", "discard", "--",
                            "/usr/bin/python3", "-c", code], pass_fds=(fd,), capture_output=True,
                           env=sh.lo.env, stdin=subprocess.DEVNULL, timeout=60, cwd=str(sh.project))
    finally:
        os.close(fd)
    assert r.returncode == 0, r.stderr
    assert b"WROTE" not in r.stdout
    assert r.stdout.strip().endswith(b"[0, 1, 2, 3]"), r.stdout  # 3: listdir's own fd
    assert not (sh.project / "pwned").exists()


def test_proc_root_cwd_and_fd_of_processes_outside_are_unreachable(sh):
    outside = subprocess.Popen(["sleep", "3076"], cwd=str(sh.home))
    try:
        cmd = ("for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done;"
               "ls /proc/*/cwd/.ssh /proc/*/root%s/.ssh 2>/dev/null | grep -c id_ed25519" % sh.home)
        r = sh.run(cmd, target=sh.project, on_exit="discard")
        assert b"3076" not in r.stdout  # the host's sleep is not in our /proc
        assert b"pytest" not in r.stdout
        assert r.stdout.strip().splitlines()[-1] == b"0"
    finally:
        outside.kill()
        outside.wait()


def test_symlink_out_of_the_target_is_applied_as_a_link_never_followed(sh, victim):
    r = sh.run("ln -s %s/victim.txt evil; echo owned > evil; echo rc=$?" % victim, target=sh.project,
               session="sym", cwd=sh.project)
    assert b"rc=0" not in r.stdout  # the link's far end is read-only
    sh.lo("apply", "sym", "--yes", check=True)
    assert os.readlink(sh.project / "evil") == str(victim / "victim.txt")
    assert (victim / "victim.txt").read_text() == "precious\n"


def test_hardlink_to_a_file_outside_the_target_fails_and_changes_nothing(sh, victim):
    r = sh.run("ln %s/victim.txt hl; echo rc=$?" % victim, target=sh.project, session="hl", cwd=sh.project)
    assert b"rc=0" not in r.stdout
    st = sh.lo("status", "hl", "--json", check=True)
    assert b"hl" not in st.stdout
    assert (victim / "victim.txt").read_text() == "precious\n"
    assert os.stat(victim / "victim.txt").st_nlink == 1


@pytest.mark.parametrize("home_mode", ["scratch", "ro"])
def test_writes_to_etc_the_parent_and_the_state_dir_never_land(sh, home_mode):
    state = sh.lo.state
    cmd = ("for f in /etc/layover-pwned %s/pwned %s/pwned %s/sessions/pwned; do "
           "echo x > $f 2>/dev/null && echo WROTE $f; done; ls -A %s 2>/dev/null | wc -l"
           % (sh.root, sh.home, state, state))
    r = sh.run(cmd, "--home", home_mode, target=sh.project, on_exit="discard")
    wrote = [l.split()[1] for l in r.stdout.decode().splitlines() if l.startswith("WROTE")]
    # The home (the target's parent here) is writable only through its scratch
    # layer by default; everything else, and the home under --home ro, refuses.
    assert wrote == ([str(sh.home / "pwned")] if home_mode == "scratch" else []), r.stdout
    assert r.stdout.strip().splitlines()[-1] == b"0"  # the state dir shows nothing
    assert not os.path.exists("/etc/layover-pwned")
    assert not (sh.root / "pwned").exists() and not (sh.home / "pwned").exists()
    assert not (state / "sessions" / "pwned").exists()


def test_dev_shm_and_tmp_are_private(sh):
    mark = "layover-shm-%d" % os.getpid()
    r = sh.run("echo x > /dev/shm/%s && echo x > /tmp/%s && echo x > /var/tmp/%s && echo ok" % ((mark,) * 3),
               target=sh.project, on_exit="discard")
    assert r.stdout == b"ok\n", r.stderr
    for d in ("/dev/shm", "/tmp", "/var/tmp"):
        assert not os.path.exists(os.path.join(d, mark)), d


def test_forged_whiteout_device_cannot_be_made(sh):
    r = sh.run("mknod .wh.main.py c 0 0; echo mknod=$?; mknod main.py c 0 0; echo mk2=$?;"
               "python3 -c \"import os; os.mknod('x', 0o20644, os.makedev(0, 0))\"; echo py=$?",
               target=sh.project, session="wh", cwd=sh.project)
    assert b"mknod=0" not in r.stdout and b"mk2=0" not in r.stdout and b"py=0" not in r.stdout
    sh.lo("apply", "wh", "--yes", check=True)
    assert (sh.project / "main.py").read_text() == "print('hi')\n"


def test_forged_overlay_xattrs_change_nothing_on_the_real_tree(sh):
    (sh.project / "keep").mkdir()
    (sh.project / "keep" / "data").write_text("data\n")
    r = sh.run("for a in user.overlay.opaque user.overlay.redirect user.overlay.whiteout; do "
               "setfattr -n $a -v y keep 2>/dev/null && echo SET $a; done;"
               "setfattr -n user.overlay.origin -v x main.py 2>/dev/null && echo SET origin; ls keep",
               target=sh.project, session="xa", cwd=sh.project)
    # overlayfs escapes them (user.overlay.overlay.* in the upper layer):
    # the dir is not made opaque, nothing is redirected.
    assert r.stdout.strip().endswith(b"data"), r.stdout
    before = {p.name: p.read_bytes() for p in sh.project.iterdir() if p.is_file()}
    a = sh.lo("apply", "xa", "--yes")
    # apply refuses to carry an overlay marker onto the real tree, whole.
    assert a.returncode == 1 and b"user.overlay." in a.stderr and b"nothing was applied" in a.stderr
    assert {p.name: p.read_bytes() for p in sh.project.iterdir() if p.is_file()} == before
    assert (sh.project / "keep" / "data").read_text() == "data\n"
    out = subprocess.run(["getfattr", "-d", "-m", "-", str(sh.project / "keep")], capture_output=True)
    assert b"overlay" not in out.stdout


def test_kill_minus_one_spares_host_processes_and_kills_its_own(sh):
    outside = subprocess.Popen(["sleep", "3077"])
    try:
        r = sh.run("sleep 3078 & sleep 0.2; kill -9 -1; echo survived", target=sh.project, on_exit="discard")
        assert r.stdout == b"survived\n", r.stderr
        assert outside.poll() is None
        # The sandboxed sleep itself ("^"): a discarding run returns before
        # layover's own setup process (its argv holds the same words) has
        # finished tearing the namespaces down (issue 20, [sync 6]).
        alive = subprocess.run(["pgrep", "-f", "^sleep 3078"], capture_output=True)
        assert alive.stdout == b""
    finally:
        outside.kill()
        outside.wait()
