"""The attack pass of 27 Nov on apply, undo and the patch reader (attack21):
hostile patch files and hostile target trees."""
import json
import os
import subprocess
import sys

from patch_builder import PatchBuilder
from conftest import LAYOVER, missing_feature

HERE = os.path.dirname(os.path.abspath(__file__))

# In a private mount namespace: a small tmpfs as the target, the patch applied
# to it, and what the tmpfs held before and after (and its fullest moment).
SMALL_TARGET = r"""
import json, os, subprocess, sys, threading
sys.path.insert(0, sys.argv[1])
from apply_util import tree
small, patch, opts = sys.argv[2], sys.argv[3], sys.argv[4]
subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", small], check=True)
with open(os.path.join(small, "notes.txt"), "w") as f:
    f.write("mine\n")
before = tree(small, mtimes=True)
least = [os.statvfs(small).f_bavail]
done = threading.Event()
def watch():
    while not done.is_set():
        least[0] = min(least[0], os.statvfs(small).f_bavail)
threading.Thread(target=watch, daemon=True).start()
r = subprocess.run([os.environ["LAYOVER"], "apply", patch, "--yes", "--target", small], capture_output=True)
done.set()
print(json.dumps({"rc": r.returncode, "err": r.stderr.decode(errors="replace"),
                  "same": before == tree(small, mtimes=True), "least_free": least[0],
                  "left": [n for n in os.listdir(small) if n.startswith(".layover")]}))
"""


def apply_on_small_tmpfs(lo, tmp_path, patch, opts):
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        missing_feature("unshare -rm (user+mount namespaces) for a private tmpfs")
    small = tmp_path / "small"
    small.mkdir()
    env = dict(lo.env, LAYOVER=LAYOVER)
    r = subprocess.run(["unshare", "-rm", sys.executable, "-c", SMALL_TARGET, HERE, str(small), str(patch), opts],
                       capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_patch_bigger_than_the_free_space_is_refused_before_the_disk_fills(lo, tmp_path):
    # 64 MiB of zeros is a few KB of zstd: a patch from anyone can ask for
    # more than the disk has. Found by attack21: apply wrote until ENOSPC (the
    # user's filesystem full, every other program's writes failing), then
    # rolled back; now it is refused before the first write.
    patch = tmp_path / "big.tar.zst"
    PatchBuilder(tmp_path / "small").file("a.txt", b"a\n").file("zeros.bin", bytes(64 << 20)).write(patch)
    assert patch.stat().st_size < 1 << 20
    res = apply_on_small_tmpfs(lo, tmp_path, patch, "size=8m")
    assert res["rc"] == 1, res
    assert "the target's filesystem has " in res["err"] and "free, and this apply writes 64 MiB" in res["err"], res
    assert "nothing was applied" in res["err"] and res["err"].count("\n") == 1, res
    assert res["same"] and res["left"] == [], res
    assert res["least_free"] > 1000, res  # never filled, not even for a moment


def test_a_patch_of_more_entries_than_free_inodes_is_refused_before_anything_is_written(lo, tmp_path):
    b = PatchBuilder(tmp_path / "small")
    for i in range(200):
        b.file("f%03d" % i, b"")
    patch = b.write(tmp_path / "many.tar.zst")
    res = apply_on_small_tmpfs(lo, tmp_path, patch, "size=8m,nr_inodes=100")
    assert res["rc"] == 1, res
    assert "free inodes, and this apply makes 200 entries; nothing was applied" in res["err"], res
    assert res["same"] and res["left"] == [], res


def test_a_patch_that_fits_still_applies_on_a_small_filesystem(lo, tmp_path):
    patch = tmp_path / "fits.tar.zst"
    PatchBuilder(tmp_path / "small").file("a.txt", b"a\n").file("half.bin", bytes(3 << 20)).write(patch)
    res = apply_on_small_tmpfs(lo, tmp_path, patch, "size=8m")
    assert res["rc"] == 0, res


import pytest  # noqa: E402

from apply_util import dir_mover  # noqa: E402
from test_apply_atomic import run_stopped  # noqa: E402


@pytest.mark.parametrize("point", ["apply:stage:1", "apply:commit:1", "apply:rename:1"])
@pytest.mark.parametrize("swap", ["moved", "symlink"])
def test_a_dir_moved_out_or_swapped_for_a_symlink_while_apply_runs_keeps_nothing_of_it_outside(lo, tmp_path, point, swap):
    r = lo.run("cd '%s' && echo new > docs/readme.txt && echo n > docs/added.txt" % lo.target, session="mv")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "mv.tar.zst"
    lo("save", "mv", "-o", patch, check=True)
    moved = tmp_path / "moved"
    move_docs_out = dir_mover(lo, moved, swap)

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], point, move_docs_out)
    assert rc == 1, (out, err)
    assert b"nothing was applied" in err, err
    assert sorted(os.listdir(str(moved))) == ["readme.txt"], err
    assert (moved / "readme.txt").read_text() == "hello\nworld\n"
    assert not (lo.state / "journal").exists() or os.listdir(str(lo.state / "journal")) == []


def test_an_apply_killed_after_its_dir_was_swapped_for_a_symlink_is_recovered_not_stuck(lo, tmp_path):
    # The recovery (another process) cannot reach the staged copies in the
    # moved dir, and never follows the symlink to them; it must still finish,
    # or every later apply and undo on the tree failed until the link was gone.
    r = lo.run("cd '%s' && echo new > docs/readme.txt && echo n > docs/added.txt && echo s > notes.txt" % lo.target,
               session="mv")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "mv.tar.zst"
    lo("save", "mv", "-o", patch, check=True)
    moved = tmp_path / "moved"

    def swap_and_kill():
        os.rename(str(lo.target / "docs"), str(moved))
        os.symlink(str(moved), str(lo.target / "docs"))

    env = dict(lo.env, LAYOVER_FAULT="apply:commit:1:stop")
    proc = subprocess.Popen([LAYOVER, "apply", str(patch), "--target", str(lo.target), "--yes"], cwd=str(lo.target),
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    from test_apply_atomic import wait_stopped
    wait_stopped(proc)
    swap_and_kill()
    proc.kill()
    proc.communicate(timeout=30)
    notes = (lo.target / "notes.txt").read_bytes()
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json", "--exclude", "docs/**")
    assert b"ROLLING BACK FAILED" not in r.stderr, r.stderr
    out = json.loads(r.stdout)
    assert "recovered" in out, (out, r.stderr)
    assert out["recovered"].startswith("reverted an interrupted apply"), out
    assert r.returncode == 0, out
    assert (lo.target / "notes.txt").read_text() == "s\n" and notes != b"s\n"
    assert (moved / "readme.txt").read_text() == "hello\nworld\n"
    assert not os.listdir(str(lo.state / "journal"))


def test_a_forced_undo_never_says_it_removed_an_addition_behind_a_dir_now_a_symlink(lo, tmp_path):
    r = lo.run("cd '%s' && echo n > docs/added.txt && echo s > notes.txt" % lo.target, session="u")
    assert r.returncode == 0, r.stderr
    r = lo("apply", "u", "--yes", "--json")
    undo = json.loads(r.stdout)["undo"]
    moved = tmp_path / "moved"
    os.rename(str(lo.target / "docs"), str(moved))
    os.symlink(str(moved), str(lo.target / "docs"))
    r = lo("undo", undo, "--force")
    assert r.returncode == 1 and b"restoring docs/added.txt" in r.stderr, r.stderr
    assert b"removed: the apply added it" not in r.stdout, r.stdout
    assert (moved / "added.txt").exists()
    os.unlink(str(lo.target / "docs"))
    os.rename(str(moved), str(lo.target / "docs"))
    r = lo("undo", undo, "--force")
    assert r.returncode == 0, r.stderr
    assert not (lo.target / "docs" / "added.txt").exists()
    assert (lo.target / "notes.txt").read_text() != "s\n"
