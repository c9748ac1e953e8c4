"""Conflicts: anything changed on the real tree since the patch's base is
reported, and nothing at all is written; --force, --only and --exclude."""
import os

from apply_util import apply_json as apply, edit, tree


def conflict_paths(out):
    return sorted(c["path"] for c in out["conflicts"])


def test_apply_concurrent_edit_on_the_real_tree_is_a_conflict_and_nothing_is_written(lo):
    edit(lo, "echo sandbox > notes.txt && echo n > fresh.txt && rm -r old", session="c")
    (lo.target / "notes.txt").write_text("edited by the user meanwhile\n")
    before = tree(lo.target, mtimes=True)
    r, out = apply(lo, "c")
    assert r.returncode == 1
    assert conflict_paths(out) == ["notes.txt"]
    assert out["conflicts"][0]["forceable"] is True  # --force overrides it (docs/cli.md)
    assert out["applied"] == [] and out["undo"] is None
    assert tree(lo.target, mtimes=True) == before


def test_apply_edit_after_copy_up_but_before_capture_is_a_stale_conflict(lo):
    edit(lo, "echo sandbox >> notes.txt", session="s")
    # The real file changes after the sandbox copied it up, before the patch is captured:
    # the upper copy holds the old text and would silently revert this edit.
    (lo.target / "notes.txt").write_text("user edit after copy-up\n")
    r, out = apply(lo, "s")
    assert r.returncode == 1
    assert conflict_paths(out) == ["notes.txt"]
    assert "stale" in out["conflicts"][0]["reason"]
    assert (lo.target / "notes.txt").read_text() == "user edit after copy-up\n"


def test_apply_two_sessions_in_turn_second_conflicts_then_force_overwrites_and_undo_restores(lo):
    edit(lo, "echo from-a > notes.txt", session="a")
    edit(lo, "echo from-b > notes.txt && echo b > b-only.txt", session="b")
    r, out = apply(lo, "a")
    assert r.returncode == 0, out
    r, out = apply(lo, "b")
    assert r.returncode == 1
    assert conflict_paths(out) == ["notes.txt"]
    assert (lo.target / "notes.txt").read_text() == "from-a\n"
    assert not (lo.target / "b-only.txt").exists()
    after_a = tree(lo.target, mtimes=True)

    r, out = apply(lo, "b", "--force")
    assert r.returncode == 0, out
    assert [c["path"] for c in out["forced"]] == ["notes.txt"]
    assert (lo.target / "notes.txt").read_text() == "from-b\n"
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr
    assert tree(lo.target, mtimes=True) == after_a


def test_apply_new_file_inside_a_deleted_directory_is_a_conflict(lo):
    edit(lo, "rm -r old", session="d")
    (lo.target / "old" / "sub" / "late.txt").write_text("added on the real tree later\n")
    before = tree(lo.target, mtimes=True)
    r, out = apply(lo, "d")
    assert r.returncode == 1
    assert "old/sub/late.txt" in conflict_paths(out)
    assert tree(lo.target, mtimes=True) == before


def test_apply_only_applies_the_named_paths_and_can_leave_a_conflict_out(lo):
    edit(lo, "echo s > notes.txt && mkdir -p nd && echo a > nd/a && echo b > nd/b && echo r > docs/readme.txt",
         session="o")
    (lo.target / "notes.txt").write_text("user\n")
    r, out = apply(lo, "o", "--only", "nd/a", "--only", "./docs/readme.txt")
    assert r.returncode == 0, out
    assert (lo.target / "nd" / "a").read_text() == "a\n"
    assert not (lo.target / "nd" / "b").exists()
    assert (lo.target / "docs" / "readme.txt").read_text() == "r\n"
    assert (lo.target / "notes.txt").read_text() == "user\n"


def test_apply_exclude_glob_leaves_matching_paths_out(lo):
    edit(lo, "echo s > notes.txt && mkdir -p nd && echo a > nd/a.log && echo b > nd/b.txt", session="x")
    r, out = apply(lo, "x", "--exclude", "*.log", "--exclude", "notes.txt")
    assert r.returncode == 0, out
    assert (lo.target / "nd" / "b.txt").read_text() == "b\n"
    assert not (lo.target / "nd" / "a.log").exists()
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_undo_refuses_when_an_applied_file_was_edited_afterwards(lo):
    edit(lo, "echo s > notes.txt", session="u")
    r, out = apply(lo, "u")
    assert r.returncode == 0, out
    (lo.target / "notes.txt").write_text("edited after apply\n")
    r = lo("undo", out["undo"])
    assert r.returncode == 1
    assert b"notes.txt" in r.stderr
    # The advice names only flags undo accepts.
    assert b"--force" in r.stderr and b"--exclude" not in r.stderr and b"--only" not in r.stderr
    assert (lo.target / "notes.txt").read_text() == "edited after apply\n"
    r = lo("undo", out["undo"], "--force")
    assert r.returncode == 0, r.stderr
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_a_conflict_on_git_index_says_git_rewrites_it_and_others_do_not(lo):
    # An agent's commit applied, then `git status` on the real tree rewrites
    # .git/index (a new file renamed over it): undo's conflict says why.
    (lo.target / "repo" / ".git").mkdir(parents=True)
    (lo.target / "repo" / ".git" / "index").write_bytes(b"DIRC old")
    edit(lo, "printf 'DIRC new' > repo/.git/index && echo s > notes.txt", session="g")
    r, out = apply(lo, "g")
    assert r.returncode == 0, out
    fresh = lo.target / "repo" / ".git" / "index.lock"
    fresh.write_bytes(b"DIRC new, stat data refreshed")
    os.rename(fresh, lo.target / "repo" / ".git" / "index")
    r = lo("undo", out["undo"])
    assert r.returncode == 1
    assert b"  repo/.git/index: changed since it was applied" in r.stderr
    assert b"note: .git/index is git's staging area, which 'git status' and most git commands rewrite" in r.stderr
    # Any other path's conflict has no such note.
    r = lo("undo", out["undo"], "--force")
    assert r.returncode == 0, r.stderr
    edit(lo, "echo t > notes.txt", session="h")
    (lo.target / "notes.txt").write_text("user edit\n")
    r = lo("apply", "h", "--target", lo.target, "--yes")
    assert r.returncode == 1 and b"notes.txt" in r.stderr and b"git" not in r.stderr, r.stderr


def test_undo_of_an_added_tree_accepts_it_as_applied_and_refuses_after_an_edit_inside_it(lo):
    # An added directory tree without hard links: undo's record of its entries
    # comes from a walk of the staged tree before the commit. Undo must accept
    # the tree exactly as apply left it (a record missing or misreading any
    # entry would make it refuse), and notice an edit deep inside it.
    base = tree(lo.target, mtimes=True)
    edit(lo, "mkdir -p newtree/a/b && echo 1 > newtree/a/b/one && echo 2 > newtree/two && "
             "ln -s two newtree/link && mkdir newtree/empty && mkfifo newtree/a/pipe", session="t")
    patch = lo.target.parent / "t.tar.zst"
    assert lo("save", "t", "-o", patch).returncode == 0
    r, out = apply(lo, str(patch))
    assert r.returncode == 0, out
    (lo.target / "newtree" / "a" / "b" / "one").write_text("1\n")  # same text, rewritten: a change
    r = lo("undo", out["undo"])
    assert r.returncode == 1
    assert b"newtree" in r.stderr
    assert (lo.target / "newtree" / "two").read_text() == "2\n"
    assert lo("undo", out["undo"], "--force").returncode == 0
    assert tree(lo.target, mtimes=True) == base
    # Applied again and undone at once: accepted, and the tree is as before.
    r, out = apply(lo, str(patch))
    assert r.returncode == 0, out
    assert (lo.target / "newtree" / "a" / "b" / "one").read_text() == "1\n"
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr
    assert tree(lo.target, mtimes=True) == base


def test_apply_same_size_edit_of_a_big_file_hashed_during_staging_is_a_conflict_and_staging_is_removed(lo, tmp_path):
    # Files of 8 MiB and more are hashed in a second thread while staging runs:
    # a same-size edit (only the hash can tell) must still stop the apply.
    big = lo.target / "big.bin"
    big.write_bytes(b"a" * (9 << 20))
    edit(lo, "printf sandbox | dd of=big.bin bs=1 seek=4096 conv=notrunc 2>/dev/null && echo n > fresh.txt",
         session="g")
    patch = tmp_path / "g.tar.zst"
    lo("save", "g", "-o", patch)
    with open(big, "r+b") as f:
        f.seek(1 << 20)
        f.write(b"user")
    before = tree(lo.target, mtimes=True)
    names = sorted(os.listdir(lo.target))
    r, out = apply(lo, patch)
    assert r.returncode == 1, out
    assert conflict_paths(out) == ["big.bin"]
    assert "content changed" in out["conflicts"][0]["reason"]
    assert out["applied"] == [] and out["undo"] is None
    assert tree(lo.target, mtimes=True) == before
    assert sorted(os.listdir(lo.target)) == names  # no staged names, no undo store left
    r, out = apply(lo, patch, "--force")
    assert r.returncode == 0, out
    assert [c["path"] for c in out["forced"]] == ["big.bin"]
    data = big.read_bytes()
    assert data[4096:4103] == b"sandbox" and data[1 << 20:(1 << 20) + 4] == b"aaaa"
    assert (lo.target / "fresh.txt").read_text() == "n\n"


def test_a_selection_that_cuts_into_a_deleted_directory_is_refused_and_nothing_written(lo):
    # old/ goes as a whole: --only one file in it, or --exclude one file in
    # it, would otherwise delete what the user meant to keep.
    edit(lo, "rm -r old && echo s > notes.txt", session="cut")
    before = tree(lo.target, mtimes=True)
    for sel in (["--only", "old/a.txt"], ["--exclude", "b.txt"], ["--exclude", "old/sub"]):
        r = lo("apply", "cut", "--yes", *sel)
        assert r.returncode == 1, (sel, r.stderr)
        err = r.stderr.decode()
        assert "but the patch deletes old as a whole; select all of it or none of it" in err, (sel, err)
        assert err.count("\n") == 1, err
        assert tree(lo.target, mtimes=True) == before
    # Leaving the whole directory out is fine.
    r, out = apply(lo, "cut", "--exclude", "old")
    assert r.returncode == 0, out
    assert (lo.target / "old" / "sub" / "b.txt").read_text() == "b\n"
    assert (lo.target / "notes.txt").read_text() == "s\n"


def test_undo_force_restores_a_hard_linked_file_an_editor_replaced_after_apply(lo):
    # notes.txt has a second hard link, so apply updates it in place. The user
    # then saves it from an editor (a new file renamed over it): undo refuses,
    # and undo --force puts the original back instead of wedging the target.
    t = lo.target
    os.link(str(t / "notes.txt"), str(t / "notes-link.txt"))
    edit(lo, "echo sandbox > notes.txt", session="hl")
    r, out = apply(lo, "hl")
    assert r.returncode == 0, out
    assert (t / "notes-link.txt").read_text() == "sandbox\n"  # updated in place: the link sees it
    with open(str(t / ".swp"), "w") as f:
        f.write("edited after apply\n")
    os.rename(str(t / ".swp"), str(t / "notes.txt"))
    r = lo("undo", out["undo"])
    assert r.returncode == 1 and b"notes.txt" in r.stderr, r.stderr
    r = lo("undo", out["undo"], "--force")
    assert r.returncode == 0, r.stderr
    assert (t / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert os.stat(str(t / "notes.txt")).st_mode & 0o7777 == 0o644
    # Nothing is left to recover: the next apply on the target works.
    edit(lo, "echo n > fresh.txt", session="after")
    r, out = apply(lo, "after")
    assert r.returncode == 0, out
    assert not out["recovered"], out


def test_apply_undo_then_apply_again_is_no_stale_conflict_but_a_later_edit_still_is(lo):
    """undo gives the real files new ctimes: a stale-copy conflict by ctime
    alone. The session keeps the base records its apply saw, so a file that
    holds the copied-up content again applies; one edited since is a conflict."""
    (lo.target / "other.txt").write_text("other v1\n")
    (lo.target / "mode.txt").write_text("mode v1\n")
    edit(lo, "echo sandbox >> notes.txt && echo sandbox >> other.txt && echo sandbox >> mode.txt", session="again")
    original = (lo.target / "notes.txt").read_text()
    r, out = apply(lo, "again")
    assert r.returncode == 0, out
    r = lo("undo", "--last", "--target", lo.target)
    assert r.returncode == 0, r.stderr
    assert (lo.target / "notes.txt").read_text() == original
    (lo.target / "other.txt").write_text("edited after the undo\n")
    os.chmod(lo.target / "mode.txt", 0o600)  # same content, other permissions: a change too
    r, out = apply(lo, "again")
    assert r.returncode == 1
    assert conflict_paths(out) == ["mode.txt", "other.txt"]
    assert all("stale" in c["reason"] for c in out["conflicts"])
    r, out = apply(lo, "again", "--exclude", "other.txt", "--exclude", "mode.txt")
    assert r.returncode == 0, out
    assert (lo.target / "notes.txt").read_text() == original + "sandbox\n"
    assert (lo.target / "other.txt").read_text() == "edited after the undo\n"


def test_a_real_file_touched_or_put_back_after_the_run_is_no_stale_conflict(lo):
    """run's exit keeps the fingerprint of each real file still as the
    sandbox copied it up: a later touch (a new ctime, as `git stash && git
    stash pop` or an editor's save of the same text give) or an edit undone
    is no stale copy; a real edit still is."""
    for name in ("touched.txt", "restored.txt", "gone.txt", "edited.txt"):
        (lo.target / name).write_text(name + " v1\n")
    edit(lo, "for f in touched restored edited; do echo sandbox >> $f.txt; done; rm gone.txt", session="t")
    os.utime(lo.target / "touched.txt")
    os.chmod(lo.target / "gone.txt", 0o644)  # a new ctime, nothing else
    (lo.target / "restored.txt").write_text("someone else's\n")
    (lo.target / "restored.txt").write_text("restored.txt v1\n")
    (lo.target / "edited.txt").write_text("edited.txt v2\n")
    r, out = apply(lo, "t")
    assert r.returncode == 1
    assert conflict_paths(out) == ["edited.txt"]
    assert "stale" in out["conflicts"][0]["reason"]
    r, out = apply(lo, "t", "--exclude", "edited.txt")
    assert r.returncode == 0, out
    assert (lo.target / "touched.txt").read_text() == "touched.txt v1\nsandbox\n"
    assert (lo.target / "restored.txt").read_text() == "restored.txt v1\nsandbox\n"
    assert not (lo.target / "gone.txt").exists()
    assert (lo.target / "edited.txt").read_text() == "edited.txt v2\n"


def test_a_conflict_force_does_not_override_does_not_name_force_as_the_fix(lo, tmp_path):
    # A reviewer's copy where docs/ was renamed: with --force the parent-gone conflicts stay, and the
    # fix line still said "re-run with --force to overwrite them", the command just run.
    edit(lo, "echo more >> docs/readme.txt && echo n > fresh.txt", session="mv")
    patch = tmp_path / "mv.tar.zst"
    lo("save", "mv", "-o", patch, check=True)
    os.rename(lo.target / "docs", lo.target / "doc")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--yes", "--target", lo.target)
    err = r.stderr.decode()
    # Without --force too (newuser10): --force would not override it either.
    assert r.returncode == 1 and "re-run with --force" not in err and "fix: --force does not override these" in err
    r = lo("apply", patch, "--yes", "--force", "--target", lo.target)
    err = r.stderr.decode()
    assert r.returncode == 1 and "docs/readme.txt: its parent directory no longer exists on the target" in err
    assert "re-run with --force" not in err and err.endswith(
        "fix: --force does not override these (a parent directory gone or replaced, a hunk chosen on\n"
        "     other content); put back what they need, or leave them out with --exclude GLOB / pick\n"
        "     others with --only PATH\n"), err
    # --json says so of each conflict: "forceable": false (the Python bindings named force=True for it).
    r, out = apply(lo, patch, "--force")
    assert r.returncode == 1 and [(c["path"], c["forceable"]) for c in out["conflicts"]] == [
        ("docs/readme.txt", False)], out
    assert tree(lo.target, mtimes=True) == before


def test_a_mix_of_conflicts_marks_the_ones_force_does_not_override(lo, tmp_path):
    # notes.txt edited on the target (--force overrides it) and docs/ renamed (it does not): the fix line
    # said "re-run with --force to overwrite them", which then refused docs/readme.txt again.
    edit(lo, "echo more >> docs/readme.txt && echo sandbox > notes.txt", session="mix")
    patch = tmp_path / "mix.tar.zst"
    lo("save", "mix", "-o", patch, check=True)
    os.rename(lo.target / "docs", lo.target / "doc")
    (lo.target / "notes.txt").write_text("edited by the user meanwhile\n")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--yes", "--target", lo.target)
    err = r.stderr.decode()
    assert r.returncode == 1, err
    assert "docs/readme.txt: its parent directory no longer exists on the target [--force does not override this]" \
        in err, err
    assert "notes.txt: " in err and "notes.txt: " not in err.split("[--force")[1].split("\n", 1)[0]
    assert "re-run with --force" not in err and err.endswith(
        "fix: look at those paths; --force overwrites all but the 1 marked (put back what they need,\n"
        "     or leave them out with --exclude GLOB / pick others with --only PATH)\n"), err
    # The marked one stays with --force, the other is overridden only once it is left out.
    r = lo("apply", patch, "--yes", "--force", "--target", lo.target)
    assert r.returncode == 1 and "fix: --force does not override these" in r.stderr.decode()
    assert tree(lo.target, mtimes=True) == before
    r = lo("apply", patch, "--yes", "--force", "--exclude", "docs/*", "--target", lo.target)
    assert r.returncode == 0, r.stderr
    assert (lo.target / "notes.txt").read_text() == "sandbox\n"
