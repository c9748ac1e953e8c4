"""A user's edit to the real tree made after the session had its copy is
never overwritten, nor a file the user deleted brought back, whatever the
session's history did to the layers since: a squash past the depth limit,
a fork, a later step that deletes or renames its copy, a dir remade in a
later step (docs/security.md, "When the copy was made", "A real file
removed since"). And a normal agent's rewrites (vim-style save, `git
checkout`-like rewrites, npm-like `rm -rf && remake`) of files the user did
not touch stay conflict-free."""
import json
import os
import subprocess
import time

from apply_util import apply_json as apply, edit, host_writes, paced, status_json as status, tree
from conftest import LAYOVER


def host_edit(lo, rel, text):
    (lo.target / rel).write_text(text)
    time.sleep(1.1)  # step records keep their start to the second


def refused(lo, name, paths):
    """apply refuses (exit 1) naming exactly `paths`, and writes nothing."""
    before = tree(lo.target, mtimes=True)
    r, out = apply(lo, name)
    assert r.returncode == 1, out
    assert sorted(c["path"] for c in out["conflicts"]) == sorted(paths), out
    assert tree(lo.target, mtimes=True) == before


def test_a_copy_remade_in_a_step_squashed_with_the_step_that_copied_it_stays_stale(lo):
    """Step 1 copies notes.txt up; the host edits it; step 2 rewrites the
    copy with `sed -i`; two more steps push the stack past --max-steps 2,
    so steps 1 and 2 become one layer (in step 2's slot): the copy still
    came from step 1, before the host's edit."""
    edit(lo, "echo sandbox >> notes.txt", "sq", "--max-steps", "2")
    host_edit(lo, "notes.txt", "one\nthe host's edit\n")
    edit(lo, "sed -i s/one/ONE/ notes.txt", "sq", "--max-steps", "2")
    edit(lo, "echo 3 > three.txt", "sq", "--max-steps", "2")
    edit(lo, "echo 4 > four.txt", "sq", "--max-steps", "2")
    edit(lo, "true", "sq", "--max-steps", "2")
    log = json.loads(lo("log", "sq", "--json", check=True).stdout.decode())
    assert any(s.get("squashed") for s in log["steps"]), log
    assert status(lo, "sq")["notes.txt"].get("stale"), status(lo, "sq")
    refused(lo, "sq", ["notes.txt"])
    assert (lo.target / "notes.txt").read_text() == "one\nthe host's edit\n"


def test_a_later_step_deleting_or_renaming_an_earlier_copy_does_not_delete_the_host_edit(lo):
    """Step 1 edits notes.txt, old/a.txt and docs/readme.txt; the host edits
    all three; run 2 deletes notes.txt, renames docs/readme.txt and removes
    old/ whole. The session's copies predate the host's edits: deleting the
    real files would lose them unseen."""
    edit(lo, "echo s >> notes.txt && echo s >> old/a.txt && echo s >> docs/readme.txt", "rm")
    (lo.target / "old" / "a.txt").write_text("a\nhost\n")
    (lo.target / "docs" / "readme.txt").write_text("hello\nhost\n")
    host_edit(lo, "notes.txt", "one\nhost\n")
    edit(lo, "rm notes.txt && mv docs/readme.txt docs/moved.txt && rm -r old", "rm")
    ch = status(lo, "rm")
    assert ch["notes.txt"].get("stale") and ch["docs/readme.txt"].get("stale"), ch
    r, out = apply(lo, "rm")
    assert r.returncode == 1, out
    got = sorted(c["path"] for c in out["conflicts"])
    assert "notes.txt" in got and "docs/readme.txt" in got and any(p.startswith("old") for p in got), out
    assert (lo.target / "notes.txt").read_text() == "one\nhost\n"
    assert (lo.target / "docs" / "readme.txt").read_text() == "hello\nhost\n"
    assert (lo.target / "old" / "a.txt").read_text() == "a\nhost\n"


def test_a_fork_keeps_when_its_copies_were_made_and_the_real_files_it_knew(lo):
    """Session src edits notes.txt and docs/readme.txt; the host then edits
    notes.txt and deletes docs/readme.txt; a fork of src rewrites notes.txt
    with `sed -i`. Both are stale in the fork: its copies came from src's
    run, before the host's changes."""
    edit(lo, "echo sandbox >> notes.txt && echo s >> docs/readme.txt", "src")
    (lo.target / "docs" / "readme.txt").unlink()
    host_edit(lo, "notes.txt", "one\nthe host's edit\n")
    assert lo("fork", "src", "fk").returncode == 0
    edit(lo, "sed -i s/one/ONE/ notes.txt", "fk")
    ch = status(lo, "fk")
    assert ch["notes.txt"].get("stale") and ch["docs/readme.txt"].get("stale"), ch
    refused(lo, "fk", ["docs/readme.txt", "notes.txt"])
    assert not (lo.target / "docs" / "readme.txt").exists()


def test_a_dir_remade_in_a_later_step_from_an_earlier_copy_is_stale(lo):
    """Step 1 edits docs/readme.txt; the host edits the real file; run 2
    removes docs/ and remakes it from a copy it kept (an opaque dir in the
    new layer cuts step 1's copy off from the merged view): still stale."""
    edit(lo, "echo s >> docs/readme.txt && cp docs/readme.txt keep.txt", "dir")
    host_edit(lo, "docs/readme.txt", "hello\nhost\n")
    edit(lo, "rm -r docs && mkdir docs && cp keep.txt docs/readme.txt && rm keep.txt", "dir")
    assert status(lo, "dir")["docs/readme.txt"].get("stale"), status(lo, "dir")
    refused(lo, "dir", ["docs/readme.txt"])
    assert (lo.target / "docs" / "readme.txt").read_text() == "hello\nhost\n"


def test_a_copied_up_file_renamed_over_an_earlier_copy_is_stale(lo):
    """Run 1 edits notes.txt; the host edits it; run 2 renames another real
    file over it (overlayfs copies that one up, with its copy-up mark, born
    after the host's edit): the session's notes.txt was still step 1's."""
    (lo.target / "notes.bak").write_text("backup\n")
    edit(lo, "echo sandbox >> notes.txt", "mv")
    host_edit(lo, "notes.txt", "one\nhost\n")
    edit(lo, "mv notes.bak notes.txt", "mv")
    assert status(lo, "mv")["notes.txt"].get("stale"), status(lo, "mv")
    r, out = apply(lo, "mv")
    assert r.returncode == 1 and "notes.txt" in [c["path"] for c in out["conflicts"]], out
    assert (lo.target / "notes.txt").read_text() == "one\nhost\n"


def test_normal_rewrites_of_files_the_user_did_not_touch_are_no_conflict(lo):
    """vim-style saves (write a new file, rename it over), a `git checkout`-
    like rewrite of a dir, an npm-like `rm -rf && remake`, chmod, symlink
    retargeting, in several steps with checkpoints and a squash, a fork:
    the host changed nothing, so everything applies."""
    (lo.target / "pkg").mkdir()
    for i in range(5):
        (lo.target / "pkg" / ("m%d.js" % i)).write_text("module %d\n" % i)
    edit(lo, "echo s >> notes.txt && printf 'x\\n' > docs/.readme.swp && cp docs/readme.txt docs/readme.new"
         " && echo vim >> docs/readme.new && mv docs/readme.new docs/readme.txt && rm docs/.readme.swp", "ok",
         "--max-steps", "2")
    assert lo("checkpoint", "ok").returncode == 0
    edit(lo, "sed -i s/one/ONE/ notes.txt && rm -rf pkg && mkdir pkg && for i in 0 1 2; do echo new $i > pkg/m$i.js;"
         " done && chmod 755 old/a.txt && ln -sfn docs/readme.txt link", "ok", "--max-steps", "2")
    edit(lo, "rm -r old/sub && mkdir old/sub && echo b2 > old/sub/b.txt", "ok", "--max-steps", "2")
    edit(lo, "echo more >> notes.txt", "ok", "--max-steps", "2")
    assert lo("fork", "ok", "ok2").returncode == 0
    for name in ("ok", "ok2"):
        ch = status(lo, name)
        assert not [p for p, c in ch.items() if c.get("stale")], ch
    r, out = apply(lo, "ok2")
    assert r.returncode == 0 and not out.get("conflicts"), out
    assert (lo.target / "notes.txt").read_text() == "ONE\ntwo\nthree\ns\nmore\n"
    assert (lo.target / "pkg" / "m0.js").read_text() == "new 0\n" and not (lo.target / "pkg" / "m4.js").exists()


def test_a_copied_up_file_renamed_or_linked_over_a_copy_in_the_run_is_stale(lo):
    """The command copies notes.txt and docs/readme.txt up, the host edits
    both, then the command renames (links) another real file's copy over
    them: copied up with overlayfs's mark, born after the host's edits."""
    (lo.target / "a.bak").write_text("backup a\n")
    (lo.target / "b.bak").write_text("backup b\n")
    host = host_writes(lo, {"notes.txt": "one\nhost\n", "docs/readme.txt": "hello\nhost\n"})
    paced(lo, LAYOVER, "mvover", "echo s >> notes.txt && echo s >> docs/readme.txt && touch ready",
          "mv a.bak notes.txt && rm docs/readme.txt && ln b.bak docs/readme.txt && rm ready", host)
    ch = status(lo, "mvover")
    assert ch["notes.txt"].get("stale") and ch["docs/readme.txt"].get("stale"), ch
    r, out = apply(lo, "mvover")
    assert r.returncode == 1, out
    assert {"notes.txt", "docs/readme.txt"} <= {c["path"] for c in out["conflicts"]}, out
    assert (lo.target / "notes.txt").read_text() == "one\nhost\n"
    assert (lo.target / "docs" / "readme.txt").read_text() == "hello\nhost\n"


def test_a_chmod_of_a_file_applied_in_part_is_a_conflict_for_the_rest(lo):
    """apply --hunks applies one hunk of long.txt (its contents before and
    after are known to the session); the user then makes the real file
    private (chmod 600). The rest of the session's change must not put the
    old mode back unseen: a conflict, the user's mode kept."""
    import stat
    (lo.target / "long.txt").write_text("".join("line %d\n" % i for i in range(30)))
    edit(lo, "sed -i -e 's/^line 2$/LINE 2/' -e 's/^line 25$/LINE 25/' long.txt", "part")
    r = lo("apply", "part", "--hunks", "long.txt:1", "--yes", "--target", lo.target)
    assert r.returncode == 0, r.stderr
    os.chmod(lo.target / "long.txt", 0o600)
    assert status(lo, "part")["long.txt"].get("stale")
    r, out = apply(lo, "part")
    assert r.returncode == 1 and [c["path"] for c in out["conflicts"]] == ["long.txt"], out
    assert stat.S_IMODE(os.stat(lo.target / "long.txt").st_mode) == 0o600
    assert "LINE 2\n" in (lo.target / "long.txt").read_text() and "LINE 25" not in (lo.target / "long.txt").read_text()
    # Without the chmod, the rest applies (the partial apply's own change is known).
    os.chmod(lo.target / "long.txt", 0o644)
    r, out = apply(lo, "part")
    assert r.returncode == 0, out
    assert "LINE 25\n" in (lo.target / "long.txt").read_text()


def test_an_agent_s_git_checkout_and_npm_like_rebuild_while_the_user_edits_other_files_is_no_conflict(lo):
    """The user edits unrelated files between and during runs; the agent
    switches git branches (git rewrites tracked files, its index and refs),
    rebuilds node_modules with `rm -rf` and writes files in place, across
    steps, then --on-exit apply: nothing of the
    agent's is a conflict, and the user's edits stay."""
    t = lo.target
    (t / "node_modules" / "dep").mkdir(parents=True)
    (t / "node_modules" / "dep" / "index.js").write_text("v1\n")
    (t / "src").mkdir()
    (t / "src" / "app.js").write_text("app 1\n")
    (t / "mine.txt").write_text("the user's file\n")
    git = "git -c user.name=a -c user.email=a@b -c init.defaultBranch=main -c commit.gpgsign=false"
    r = subprocess.run("cd '%s' && %s init -q && %s add -A && %s commit -qm init" % (t, git, git, git), shell=True,
                       capture_output=True)
    assert r.returncode == 0, r.stderr
    edit(lo, "%s checkout -qb feature && echo 'app 2' > src/app.js && %s commit -qam two && %s checkout -q main"
         % (git, git, git), "g")
    (t / "mine.txt").write_text("the user's file, edited between runs\n")
    time.sleep(1.1)
    (t / "docs" / "readme.txt").write_text("hello\nthe user's edit\n")
    r = lo.run("cd '%s' && %s merge -q feature && rm -rf node_modules && mkdir -p node_modules/dep &&"
               " echo v2 > node_modules/dep/index.js && printf 'x\\n' > src/new.js" % (t, git), session="g",
               on_exit="apply")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (t / "src" / "app.js").read_text() == "app 2\n" and (t / "src" / "new.js").read_text() == "x\n"
    assert (t / "node_modules" / "dep" / "index.js").read_text() == "v2\n"
    assert (t / "mine.txt").read_text() == "the user's file, edited between runs\n"
    assert (t / "docs" / "readme.txt").read_text() == "hello\nthe user's edit\n"
    r = subprocess.run("cd '%s' && git log -1 --format=%%s" % t, shell=True, capture_output=True)
    assert r.stdout == b"two\n", (r.stdout, r.stderr)  # the repo's own files applied whole


def test_a_copy_deleted_in_the_run_after_a_host_edit_does_not_delete_the_edit(lo):
    """The command edits notes.txt and old/a.txt (its copies), the host
    edits both real files, then the command deletes notes.txt and old/:
    what it deleted was its copy; the host's edits must not go unseen."""
    host = host_writes(lo, {"notes.txt": "one\nhost\n", "old/a.txt": "a\nhost\n"})
    paced(lo, LAYOVER, "rmrun", "echo s >> notes.txt && echo s >> old/a.txt && touch ready",
          "rm notes.txt && rm -r old && rm ready", host)
    ch = status(lo, "rmrun")
    assert ch["notes.txt"].get("stale"), ch
    r, out = apply(lo, "rmrun")
    assert r.returncode == 1, out
    got = {c["path"] for c in out["conflicts"]}
    assert "notes.txt" in got and "old/a.txt" in got, out
    assert (lo.target / "notes.txt").read_text() == "one\nhost\n"
    assert (lo.target / "old" / "a.txt").read_text() == "a\nhost\n"


def test_a_dir_the_user_moves_away_while_the_command_runs_does_not_come_back(lo):
    """The command edits docs/readme.txt (overlayfs copies docs/ up, marked)
    and moves old/ to old2/ (a merged dir cannot be renamed: `mv` copies it,
    unmarked); the host then moves docs/ to doc/ while the command still
    runs, before any exit could record what the session knew. Applying
    must not bring docs/ back; the command's own new dir applies."""
    def host():
        os.rename(lo.target / "docs", lo.target / "doc")
    paced(lo, LAYOVER, "mvd", "echo s >> docs/readme.txt && mv old old2 && mkdir made && echo m > made/f && touch ready",
          "rm ready", host)
    ch = status(lo, "mvd")
    assert ch["docs"].get("stale") and not ch["old2"].get("stale") and not ch["made"].get("stale"), ch
    assert "A  docs/  (removed on disk after the sandbox's version; 1 file, 14 B)" in lo("status", "mvd", check=True).stdout.decode()
    before = tree(lo.target, mtimes=True)
    r, out = apply(lo, "mvd")
    assert r.returncode == 1 and [c["path"] for c in out["conflicts"]] == ["docs/readme.txt"], out
    assert "removed from the target" in out["conflicts"][0]["reason"], out
    assert tree(lo.target, mtimes=True) == before
    r, out = apply(lo, "mvd", "--exclude", "docs")
    assert r.returncode == 0, out
    assert not (lo.target / "docs").exists() and (lo.target / "doc" / "readme.txt").read_text() == "hello\nworld\n"
    assert (lo.target / "old2" / "a.txt").read_text() == "a\n" and not (lo.target / "old").exists()
    assert (lo.target / "made" / "f").read_text() == "m\n"



def test_a_part_applied_then_undone_then_the_whole_applied_is_no_conflict(lo):
    """A part of the session applied (one file of two with --only, one hunk
    of a modified file with --hunks), then `undo` puts the real tree back as
    the session found it. The next apply of the whole session must go
    through: what the part wrote was the session's own, and its going the
    undo's, not the user's."""
    (lo.target / "long.txt").write_text("".join("line %d\n" % i for i in range(30)))
    edit(lo, "seq 1 60 > added.txt && sed -i -e 's/^line 2$/LINE 2/' -e 's/^line 25$/LINE 25/' long.txt", "undone")
    for part in (["--only", "added.txt"], ["--hunks", "long.txt:1"]):
        r = lo("apply", "undone", *part, "--yes", "--target", lo.target)
        assert r.returncode == 0, (part, r.stderr)
        r = lo("undo", "--last", "--target", lo.target)
        assert r.returncode == 0, (part, r.stderr)
        assert not (lo.target / "added.txt").exists(), part
        assert "LINE" not in (lo.target / "long.txt").read_text(), part
    r, out = apply(lo, "undone")
    assert r.returncode == 0, out
    assert (lo.target / "added.txt").read_text() == "".join("%d\n" % i for i in range(1, 61))
    assert "LINE 2\n" in (lo.target / "long.txt").read_text() and "LINE 25\n" in (lo.target / "long.txt").read_text()
