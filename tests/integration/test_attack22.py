"""The attack pass of 27 Nov on the changes of its last hour (attack22):
apply's free-space check and the staging dirs it keeps open."""
import os

from patch_builder import PatchBuilder
from apply_util import dir_mover
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
    move_first_out = dir_mover(lo, moved, name="d000")

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
    move_docs_out = dir_mover(lo, moved, swap)

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], point, move_docs_out)
    listing = sorted(os.listdir(str(moved)))
    if rc == 0:
        # The commit had made docs' changes before the dir moved (they moved
        # with it, the user's own move); the rest went where it belongs, and
        # nothing into the dir or link now at docs.
        assert listing == ["added.txt", "readme.txt"], (listing, err)
        assert (moved / "readme.txt").read_text() == "new\n" and (moved / "added.txt").read_text() == "n\n"
        assert (lo.target / "notes.txt").read_text() == "s\n"
        if swap == "moved":
            assert os.listdir(str(lo.target / "docs")) == []
        return
    assert b"nothing was applied" in err or b"ROLLING BACK FAILED" in err, err
    if b"nothing was applied" in err:
        assert listing == ["readme.txt"], (listing, err)
        assert (moved / "readme.txt").read_text() == "hello\nworld\n", err


@pytest.mark.parametrize("change", ["meta", "inplace"])
def test_an_apply_killed_after_its_dir_became_a_symlink_is_recovered_for_mode_and_in_place_changes(lo, tmp_path, change):
    # attack21's recovery passes over an addition, replacement or deletion
    # the commit never made behind a dir that is now a symlink; a mode change
    # there stopped the recovery, and every later apply and undo of the tree
    # with it. An in-place update (a file with other hard links) still stops
    # it until the dir is back: the undo store holds the original's only copy.
    import json
    import subprocess
    from conftest import LAYOVER
    from test_apply_atomic import wait_stopped
    if change == "inplace":
        os.link(str(lo.target / "docs" / "readme.txt"), str(lo.target / "readme-link"))
        script = "echo new > docs/readme.txt"
    else:
        script = "chmod 600 docs/readme.txt"
    r = lo.run("cd '%s' && %s && echo s > notes.txt" % (lo.target, script), session="k")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "k.tar.zst"
    lo("save", "k", "-o", patch, check=True)
    moved = tmp_path / "moved"
    env = dict(lo.env, LAYOVER_FAULT="apply:commit:1:stop")
    proc = subprocess.Popen([LAYOVER, "apply", str(patch), "--target", str(lo.target), "--yes"], cwd=str(lo.target),
                            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_stopped(proc)
    os.rename(str(lo.target / "docs"), str(moved))
    os.symlink(str(moved), str(lo.target / "docs"))
    proc.kill()
    proc.communicate(timeout=30)
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json", "--exclude", "docs/**")
    if change == "inplace":
        # The undo store holds the only copy of what the file held: the
        # recovery stops there, its journal kept, until the dir is back.
        assert r.returncode == 1 and b"restoring docs/readme.txt" in r.stderr, r.stderr
        assert os.listdir(str(lo.state / "journal"))
        os.unlink(str(lo.target / "docs"))
        os.rename(str(moved), str(lo.target / "docs"))
        moved = lo.target / "docs"
        r = lo("apply", patch, "--target", lo.target, "--yes", "--json", "--exclude", "docs/**")
    assert b"ROLLING BACK FAILED" not in r.stderr, r.stderr
    out = json.loads(r.stdout)
    assert out.get("recovered", "").startswith("reverted an interrupted apply"), (out, r.stderr)
    assert r.returncode == 0, out
    assert (lo.target / "notes.txt").read_text() == "s\n"
    assert (moved / "readme.txt").read_text() == "hello\nworld\n"
    assert not os.listdir(str(lo.state / "journal"))


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("swap", ["moved", "symlink"])
def test_a_dir_swapped_while_the_rollback_runs_gets_its_originals_back_and_keeps_nothing_new(lo, tmp_path, swap, n):
    # Held: the commit fails at unit n (an injected EIO), the rollback is
    # stopped at its first restore while docs is moved out (or swapped for a
    # symlink): it restores through the dir fds the commit used.
    r = lo.run("cd '%s' && echo n > docs/added.txt && echo new > docs/readme.txt && chmod 600 docs/readme.txt"
               " && echo s > notes.txt" % lo.target, session="rb")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "rb.tar.zst"
    lo("save", "rb", "-o", patch, check=True)
    moved = tmp_path / "moved"
    swap_docs = dir_mover(lo, moved, swap)

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"],
                               "apply:commit:%d,apply:revert:1" % n, swap_docs)
    assert rc == 1 and b"nothing was applied" in err, err
    assert sorted(os.listdir(str(moved))) == ["readme.txt"], err
    assert (moved / "readme.txt").read_text() == "hello\nworld\n"
    assert os.stat(str(moved / "readme.txt")).st_mode & 0o777 == 0o644
    assert (lo.target / "notes.txt").read_text() != "s\n"
    assert not os.listdir(str(lo.state / "journal"))
