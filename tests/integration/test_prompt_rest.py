"""The exit prompt after a partial apply (prompt2): the menu comes back with
what the session still holds, so [s] saves the rest, [d] discards it and [a]
applies it from there. Checked on the real filesystem and in the saved patch
afterwards."""
import json

import pexpect

from conftest import LAYOVER
from test_apply_hunks import BASE, EDITS, edit_session, lines

MENU = r"What now.*\? \[r/a/s/p/K/d\] "
HUNK = r"Apply this hunk \[y,n,q,a,d(,s)?,e,\?\]\? "
WHOLE = r"Apply this change \[y,n,q,\?\]\? "
LEFT = "layover: session 'r' still holds the changes not applied:"


def _prompt(lo, name):
    return pexpect.spawn(LAYOVER, ["on-exit", "prompt", name], env=dict(lo.env, PAGER="cat", TERM="dumb"),
                         cwd=str(lo.target), timeout=30)


def _finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def apply_to_rest_menu(c):
    """At the menu: [a], yes; on to the menu over what is left."""
    c.sendline("a")
    c.expect(r"\[y/N\] ")
    c.sendline("y")
    c.expect_exact(LEFT)
    c.expect(MENU)


def test_after_hunks_and_a_partial_apply_the_menu_offers_the_rest_and_s_saves_it_without_the_rejected(lo, tmp_path):
    # Before: the prompt ended after the partial apply, naming status, apply
    # and discard; saving the rest took knowing `layover save NAME -o FILE`.
    edit_session(lo, "r", " && echo third > third.txt")
    c = _prompt(lo, "r")
    c.expect(MENU)
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("-third.txt")
    c.expect(r"Pick \(")
    c.sendline("hunks")
    for answer in ("y", "n", "y"):  # f.txt's three hunks; the second rejected, with a reason
        c.expect(r"/3\) " + HUNK)
        c.sendline(answer)
        if answer == "n":
            c.expect(r"Why not\? .*: ")
            c.sendline("keep line 25")
    c.expect(WHOLE)  # other.txt, added
    c.sendline("y")
    c.expect_exact("2 change(s) chosen")
    c.expect(MENU)
    c.sendline("a")
    c.expect(r"Apply 2 changes to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("applied 2 change")
    c.expect_exact(LEFT)
    # The summary of what is left: f.txt's rejected hunk, and third.txt, not picked.
    c.expect(MENU)
    rest = c.before.decode()
    assert "M  f.txt" in rest and "A  third.txt" in rest and "other.txt" not in rest, rest
    assert "R  f.txt [hunk 1] rejected: keep line 25" in rest, rest
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert (lo.target / "other.txt").read_text() == "other\n"
    assert not (lo.target / "third.txt").exists()
    c.sendline("s")
    c.expect(r"Save patch to .*: ")
    c.sendline(str(tmp_path / "rest.tar.zst"))
    c.expect_exact("leaving out 1 rejected change(s)")
    c.expect(MENU)
    c.sendline("d")
    c.expect(r"Discard session 'r' and its 2 changes\? \[y/N\] ")
    c.sendline("y")
    c.expect("discarded")
    assert _finish(c) == 0
    shown = json.loads(lo("show", tmp_path / "rest.tar.zst", "--json", check=True).stdout)
    assert [x["path"] for x in shown] == ["third.txt"], shown
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "third.txt").exists()
    assert (lo.state / "trash" / "r" / "upper").is_dir() and not (lo.state / "sessions" / "r").exists()


def test_after_a_partial_apply_of_picked_files_a_applies_the_rest_and_the_session_goes_to_the_trash(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("-f.txt")
    c.expect(r"Pick \(")
    c.sendline("")
    c.expect(MENU)
    c.sendline("a")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect_exact(LEFT)
    c.expect(r"What now\? \[r/a/s/p/K/d\] ")  # everything that is left picked again
    rest = c.before.decode()
    assert "M  f.txt" in rest and "other.txt" not in rest, rest
    assert (lo.target / "other.txt").read_text() == "other\n" and (lo.target / "f.txt").read_text() == BASE
    listed = {s["name"]: s for s in json.loads(lo("sessions", "--json", check=True).stdout)}
    assert listed["r"]["changes"] == 1, listed["r"]
    c.sendline("a")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("moved to the trash")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, EDITS)
    assert (lo.state / "trash" / "r" / "upper").is_dir()


def test_after_a_partial_apply_k_keeps_the_rest_in_the_session(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("-other.txt")
    c.expect(r"Pick \(")
    c.sendline("")
    c.expect(MENU)
    apply_to_rest_menu(c)
    c.sendline("k")
    c.expect_exact("layover: session 'r' kept; review it later")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, EDITS) and not (lo.target / "other.txt").exists()
    assert (lo.upper("r") / "other.txt").read_text() == "other\n"
    out = lo("status", "r", "--no-pager", check=True).stdout.decode()
    assert "A  other.txt" in out and "f.txt" not in out, out
