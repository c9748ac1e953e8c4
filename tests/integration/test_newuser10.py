"""A reviewer who did not run the agent (round 10): a patch from a colleague,
applied with --target to their own copy of the project, which they edited
since. Each test fails before its fix."""
import json
import os

from apply_util import saved_patch_and_copy as _patch


def test_a_patch_applied_twice_finds_its_changes_there_and_writes_nothing(lo, tmp_path):
    # The second apply listed new.txt, holding the patch's very bytes, as a
    # conflict ("exists on the target now"), and old.log as "removed".
    patch, copy = _patch(lo, tmp_path, "echo four >> notes.txt; echo n > new.txt; rm old/a.txt; "
                         "printf '#!/bin/sh\\n' > run.sh; chmod 755 run.sh; ln -s notes.txt ln2", "tw")
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0, r.stderr
    before = {p: (copy / p).read_bytes() for p in ("notes.txt", "new.txt", "run.sh")}
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "nothing to apply to %s\n" % copy, r.stdout
    assert r.stderr.decode() == ("layover: apply: already on the target as the patch makes them, so left as they "
                                 "are: ln2, new.txt, notes.txt, old/a.txt, run.sh\n"), r.stderr
    assert {p: (copy / p).read_bytes() for p in before} == before
    r = lo("undo", "--list", "--target", copy, "--json")
    assert len(json.loads(r.stdout)) == 1, r.stdout  # no second record
    r = lo("apply", patch, "--target", copy, "--dry-run", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["applied"] == [] and [a["path"] for a in out["already"]] == [
        "ln2", "new.txt", "notes.txt", "old/a.txt", "run.sh"], out


def test_only_the_changes_the_target_lacks_are_applied_and_a_different_file_is_still_a_conflict(lo, tmp_path):
    patch, copy = _patch(lo, tmp_path, "echo n > new.txt; echo m > more.txt", "half")
    (copy / "new.txt").write_text("n\n")  # the reviewer made the same file by hand
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0, r.stderr
    assert "layover: apply: already on the target as the patch makes them, so left as they are: new.txt\n" \
        == r.stderr.decode(), r.stderr
    assert "applied 1 change(s) to %s:\n  A more.txt  [0644, 2 B]\n" % copy in r.stdout.decode(), r.stdout
    r = lo("undo", "--last", "--target", copy)
    assert r.returncode == 0, r.stderr
    assert not (copy / "more.txt").exists() and (copy / "new.txt").read_text() == "n\n"  # not the apply's
    (copy / "new.txt").write_text("other\n")
    (copy / "new.txt").chmod(0o644)
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 1 and "  new.txt: exists on the target now (a file), but the patch expects it absent" \
        in r.stderr.decode(), r.stderr
    (copy / "new.txt").write_text("n\n")
    (copy / "new.txt").chmod(0o600)  # the same bytes, another mode: a conflict
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 1 and "new.txt: exists on the target now" in r.stderr.decode(), r.stderr


def test_undos_conflict_says_what_happened_once(lo, tmp_path):
    # "changed since it was applied (was modified)" said it twice.
    patch, copy = _patch(lo, tmp_path, "echo four >> notes.txt; echo n > new.txt", "un")
    assert lo("apply", patch, "--target", copy, "--yes").returncode == 0
    (copy / "notes.txt").write_text("mine\n")
    (copy / "new.txt").unlink()
    r = lo("undo", "--last", "--target", copy)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "  notes.txt: changed since it was applied (edited: its content, mode or times)\n" in err, err
    assert "  new.txt: changed since it was applied (removed)\n" in err, err
    assert "was modified" not in err and "(was " not in err, err


def test_diff_with_target_takes_paths_in_the_tree_it_compares_with(lo, tmp_path):
    # An absolute path in the reviewer's copy was refused as outside the
    # patch's target, and a path relative to a subdir of the copy got no hint.
    patch, copy = _patch(lo, tmp_path, "echo four >> notes.txt; echo t >> docs/readme.txt", "dt")
    real = os.path.realpath(copy)
    r = lo("diff", patch, "--target", copy, "--", copy / "notes.txt")
    out = r.stdout.decode()
    assert r.returncode == 1 and "+four\n" in out and "readme" not in out, r.stderr
    r = lo("diff", patch, "--target", copy, "--", "readme.txt", cwd=copy / "docs")
    assert r.returncode == 0 and r.stdout == b"", r.stdout
    assert ("layover: diff: 'readme.txt' matches no change (paths are relative to the target %s, not the current "
            "directory): 'docs/readme.txt' would match\n" % real) in r.stderr.decode(), r.stderr
    assert "layover: diff: compared with %s (--target)\n" % real in r.stderr.decode()


def test_at_a_terminal_what_is_already_there_is_said_once_before_the_question(lo, tmp_path):
    import pexpect
    from conftest import LAYOVER
    patch, copy = _patch(lo, tmp_path, "echo n > new.txt; echo m > more.txt", "tty")
    (copy / "new.txt").write_text("n\n")
    child = pexpect.spawn(LAYOVER, ["apply", str(patch), "--target", str(copy)], env=dict(lo.env, TERM="dumb"),
                          cwd=str(copy), timeout=15, encoding="utf-8")
    child.expect_exact("layover: apply: already on the target as the patch makes them, so left as they are: new.txt")
    child.expect(r"Apply 1 change to .*\? \[y/N\] ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    rest = child.before
    child.close()
    assert child.exitstatus == 0 and "applied 1 change(s)" in rest and "already" not in rest, rest
    assert (copy / "more.txt").read_text() == "m\n"


def test_a_merged_file_applied_again_is_already_there_not_merged_again(lo, tmp_path):
    # The reviewer's own edit of line 1, merged with the patch's; a second
    # apply merged it again into the same bytes and wrote it (a new undo record).
    patch, copy = _patch(lo, tmp_path, "echo four >> notes.txt", "mg")
    (copy / "notes.txt").write_text("ONE\ntwo\nthree\n")
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0 and "M notes.txt (merged with changes made since)" in r.stdout.decode(), r.stdout
    assert (copy / "notes.txt").read_text() == "ONE\ntwo\nthree\nfour\n"
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0 and r.stdout.decode() == "nothing to apply to %s\n" % copy, r.stdout
    assert r.stderr.decode() == ("layover: apply: already on the target as the patch makes them, so left as they "
                                 "are: notes.txt\n"), r.stderr
    assert len(json.loads(lo("undo", "--list", "--target", copy, "--json").stdout)) == 1


def test_a_hunk_choice_on_a_file_edited_since_does_not_send_the_reviewer_to_force(lo, tmp_path):
    # The fix line said "re-run with --force", which refused it again.
    (lo.target / "app.py").write_text("".join("line %d\n" % i for i in range(1, 31)))
    patch, copy = _patch(lo, tmp_path, "sed -i 's/^line 3$/line 3 x/; s/^line 25$/line 25 x/' app.py", "hk")
    (copy / "app.py").write_text((copy / "app.py").read_text().replace("line 25\n", "line 25 mine\n"))
    for force in ([], ["--force"]):
        r = lo("apply", patch, "--target", copy, "--yes", "--hunks", "app.py:1", *force)
        err = r.stderr.decode()
        assert r.returncode == 1, err
        assert ("  app.py: content changed on the target (size 231 -> 236); its hunks were chosen, and a file taken by "
                "hunk must be as the patch's base was (hunks are never fitted by guessing; --force does not override "
                "this): take the file whole, or leave it out\n") in err, err
        assert "re-run with --force" not in err and "fix: --force does not override these" in err, err


def test_a_target_that_cannot_be_reached_is_one_line_naming_it_then_the_fix(lo, tmp_path):
    # A colleague's patch names their tree: "cannot open the target; pass
    # --target DIR: target /home/ann/proj: Permission denied".
    patch, copy = _patch(lo, tmp_path, "echo n > new.txt", "acc")
    locked = tmp_path / "locked"
    (locked / "proj").mkdir(parents=True)
    locked.chmod(0)
    try:
        r = lo("apply", patch, "--target", locked / "proj", "--yes")
    finally:
        locked.chmod(0o755)
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: apply: target %s cannot be reached (Permission denied); nothing was applied; pass --target DIR\n"
        % (locked / "proj")), r.stderr
