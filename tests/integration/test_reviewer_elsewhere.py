"""A reviewer on another machine: the patch names a tree that is not theirs (or moved)."""
import shutil


def test_diff_of_a_patch_compares_with_the_tree_given_by_target(lo, tmp_path):
    assert lo.run("echo four >> notes.txt", session="rv").returncode == 0
    patch = tmp_path / "rv.tar.zst"
    assert lo("save", "rv", "-o", patch).returncode == 0
    copy = tmp_path / "copy"  # the reviewer's copy, one line different from the tree the patch names
    shutil.copytree(lo.target, copy, symlinks=True)
    (copy / "notes.txt").write_text("one\nTWO\nthree\n")
    r = lo("diff", patch, "--target", copy)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 1, err
    assert " one\n-TWO\n+two\n three\n+four\n" in out, out  # against the copy, not the original
    assert "layover: diff: compared with %s (--target)" % copy in err, err
    assert (copy / "notes.txt").read_text() == "one\nTWO\nthree\n"
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"
    # Without --target the patch's own tree is used, as before.
    r = lo("diff", patch)
    assert r.returncode == 1 and "+four\n" in r.stdout.decode() and "-TWO" not in r.stdout.decode()


def test_diff_target_errors_are_one_line_naming_the_fix(lo, tmp_path):
    assert lo.run("echo four >> notes.txt", session="rv2").returncode == 0
    patch = tmp_path / "rv2.tar.zst"
    assert lo("save", "rv2", "-o", patch).returncode == 0
    for args, want in [
        (["diff", "rv2", "--target", tmp_path], "--target is for a patch file"),
        (["diff", patch, "--target", tmp_path / "nope"], "cannot open --target %s" % (tmp_path / "nope")),
        (["diff", patch, "--target"], "--target needs a directory"),
    ]:
        r = lo(*args)
        err = r.stderr.decode()
        assert r.returncode == 2 and r.stdout == b"", (args, err)
        assert len(err.splitlines()) == 1 and want in err, (args, err)
