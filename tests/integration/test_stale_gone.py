"""A real file the user deletes (or moves away) on the host while the
sandboxed command runs, after the command copied it up, is never brought
back by apply: the session's copy is marked "removed on disk since
copy-up", and apply refuses it (docs/security.md, "A real file removed
since"). A copy the command itself renamed or linked to a new name is an
addition as before, also when the user deletes other files in its dir."""
import os
from pathlib import Path

from apply_util import apply_json as apply, edit, host_removes, host_writes, paced, status_json as status, tree
from conftest import LAYOVER


def test_a_real_file_deleted_on_the_host_while_the_command_runs_does_not_come_back(lo):
    def host():
        os.remove(lo.target / "notes.txt")
        os.rename(lo.target / "docs" / "readme.txt", lo.target / "readme-moved.txt")
    paced(lo, LAYOVER, "rmhost", "echo s >> notes.txt && echo s >> docs/readme.txt && touch ready", "rm ready", host)
    ch = status(lo, "rmhost")
    assert ch["notes.txt"].get("stale") and ch["docs/readme.txt"].get("stale"), ch
    text = lo("status", "rmhost", check=True).stdout.decode()
    assert "notes.txt  (removed on disk after the sandbox's version)" in text, text
    before = tree(lo.target, mtimes=True)
    r, out = apply(lo, "rmhost")
    assert r.returncode == 1, out
    assert sorted(c["path"] for c in out["conflicts"]) == ["docs/readme.txt", "notes.txt"], out
    assert all("removed from the target" in c["reason"] for c in out["conflicts"]), out
    assert tree(lo.target, mtimes=True) == before
    assert not (lo.target / "notes.txt").exists()
    # The same from a saved patch, on the same tree.
    patch = Path(lo.state).parent / "rmhost.patch"
    lo("save", "rmhost", "-o", patch, check=True)
    r, out = apply(lo, str(patch))
    assert r.returncode == 1 and len(out["conflicts"]) == 2, out
    assert tree(lo.target, mtimes=True) == before
    # The user's choice: --force brings them back.
    r, out = apply(lo, "rmhost", "--force")
    assert r.returncode == 0, out
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\ns\n"


def test_copies_the_command_renames_or_links_stay_additions_when_the_user_deletes_beside_them(lo):
    """mv, ln + rm, and a dir made, filled with a copy, then renamed: each
    new name carries overlayfs's copy-up mark, but came by a rename or a
    link the supervisor noted. The user deleting other files in the same
    dirs meanwhile (which changes the real dirs) makes none of them stale."""
    (lo.target / "a.txt").write_text("a\n")
    (lo.target / "b.txt").write_text("b\n")
    (lo.target / "c.txt").write_text("c\n")
    (lo.target / "gone1").write_text("x\n")
    (lo.target / "docs" / "gone2").write_text("x\n")

    host = host_removes(lo, "gone1", "docs/gone2")
    paced(lo, LAYOVER, "moves",
          "echo 1 >> a.txt && echo 2 >> b.txt && echo 3 >> c.txt && echo 4 >> docs/readme.txt && touch ready",
          "mv a.txt a2.txt && ln b.txt b2.txt && rm b.txt && mkdir nd && mv c.txt nd/ && mv nd nd2 && "
          "mv docs/readme.txt docs/r2.txt && rm ready", host)
    ch = status(lo, "moves")
    for p in ("a2.txt", "b2.txt", "nd2/c.txt", "docs/r2.txt"):
        assert p in ch and not ch[p].get("stale"), (p, ch)
    r, out = apply(lo, "moves")
    assert r.returncode == 0, out
    assert (lo.target / "a2.txt").read_text() == "a\n1\n" and not (lo.target / "a.txt").exists()
    assert (lo.target / "b2.txt").read_text() == "b\n2\n" and not (lo.target / "b.txt").exists()
    assert (lo.target / "nd2" / "c.txt").read_text() == "c\n3\n"
    assert (lo.target / "docs" / "r2.txt").read_text() == "hello\nworld\n4\n"


def test_a_copy_from_an_earlier_run_deleted_on_the_host_during_the_next_run_does_not_come_back(lo):
    """Run 1 copies notes.txt up; run 2 (the same session) runs while the
    user deletes the real file: the first run's exit knew it, and run 2's
    own copies (a new one, here) count the same way."""
    edit(lo, "echo s >> notes.txt", "twice")
    host = host_removes(lo, "notes.txt", "docs/readme.txt")
    paced(lo, LAYOVER, "twice", "echo t >> docs/readme.txt && touch ready", "rm ready", host)
    ch = status(lo, "twice")
    assert ch["notes.txt"].get("stale") and ch["docs/readme.txt"].get("stale"), ch
    r, out = apply(lo, "twice")
    assert r.returncode == 1 and len(out["conflicts"]) == 2, out
    assert not (lo.target / "notes.txt").exists() and not (lo.target / "docs" / "readme.txt").exists()


def test_a_copy_linked_over_a_file_the_user_edited_then_unlinked_from_its_first_name_is_stale(lo):
    """The command copies notes.txt up; the user edits the real notes.txt;
    the command then deletes its copy and hard-links a later copy (of
    docs/readme.txt) in its place, and unlinks that first name: one link
    again, with readme's mark and a birth after the edit. The supervisor
    noted the link's name: the file counts from the run's start, stale."""
    host = host_writes(lo, {"notes.txt": "one\nhost\n"})
    paced(lo, LAYOVER, "relink", "echo s >> notes.txt && touch ready",
          "echo z >> docs/readme.txt && rm notes.txt && ln docs/readme.txt notes.txt && rm docs/readme.txt && rm ready",
          host)
    ch = status(lo, "relink")
    assert ch["notes.txt"].get("stale") and not ch["docs/readme.txt"].get("stale"), ch
    r, out = apply(lo, "relink")
    assert r.returncode == 1 and [c["path"] for c in out["conflicts"]] == ["notes.txt"], out
    assert (lo.target / "notes.txt").read_text() == "one\nhost\n"
