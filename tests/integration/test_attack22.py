"""The attack pass of 27 Nov on the changes of its last hour (attack22):
apply's free-space check and the staging dirs it keeps open."""
import os

from patch_builder import PatchBuilder
from test_apply_atomic import run_stopped
from test_attack21 import apply_on_small_tmpfs


def test_a_patch_of_long_symlinks_is_refused_before_the_disk_fills(lo, tmp_path):
    # A symlink whose target is too long for its inode takes a data block
    # (tmpfs: a page past 128 bytes; ext4: a block past 60): 3,000 of them,
    # 4,000-byte targets, are ~12 MiB of disk from a patch of a few KB. The
    # check counted only files' data: apply wrote until ENOSPC.
    b = PatchBuilder(tmp_path / "small")
    for i in range(3000):
        b.symlink("l%04d" % i, "x" * 4000)
    patch = b.write(tmp_path / "links.tar.zst")
    assert patch.stat().st_size < 1 << 20
    res = apply_on_small_tmpfs(lo, tmp_path, patch, "size=8m")
    assert res["rc"] == 1, res
    assert "the target's filesystem has " in res["err"] and "nothing was applied" in res["err"], res
    assert res["same"] and res["left"] == [], res
    assert res["least_free"] > 100, res  # never filled


def test_a_dir_moved_out_while_apply_runs_keeps_nothing_of_it_even_past_the_dir_cache(lo, tmp_path):
    # attack21's fix removes a staged copy left in a dir moved out of the
    # target through the fd staging used: with more dirs than the cache of
    # open dirs keeps (256), the first ones' fds were closed by then, and
    # their .layover-tmp files (the patch's data) stayed in the moved dir.
    for i in range(300):
        d = lo.target / ("d%03d" % i)
        d.mkdir()
        (d / "f.txt").write_text("old\n")
    r = lo.run("cd '%s' && for d in d*; do echo new > $d/f.txt; done" % lo.target, session="many")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "many.tar.zst"
    lo("save", "many", "-o", patch, check=True)
    moved = tmp_path / "moved"

    def move_first_out():
        os.rename(str(lo.target / "d000"), str(moved))
        os.mkdir(str(lo.target / "d000"))

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], "apply:commit:1", move_first_out)
    assert rc == 1, (out, err)
    assert b"nothing was applied" in err, err
    assert sorted(os.listdir(str(moved))) == ["f.txt"], err
    assert (moved / "f.txt").read_text() == "old\n"
    assert (lo.target / "d299" / "f.txt").read_text() == "old\n"
    assert not (lo.state / "journal").exists() or os.listdir(str(lo.state / "journal")) == []


import pytest  # noqa: E402


@pytest.mark.parametrize("point", ["apply:commit:2", "apply:commit:3", "apply:rename:3"])
@pytest.mark.parametrize("swap", ["moved", "symlink"])
def test_a_dir_moved_out_after_its_additions_were_committed_keeps_none_of_them(lo, tmp_path, point, swap):
    r = lo.run("cd '%s' && echo n > docs/added.txt && echo new > docs/readme.txt && echo s > notes.txt" % lo.target,
               session="mv2")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "mv2.tar.zst"
    lo("save", "mv2", "-o", patch, check=True)
    moved = tmp_path / "moved"

    def move_docs_out():
        os.rename(str(lo.target / "docs"), str(moved))
        if swap == "symlink":
            os.symlink(str(moved), str(lo.target / "docs"))
        else:
            os.mkdir(str(lo.target / "docs"))

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], point, move_docs_out)
    listing = sorted(os.listdir(str(moved)))
    if rc == 0:  # it went on where the paths lead now: nothing may be claimed that is not so
        return
    assert b"nothing was applied" in err or b"ROLLING BACK FAILED" in err, err
    if b"nothing was applied" in err:
        assert listing == ["readme.txt"], (listing, err)
        assert (moved / "readme.txt").read_text() == "hello\nworld\n", err
