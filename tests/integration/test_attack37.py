"""attack37: the exit prompt's menu after a partial apply (prompt2), the
inode floor and the verdict cache, attacked. Checked on the real filesystem
afterwards."""
import pexpect

from test_apply_hunks import BASE, EDITS, edit_session, lines
from test_prompt_rest import HUNK, MENU, WHOLE, _finish, _prompt, apply_to_rest_menu


def _walk_and_apply(c, hunks, whole, why=""):
    """At the menu: `hunks`, f.txt's three hunks answered `hunks`, other.txt
    `whole` (each "n" given the reason `why`); applied, at the rest's menu."""
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("hunks")
    for pattern, answer in [(r"/3\) " + HUNK, a) for a in hunks] + [(WHOLE, whole)]:
        c.expect(pattern)
        c.sendline(answer)
        if answer == "n":
            c.expect(r"Why not\? .*: ")
            c.sendline(why)
    c.expect(MENU)
    apply_to_rest_menu(c)


def _apply_hunks_1_and_3(c):
    """f.txt's first and third hunks taken, the second left, other.txt taken; applied."""
    _walk_and_apply(c, ("y", "n", "y"), "y")


def test_a_at_the_rest_menu_does_not_overwrite_a_host_edit_made_after_the_partial_apply(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    _apply_hunks_1_and_3(c)
    applied = lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert (lo.target / "f.txt").read_text() == applied
    # The person edits f.txt on the host while the menu waits (line 50).
    host = applied.replace("l50\n", "host fifty\n")
    (lo.target / "f.txt").write_text(host)
    c.sendline("a")
    i = c.expect([r"\[y/N\] ", "conflict", MENU])
    if i == 0:
        c.sendline("y")
    c.expect([MENU, pexpect.EOF])
    if c.isalive():
        c.sendline("k")
    _finish(c)
    assert "host fifty" in (lo.target / "f.txt").read_text(), (lo.target / "f.txt").read_text()


def test_ctrl_c_at_the_rest_menu_keeps_the_rest(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    _apply_hunks_1_and_3(c)
    c.sendintr()
    c.expect("kept; review it later with")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert (lo.upper("r") / "f.txt").read_text() == lines(60, EDITS)
    out = lo("status", "r", "--no-pager", check=True).stdout.decode()
    assert "M  f.txt" in out and "other.txt" not in out, out


def test_a_at_the_rest_menu_does_not_apply_a_change_rejected_before(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    _walk_and_apply(c, ("y", "y", "y"), "n", why="no other")  # other.txt, added: rejected with a reason
    assert "R  other.txt" in c.before.decode(), c.before.decode()
    c.sendline("a")
    i = c.expect([r"\[y/N\] ", MENU, pexpect.EOF])
    if i == 0:
        c.sendline("y")
        i = c.expect([MENU, pexpect.EOF])
    if i != 2:
        c.sendline("k")
    _finish(c)
    assert not (lo.target / "other.txt").exists()
    assert (lo.upper("r") / "other.txt").read_text() == "other\n" or (lo.state / "trash" / "r").exists()


def test_d_at_the_rest_menu_keeps_the_partial_apply_undoable(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    _apply_hunks_1_and_3(c)
    c.sendline("d")
    c.expect(r"Discard session 'r' .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("discarded")
    assert _finish(c) == 0
    r = lo("undo", "--last", "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == BASE
    assert not (lo.target / "other.txt").exists()


def test_a_file_applied_then_edited_on_the_host_is_not_put_back_by_a_at_the_rest_menu(lo):
    edit_session(lo, "r")
    c = _prompt(lo, "r")
    c.expect(MENU)
    _apply_hunks_1_and_3(c)
    assert (lo.target / "other.txt").read_text() == "other\n"
    # The person changes the file they applied, while the menu waits.
    (lo.target / "other.txt").write_text("host\n")
    answers = {0: "y", 1: "a", 3: "b"}  # [b]: a conflict (the stale copy) sends back to the menu
    c.sendline("a")
    for _ in range(10):  # [a] while the menu comes back (each time over what is left then)
        i = c.expect([r"\[y/N\] ", MENU, pexpect.EOF, r"\[b\] back to the menu \(default\): "])
        if i == 2 or (i == 1 and _ > 6):
            break
        c.sendline(answers[i])
    if c.isalive():
        c.sendline("k")
    _finish(c)
    assert (lo.target / "other.txt").read_text() == "host\n"
