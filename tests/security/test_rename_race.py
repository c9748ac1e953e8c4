"""Rename interception under attack (issue 15): the supervisor reads a
rename's paths from the task's memory; a hostile task races to change them.
Whatever it does, nothing outside the sandbox's own view changes."""
import os

RACE = r"""
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("victimdir/sub", exist_ok=True)
good, evil = b"victimdir\0" + b"\0" * 64, b"%(outside)s/dir\0"
buf = ctypes.create_string_buffer(good, 128)
stop = False
def flip():
    while not stop:
        ctypes.memmove(buf, evil, len(evil))
        ctypes.memmove(buf, good, len(good))
t = threading.Thread(target=flip); t.start()
moved = 0
for i in range(300):
    dst = ("moved%%d" %% i).encode()
    if libc.syscall(82, buf, dst) == 0:   # rename(2)
        moved += 1
        libc.syscall(82, dst, b"victimdir")
stop = True; t.join()
print("done", moved)
"""


def test_racing_rename_arguments_never_touch_anything_outside(sh):
    outside = sh.root / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "keep").write_text("keep\n")
    before = sorted(os.listdir(outside)), (outside / "dir" / "keep").read_text()
    r = sh.lo("run", "--target", sh.project, "--on-exit", "keep", "--session", "race", "--",
              "/usr/bin/python3", "-c", RACE % {"outside": str(outside).encode().decode()}, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(b"done"), r.stdout
    assert (sorted(os.listdir(outside)), (outside / "dir" / "keep").read_text()) == before
    # Nothing from outside was pulled into the session either.
    st = sh.lo("status", "race", "--json", check=True).stdout
    assert b"keep" not in st
