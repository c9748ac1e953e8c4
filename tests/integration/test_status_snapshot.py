"""Issue 20's status snapshot (SESSION/status-snapshot*, docs/design.md "Status
again: the ended session's snapshot"): a repeated status of an ended session
takes its changes from the snapshot when the write generation, the live
upper's dirs and the real side's keys all still hold, answers byte for byte
as the walk does, and gives the fresh answer after each thing that changes it."""
import os
import signal
import subprocess
import time

import pytest

from conftest import LAYOVER, proc_stat

SNAPS = ("status-snapshot", "status-snapshot-full")
SESSIONS = ("s1", "s2", "s3", "s4", "s5", "s6")


@pytest.fixture(autouse=True)
def discard_sessions(lo):
    yield
    for name in SESSIONS:
        if lo.session_dir(name).exists():
            lo("discard", name, "--now")


def run_ok(lo, cmd, session):
    r = lo.run(cmd, "--keep-empty", session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def out(lo, *args):
    r = lo("status", *args, "--no-pager")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout + b"\0" + r.stderr


def snap_ino(lo, name, full=False):
    p = lo.session_dir(name) / SNAPS[1 if full else 0]
    return os.stat(p).st_ino if p.exists() else None


def forget(lo, name):
    for f in SNAPS:
        (lo.session_dir(name) / f).unlink(missing_ok=True)


def walked(lo, name, *args):
    """What the walk answers now (no snapshot to take it from)."""
    forget(lo, name)
    return out(lo, name, *args)


def test_snapshot_answers_as_the_walk_and_each_change_is_seen(lo, home):
    token = "glpat-" + "aB3dE5gH7jK9mN1pQ2sT4"  # built here: no token-shaped literal in the source
    run_ok(lo, "touch docs/readme.txt && echo x > new.txt && echo more >> notes.txt && rm old/a.txt && "
               "mkdir -p fresh/sub && echo z > fresh/sub/z.txt && printf 'T=%s\\n' " + token + " > key.env",
           "s1")
    run_ok(lo, "echo x > fresh.txt", "s2")
    run_ok(lo, "echo x > s3.txt", "s3")
    run_ok(lo, "echo a > r1.txt", "s4")
    run_ok(lo, "echo a > v1.txt", "s5")
    run_ok(lo, "echo b > v2.txt", "s5")  # resumed: v1.txt is step 1 now
    run_ok(lo, "echo x > s6.txt", "s6")
    time.sleep(2.2)  # past the racy window: no key whose ctime is 2 s from the walk is trusted
    views = [(), ("--json",), ("--risk",), ("--", "fresh"), ("--json", "--", "key.env", "old")]
    for args in views:
        first = out(lo, "s1", *args)  # the walk, which writes the snapshot
        full = "--json" in args
        ino = snap_ino(lo, "s1", full)
        assert ino is not None
        assert os.stat(lo.session_dir("s1") / SNAPS[1 if full else 0]).st_mode & 0o777 == 0o600
        assert out(lo, "s1", *args) == first  # from the snapshot: byte for byte
        assert snap_ino(lo, "s1", full) == ino  # used, not written again
    assert b"secret: GitLab token" in out(lo, "s1", "--risk")  # a file with a risk is read again
    for name in SESSIONS:
        out(lo, name)  # each one's snapshot
        assert snap_ino(lo, name) is not None, name

    # A real file rewritten with its size and mtime put back: now differs from its copy.
    real = home / "docs" / "readme.txt"
    st = os.stat(real)
    real.write_text("HELLO\nworld\n")
    os.utime(real, ns=(st.st_atime_ns, st.st_mtime_ns))
    got = out(lo, "s1")
    assert b"M  docs/readme.txt" in got
    assert got == walked(lo, "s1")
    # A real file made where the session added one.
    (home / "fresh.txt").write_text("y\n")
    got = out(lo, "s2")
    assert b"M  fresh.txt" in got and got == walked(lo, "s2")
    # A file added by hand in the upper layer's dir.
    (lo.upper("s3") / "hand.txt").write_text("h\n")
    got = out(lo, "s3")
    assert b"A  hand.txt" in got and got == walked(lo, "s3")
    # A resumed run (its lock bumps the generation before it writes).
    gen = os.getxattr(lo.session_dir("s4"), "user.layover.gen")
    run_ok(lo, "echo b > r2.txt", "s4")
    assert int(os.getxattr(lo.session_dir("s4"), "user.layover.gen")) > int(gen)
    got = out(lo, "s4")
    assert b"A  r2.txt" in got and got == walked(lo, "s4")
    # A revert of step 1.
    r = lo("revert", "s5", "1")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    got = out(lo, "s5")
    assert b"v1.txt" not in got and b"A  v2.txt" in got and got == walked(lo, "s5")
    assert not (home / "v1.txt").exists()


def test_a_writer_between_the_walk_and_the_snapshot_keeps_it_unwritten(lo, home):
    run_ok(lo, "echo x > s6.txt", "s6")
    time.sleep(2.2)
    d = lo.session_dir("s6")
    # A generation bumped by hand: the snapshot of an older one is not taken.
    out(lo, "s6")
    ino = snap_ino(lo, "s6")
    assert ino is not None and out(lo, "s6") and snap_ino(lo, "s6") == ino
    os.setxattr(d, "user.layover.gen", str(int(os.getxattr(d, "user.layover.gen")) + 5).encode())
    assert b"A  s6.txt" in out(lo, "s6")
    assert snap_ino(lo, "s6") not in (None, ino)  # walked, and written again
    forget(lo, "s6")
    env = dict(lo.env, LAYOVER_FAULT="status:walked:1:stop")
    p = subprocess.Popen([LAYOVER, "status", "s6", "--no-pager"], env=env, cwd=str(home), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        for _ in range(500):  # stopped after its walk
            if proc_stat(p.pid)[0] == "T":
                break
            time.sleep(0.01)
        else:
            pytest.fail("status never reached its fault point")
        gen = int(os.getxattr(d, "user.layover.gen"))
        os.setxattr(d, "user.layover.gen", str(gen + 1).encode())  # a writer came meanwhile
        (lo.upper("s6") / "late.txt").write_text("l\n")
    finally:
        p.send_signal(signal.SIGCONT)
    o, e = p.communicate(timeout=30)
    assert p.returncode == 0, e.decode(errors="replace")
    assert b"late.txt" not in o  # walked before it came
    assert not (d / SNAPS[0]).exists()  # and so not kept
    assert b"A  late.txt" in out(lo, "s6")


def test_a_session_dir_its_owner_made_read_only_is_named_with_the_chmod_that_fixes_it(lo, home):
    # Its write generation cannot be bumped there (EACCES): the error said
    # "free space on the state dir's file system", which was no fix.
    run_ok(lo, "echo x > s6.txt", "s6")
    d = lo.session_dir("s6")
    os.chmod(d, 0o500)
    try:
        r = lo("discard", "s6", "--now")
        err = r.stderr.decode(errors="replace")
        assert r.returncode == 1 and "chmod u+w " + str(d) in err and "free space" not in err, err
        assert d.exists()
    finally:
        os.chmod(d, 0o700)


def _varint(data, at):
    n = shift = 0
    while True:
        b = data[at]
        at += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return n, at


def _v1_snapshot(gen, inputs, path):
    """A snapshot in the first format (8-byte fields), listing one added file `path` and no keys to check."""
    u64 = lambda v: v.to_bytes(8, "little")  # noqa: E731
    s = lambda b: u64(len(b)) + b  # noqa: E731
    change = (s(path) + bytes([0, 1]) + u64(2) + u64(0o644) + bytes([0]) + u64(0) + s(b"") + bytes([1]) + u64(0) +
              u64(0) + bytes([0]) + u64(0) + u64(0) + bytes([0, 0]))
    return (b"layover-status-snapshot 1 risks 1\n" + u64(gen) + s(inputs) + u64(0) + u64(0) + u64(1) + change +
            u64(0) + u64(0))


def test_a_snapshot_of_the_first_format_is_ignored_and_written_again(lo, home):
    # Version 2 stores its numbers as varints: a version 1 file (8-byte fields)
    # with this session's generation and inputs, which version 1 would have
    # taken as it is, lists nothing here and is replaced by the walk's.
    run_ok(lo, "echo x > s1.txt && echo more >> notes.txt", "s1")
    time.sleep(2.2)  # past the racy window, as above
    want = walked(lo, "s1")
    snap = lo.session_dir("s1") / SNAPS[0]
    data = snap.read_bytes()
    magic = b"layover-status-snapshot 2 risks 1\n"
    assert data.startswith(magic)
    gen, at = _varint(data, len(magic))
    n, at = _varint(data, at)
    inputs = data[at:at + n]
    assert inputs.startswith(b"0.") and b"|home:" in inputs
    for old in (_v1_snapshot(gen, inputs, b"bogus.txt"),
                magic + _v1_snapshot(gen, inputs, b"bogus.txt")[len(magic):]):  # that body under this magic
        snap.write_bytes(old)
        got = out(lo, "s1")
        assert got == want
        assert b"bogus" not in got
        again = snap.read_bytes()
        assert again.startswith(magic) and b"bogus" not in again
        assert out(lo, "s1") == want
