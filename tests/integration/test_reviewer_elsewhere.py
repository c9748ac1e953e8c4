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
    # Against the copy, not the original: its TWO is kept, as apply's merge keeps it (the applyp pass:
    # the diff showed "-TWO +two", undoing the reviewer's edit that apply keeps).
    assert " one\n TWO\n three\n+four\n" in out and "+two" not in out, out
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


def test_applying_a_patch_twice_says_it_was_applied_already(lo, tmp_path):
    # The second apply conflicts with the first's own changes: said so, with
    # the command that takes the first back (--last only while it is the newest).
    assert lo.run("echo four >> notes.txt; echo n > new.txt", session="tw").returncode == 0
    patch = tmp_path / "tw.tar.zst"
    assert lo("save", "tw", "-o", patch).returncode == 0
    copy = tmp_path / "copy"
    shutil.copytree(lo.target, copy, symlinks=True)
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0, r.stderr
    note = "note: this patch was applied to %s already, at " % copy
    (copy / "new.txt").write_text("edited since\n")  # what the tree has as the patch makes it is no conflict
    r = lo("apply", patch, "--target", copy, "--yes")
    err = r.stderr.decode()
    assert r.returncode == 1 and "new.txt: exists on the target now" in err, err
    assert err.splitlines()[-1].startswith(note), err
    assert ("UTC: the conflicts may be its own changes ('layover undo --last --target %s' takes that apply back; "
            "'layover undo --list --target %s' lists the applies)" % (copy, copy)) in err, err
    # After another apply on that tree: the record itself.
    assert lo.run("echo o > other.txt", session="tw2").returncode == 0
    assert lo("apply", "tw2", "--target", copy, "--yes").returncode == 0
    r = lo("apply", patch, "--target", copy, "--dry-run")
    err = r.stderr.decode()
    assert r.returncode == 1 and note in err and "('layover undo /" in err and "--last" not in err, err
    # Conflicts of another patch: no note.
    (copy / "notes.txt").write_text("changed\n")
    other = tmp_path / "tw2.tar.zst"
    assert lo.run("echo five >> notes.txt", session="tw3").returncode == 0
    assert lo("save", "tw3", "-o", other).returncode == 0
    r = lo("apply", other, "--target", copy, "--yes")
    assert r.returncode == 1 and b"note:" not in r.stderr, r.stderr
