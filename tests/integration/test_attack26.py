"""The attack pass of 27 Nov on the dir fingerprints, gc of kept `apply -p`
answers and the journal's birth-time check (attack26). Each test failed
before its fix."""
import json
import os
import subprocess
import sys

from patch_builder import PatchBuilder
from conftest import LAYOVER, missing_feature

HERE = os.path.dirname(os.path.abspath(__file__))

# In a private user+mount namespace: TOP/m an overlayfs whose lower layer
# holds the target t (a container's image dir); an apply to it killed part
# way, then `undo --last` there.
OVERLAY_TARGET = r"""
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from apply_util import tree
top, patch = sys.argv[2], sys.argv[3]
for d in ("l/t", "l/t2", "u", "w", "m"):
    os.makedirs(os.path.join(top, d))
with open(os.path.join(top, "l/t/notes.txt"), "w") as f:
    f.write("one\n")
subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                "lowerdir=%s/l,upperdir=%s/u,workdir=%s/w" % (top, top, top), top + "/m"], check=True)
t = top + "/m/t"
before = tree(t)
ino = os.stat(t).st_ino
lo = os.environ["LAYOVER"]
k = subprocess.run([lo, "apply", patch, "--yes", "--target", t], capture_output=True,
                   env=dict(os.environ, LAYOVER_FAULT="apply:commit:2:kill"))
half = tree(t)
u = subprocess.run([lo, "undo", "--last", "--target", t], capture_output=True)
# A whole apply to another lower dir, then its undo: the record is this tree's.
t2 = top + "/m/t2"
before2 = tree(t2)
a = subprocess.run([lo, "apply", patch, "--yes", "--target", t2], capture_output=True)
u2 = subprocess.run([lo, "undo", "--last", "--target", t2], capture_output=True)
print(json.dumps({"applied": a.returncode, "undone": u2.returncode, "err2": u2.stderr.decode(errors="replace"),
                  "same2": tree(t2) == before2,
                  "killed": k.returncode, "rc": u.returncode, "err": u.stderr.decode(errors="replace"),
                  "half": half != before, "same": tree(t) == before, "ino": ino == os.stat(t).st_ino,
                  "left": [n for n in os.listdir(t) if n.startswith(".layover-tmp")]}))
"""


def test_a_killed_apply_on_an_overlayfs_target_is_recovered_not_set_aside_as_another_trees(lo, tmp_path):
    # Found by attack26: on overlayfs (a container's image dir) a dir of the
    # lower layer reports the lower inode's birth time; the apply's first
    # write copies it up, and it then reports the upper's, at the same
    # st_ino. A killed apply's journal was taken for an earlier tree's
    # ("removed since: nothing of it was done here") and set aside: the
    # tree was left half applied, with .layover-tmp entries, and no undo.
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        missing_feature("unshare -rm (user+mount namespaces) for a private overlayfs")
    patch = tmp_path / "p.tar.zst"
    PatchBuilder(tmp_path / "src").file("a.txt", b"a\n").file("b.txt", b"b\n").file("c.txt", b"c\n").write(patch)
    env = dict(lo.env, LAYOVER=LAYOVER)
    r = subprocess.run(["unshare", "-rm", sys.executable, "-c", OVERLAY_TARGET, HERE, str(tmp_path / "ov"), str(patch)],
                       capture_output=True, env=env, timeout=120)
    if r.returncode != 0 and b"mount" in r.stderr:
        missing_feature("overlayfs in a user namespace: " + r.stderr.decode(errors="replace")[-300:])
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["killed"] == -9 and res["half"] and res["ino"], res
    assert "earlier tree" not in res["err"], res
    assert res["rc"] == 0 and "reverted an interrupted apply" in res["err"], res
    assert res["same"] and not res["left"], res
    # Its undo record too was in no list: "no undo record for .../t2".
    assert res["applied"] == 0 and res["undone"] == 0 and res["same2"], res


def test_a_dir_fingerprint_of_a_deep_chain_is_bounded_in_memory(lo, home):
    # Found by attack26: a dir an undo renamed back is fingerprinted whole when stale
    # (capture/scan/entry/dir_print.cc), each entry keeping its full path: a 3,000-deep chain of
    # 100-byte names made inside it since took `status` 1.4 GB (quadratic in the depth; one
    # stack frame and one fd a level too). Past 512 levels or 64 MiB of paths it stays stale.
    r = lo.run("rm -rf old; echo x > x.txt", session="s")
    assert r.returncode == 0, r.stderr
    assert lo("apply", "s", "--yes").returncode == 0
    assert lo("undo", "--last", "--target", home).returncode == 0
    fd = os.open(str(home / "old"), os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(3000):
        os.mkdir("n" * 100, dir_fd=fd)
        nfd = os.open("n" * 100, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)
    p = subprocess.Popen([LAYOVER, "status", "s"], env=lo.env, cwd=str(home), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    out = p.stdout.read()
    assert os.waitstatus_to_exitcode(status) == 0, p.stderr.read()
    assert b"old" in out, out
    assert ru.ru_maxrss < 300 * 1024, ru.ru_maxrss  # KB: 1.4 GB before


def test_gc_never_follows_a_symlinked_apply_p_dir_to_remove_files_elsewhere(lo, victim):
    # Found by attack26: gc listed STATE/apply-p with opendir (a symlink followed) and removed every
    # regular file there it could not read as answers, or named *.tmp*, once 24h old: STATE/apply-p
    # a symlink to another dir cost that dir its files. A symlink there is now no answers dir.
    old = 1600000000
    (victim / "notes.tmp.txt").write_text("mine\n")
    for f in victim.iterdir():
        os.utime(str(f), (old, old))
    os.symlink(str(victim), str(lo.state / "apply-p"))
    r = lo("gc")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in victim.iterdir()) == ["notes.tmp.txt", "victim.txt"], r.stdout
    assert (victim / "victim.txt").read_text() == "precious\n"
