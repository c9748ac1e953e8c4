"""A stale copy is judged against when the session first had the path, not
the upper file's birth: `sed -i` (a new file renamed over the copy) must not
hide a real edit made after the copy-up; and a real file that was there
when the session knew it, then deleted or moved away, is a conflict, never
brought back (docs/security.md, "Conflicts")."""
import os
import time

from apply_util import apply_json as apply, edit, paced, status_json as status, tree
from conftest import LAYOVER


def test_a_file_edited_in_the_session_then_deleted_or_moved_away_on_the_host_is_a_conflict(lo, tmp_path):
    edit(lo, "echo more >> docs/readme.txt && echo sandbox >> notes.txt && echo n > fresh.txt", "gone")
    patch = tmp_path / "gone.tar.zst"
    lo("save", "gone", "-o", patch, check=True)  # before the host's changes: its bases are the files
    os.rename(lo.target / "docs", lo.target / "doc")
    os.unlink(lo.target / "notes.txt")
    ch = status(lo, "gone")
    assert ch["docs/readme.txt"]["stale"] and ch["notes.txt"]["stale"]
    assert not ch["fresh.txt"].get("stale")
    text = lo("status", "gone", check=True).stdout.decode()
    assert "notes.txt  (removed on disk after the sandbox's version)" in text, text
    before = tree(lo.target, mtimes=True)
    r, out = apply(lo, "gone")
    assert r.returncode == 1
    assert sorted(c["path"] for c in out["conflicts"]) == ["docs/readme.txt", "notes.txt"], out
    assert all("removed from the target" in c["reason"] for c in out["conflicts"]), out
    assert tree(lo.target, mtimes=True) == before  # nothing brought back, nothing written
    # A patch saved now carries the same: its apply elsewhere is refused too.
    later = tmp_path / "later.tar.zst"
    lo("save", "gone", "-o", later, check=True)
    for saved in (later, patch):
        r = lo("apply", saved, "--yes", "--target", lo.target)
        assert r.returncode == 1 and b"notes.txt" in r.stderr, r.stderr
        assert tree(lo.target, mtimes=True) == before
    # The session's new file alone applies; --force brings a removed one back (the user's choice).
    r, out = apply(lo, "gone", "--exclude", "docs", "--exclude", "notes.txt")
    assert r.returncode == 0, out
    assert (lo.target / "fresh.txt").read_text() == "n\n"
    assert not (lo.target / "notes.txt").exists() and not (lo.target / "docs").exists()
    r, out = apply(lo, "gone", "--force")
    assert r.returncode == 0, out
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\nsandbox\n"
    assert (lo.target / "docs" / "readme.txt").read_text() == "hello\nworld\nmore\n"
    assert (lo.target / "doc" / "readme.txt").read_text() == "hello\nworld\n"


def test_a_copy_remade_by_sed_i_after_the_real_file_changed_in_the_run_is_stale(lo):
    """The command copies notes.txt up, the host edits the real file, then
    the command rewrites its copy with `sed -i` (a new file, born after the
    host's edit): the copy it edited is the old one."""
    def host():
        (lo.target / "notes.txt").write_text("the host's edit during the run\n")
    paced(lo, LAYOVER, "sed", "echo sandbox >> notes.txt", "sed -i s/one/ONE/ notes.txt", host, ready="notes.txt")
    copy = lo.upper("sed") / "notes.txt"
    assert copy.read_text() == "ONE\ntwo\nthree\nsandbox\n"
    assert status(lo, "sed")["notes.txt"]["stale"]
    r, res = apply(lo, "sed")
    assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], res
    assert "stale" in res["conflicts"][0]["reason"]
    assert (lo.target / "notes.txt").read_text() == "the host's edit during the run\n"


def test_a_real_file_renamed_over_an_older_copy_after_a_host_edit_is_stale(lo):
    """notes.txt is copied up, the host edits it, then the command copies up
    another real file and renames it over notes.txt (`mv a b`): the new copy
    carries the other file's copy-up mark and birth, after the host's edit;
    the supervisor noted the older copy's birth as it let the rename run."""
    (lo.target / "notes.default").write_text("defaults\n")
    def host():
        time.sleep(0.05)
        (lo.target / "notes.txt").write_text("the host's edit during the run\n")
        time.sleep(0.05)
    paced(lo, LAYOVER, "mv", "echo sandbox >> notes.txt", "echo tuned >> notes.default && mv notes.default notes.txt",
          host, ready="notes.txt")
    assert (lo.upper("mv") / "notes.txt").read_text() == "defaults\ntuned\n"
    assert status(lo, "mv")["notes.txt"]["stale"]
    r, res = apply(lo, "mv")
    assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], res
    assert (lo.target / "notes.txt").read_text() == "the host's edit during the run\n"
    assert (lo.target / "notes.default").read_text() == "defaults\n"


def test_a_copy_from_an_earlier_run_remade_after_a_host_edit_is_stale_a_first_touch_is_not(lo):
    """Run 1 copies notes.txt up; the host then edits it and readme.txt;
    run 2 (a resume) rewrites both with `sed -i`. notes.txt's copy came from
    run 1, before the host's edit: stale. readme.txt was first read in run 2,
    after the host's edit: no conflict, it applies."""
    edit(lo, "echo sandbox >> notes.txt", "two")
    (lo.target / "notes.txt").write_text("one\nthe host's edit between runs\n")
    (lo.target / "docs" / "readme.txt").write_text("hello\nhost\n")
    time.sleep(1.1)  # steps record their start to the second
    edit(lo, "sed -i s/one/ONE/ notes.txt && sed -i s/hello/HELLO/ docs/readme.txt", "two")
    ch = status(lo, "two")
    assert ch["notes.txt"]["stale"] and not ch["docs/readme.txt"].get("stale"), ch
    r, res = apply(lo, "two")
    assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], res
    r, res = apply(lo, "two", "--exclude", "notes.txt")
    assert r.returncode == 0, res
    assert (lo.target / "docs" / "readme.txt").read_text() == "HELLO\nhost\n"
    assert (lo.target / "notes.txt").read_text() == "one\nthe host's edit between runs\n"
