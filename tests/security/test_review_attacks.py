"""Attacks on the day's changes (start-up's remover, the mount namespace fd,
the layer index), each checked on the real filesystem afterwards."""
import os
import signal
import subprocess
import time

from conftest import LAYOVER

FDS = "for f in /proc/self/fd/*; do echo ${f##*/}; done"


def _fds(lo, *extra):
    r = subprocess.run([LAYOVER, "run", "--target", lo.target, *extra, "--", "/bin/sh", "-c", FDS],
                       capture_output=True, env=lo.env, stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 0, r.stderr
    return sorted(int(x) for x in r.stdout.split())


def test_no_fd_crosses_in_any_exit_mode_or_network(lo):
    # 3 is the glob's own dir fd; the mount namespace fd [sync 7], the
    # network namespace fd and the remover's socket never cross.
    for extra in (["--on-exit", "discard"], ["--on-exit", "discard", "--network", "none"],
                  ["--on-exit", "discard", "--network", "host"], ["--on-exit", "keep", "--session", "fdk"]):
        assert _fds(lo, *extra) == [0, 1, 2, 3], extra


def test_discard_of_a_session_another_run_holds_removes_nothing(lo):
    hold = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--session", "held", "--on-exit", "keep",
                             "--", "/bin/sh", "-c", "echo kept > kept.txt; echo up; exec sleep 30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=lo.env, stdin=subprocess.DEVNULL)
    try:
        assert hold.stdout.readline() == b"up\n"
        r = lo("run", "--target", lo.target, "--session", "held", "--on-exit", "discard", "--", "/bin/true")
        assert r.returncode != 0
        assert (lo.upper("held") / "kept.txt").read_text() == "kept\n"
    finally:
        hold.send_signal(signal.SIGKILL)
        hold.wait(timeout=10)
    # The killed holder's session stays (crashed), and nothing removes it later.
    time.sleep(0.2)
    assert (lo.upper("held") / "kept.txt").read_text() == "kept\n"
    deleting = lo.session_dir("held").parent.parent / "deleting"
    assert not deleting.exists() or not any(p.name.startswith("held") for p in deleting.iterdir())


def test_killed_discarding_run_leaves_no_remover_and_no_sandbox(lo):
    p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--session", "kd", "--on-exit", "discard",
                          "--", "/bin/sh", "-c", "echo up; exec sleep 29.71"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=lo.env, stdin=subprocess.DEVNULL)
    assert p.stdout.readline() == b"up\n"
    # run's own children (its remover, the sandbox's PID 1): other tests that
    # run beside this one, as the same uid, have removers of their own.
    ours = [int(x) for x in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True).stdout.split()]
    assert ours, "run has no child while its command runs"
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=10)

    def alive(pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().rpartition(")")[2].split()[0] != "Z"
        except OSError:
            return False

    # A deadline a loaded machine meets (the sandbox's end took 0.3 s with the
    # tests starved, in test_sandbox_core): what is checked is that nothing
    # is left, not how fast it goes.
    deadline = time.time() + 20
    left = None
    while time.time() < deadline:
        left = [pid for pid in ours if alive(pid)]
        left += subprocess.run(["pgrep", "-u", str(os.getuid()), "-f", "sleep 29.71"],
                               capture_output=True).stdout.split()
        if not left:
            break
        time.sleep(0.05)
    assert not left, left
    # A run killed before its discard keeps the session (crashed), never removed.
    assert lo.session_dir("kd").exists()


def _deletion(b, path, base):
    """A `deleted` change with its DIR/.wh.NAME member, as save writes one."""
    import tarfile
    b._change(path, "deleted", None, 0, old=(base["type"], base["mode"]), base=dict(base))
    parent, _, name = path.rpartition("/")
    info = tarfile.TarInfo((parent + "/" if parent else "") + ".wh." + name)
    info.type, info.mode, info.mtime = tarfile.REGTYPE, 0o644, 1700000000
    b.members.append((info, b""))
    return b


def test_a_patch_deleting_through_a_symlink_or_dotdot_deletes_nothing_outside(lo, tmp_path):
    from conftest import real_dir
    from patch_builder import PatchBuilder, real_base
    outside = real_dir("outside-")
    victim = outside / "victim"
    victim.write_text("keep me\n")
    t = lo.target
    (t / "out").symlink_to(outside)  # the user's own symlink to a dir elsewhere
    (t / "mine").write_text("mine\n")
    base = real_base(victim)
    cases = {
        "through-real-link": _deletion(PatchBuilder(t), "out/victim", base),
        "through-new-link": _deletion(PatchBuilder(t).symlink("l", str(outside)), "l/victim", base),
        "dotdot": _deletion(PatchBuilder(t), "../" + outside.name + "/victim", base),
        "absolute": _deletion(PatchBuilder(t), str(victim).lstrip("/"), base),
    }
    for name, b in cases.items():
        patch = b.write(tmp_path / (name + ".tar.zst"))
        r = lo("apply", patch, "--target", t, "--yes", "--force")
        assert victim.read_text() == "keep me\n", (name, r.stderr)
        assert r.returncode == 1, (name, r.stderr)  # refused: a conflict even with --force, or invalid
    assert (t / "mine").read_text() == "mine\n"
