"""The rename interception (helper/sandbox/rename/rename_notify.h) as a hostile agent
would use it: to act outside its own view through the supervisor, or to race
the arguments between the supervisor's read and the worker's act. Every case
checks the real tree outside afterwards."""
import subprocess

import pytest

from conftest import LAYOVER, real_dir, snapshot

PRELUDE = """
import ctypes, errno, os, threading
libc = ctypes.CDLL(None, use_errno=True)
def renameat2(olddir, old, newdir, new, flags=0):
    rc = libc.renameat2(olddir, old, newdir, new, flags)
    return 0 if rc == 0 else ctypes.get_errno()
CWD = -100
"""


@pytest.fixture
def world(require_sandbox, state_dir):
    root = real_dir("renames-")
    proj = root / "proj"
    (proj / "src" / "pkg").mkdir(parents=True)
    (proj / "src" / "pkg" / "a.py").write_text("a\n")
    outside = root / "outside"
    (outside / "sub" / "deep").mkdir(parents=True)
    (outside / "sub" / "victim.txt").write_text("precious\n")
    (proj / "escape").symlink_to(outside)
    yield root, proj, outside
    subprocess.run(["rm", "-rf", str(root)])


def run(state, proj, code):
    import os
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state))
    return subprocess.run([LAYOVER, "run", "--target", str(proj), "--on-exit", "keep", "--session", "s", "--",
                           "python3", "-c", PRELUDE + code], capture_output=True, env=env, cwd=str(proj),
                          stdin=subprocess.DEVNULL, timeout=300)


def test_dirfds_outside_the_target_move_nothing_out_or_in(world, state_dir):
    root, proj, outside = world
    before = snapshot(outside)
    r = run(state_dir, proj, """
out = os.open(%r, os.O_RDONLY | os.O_DIRECTORY)
res = [renameat2(out, b"sub", CWD, b"stolen"),        # out of the read-only host view into the overlay
       renameat2(CWD, b"src", out, b"planted"),        # from the overlay onto the host
       renameat2(out, b"sub", out, b"sub2"),           # within the host view
       renameat2(CWD, b"escape/sub", CWD, b"escape/sub3")]
print(all(e in (errno.EXDEV, errno.EROFS, errno.EACCES) for e in res), res)
print(sorted(os.listdir('.')))
""" % str(outside))
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().splitlines()
    assert out[0].startswith("True"), out
    assert out[1] == "['escape', 'src']"
    assert snapshot(outside) == before
    assert not list((state_dir / "sessions" / "s" / "upper").rglob("victim.txt"))


def test_racing_the_path_between_read_and_act_stays_in_the_sandbox_view(world, state_dir):
    root, proj, outside = world
    before = snapshot(outside)
    # One thread flips the path buffer between a lower directory and a path
    # through a symlink out of the target while the other renames it; the
    # worker acts on what the supervisor read, in the sandbox's own view.
    r = run(state_dir, proj, """
buf = ctypes.create_string_buffer(64)
stop = False
def flip():
    while not stop:
        buf.value = b"escape/sub"
        buf.value = b"src"
t = threading.Thread(target=flip); t.start()
seen = set()
for i in range(300):
    e = renameat2(CWD, buf, CWD, b"dst")
    seen.add(e)
    if e == 0:
        os.rename("dst", "src") if os.path.isdir("dst") else None
stop = True; t.join()
print(sorted(seen), sorted(os.listdir('.')), os.listdir('src'))
""")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip().endswith("['escape', 'src'] ['pkg']"), r.stdout
    import ast, errno
    seen = ast.literal_eval(r.stdout.decode().split("]")[0] + "]")
    assert set(seen) <= {0, errno.EXDEV, errno.ENOENT}, seen  # moved, or refused across mounts
    assert snapshot(outside) == before
    upper = state_dir / "sessions" / "s" / "upper"
    assert not list(upper.rglob("victim.txt")) and not list(upper.rglob("deep"))
