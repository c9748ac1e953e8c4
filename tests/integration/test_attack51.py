"""attack51: the exit prompt's [p] with nothing picked ("none"): the scope
given to save, review and `hunks` was empty, which there means every
change, so [s] wrote a patch of the whole session, the changes the person
had just left out among them ([a] said "nothing is selected")."""
import pexpect

from conftest import LAYOVER

MENU = r"What now.*\? \[r/a/s/p/K/d\] "


def _none_picked(lo, name):
    c = pexpect.spawn(LAYOVER, ["on-exit", "prompt", name], env=dict(lo.env, PAGER="cat", TERM="dumb"),
                      cwd=str(lo.target), timeout=15)
    c.expect(MENU)
    c.sendline("p")
    c.expect(r"Pick \(.*; Enter when done\): ")
    c.sendline("none")
    c.expect(r"Pick \(0 of 2 changes picked; Enter when done\): ")
    c.sendline("")
    c.expect(MENU)
    return c


def test_save_review_and_hunks_with_nothing_picked_take_nothing(lo, tmp_path):
    r = lo.run("cd '%s' && echo mine > a.txt && echo not-this > left-out.txt" % lo.target, session="n")
    assert r.returncode == 0, r.stderr
    c = _none_picked(lo, "n")
    out = tmp_path / "p.tar.zst"
    c.sendline("s")
    if c.expect([r"Save patch to .*: ", MENU]) == 0:  # it asked: then it saves the whole session
        c.sendline(str(out))
        c.expect(MENU)
    saving = c.before.decode(errors="replace")
    c.sendline("r")
    c.expect(MENU)
    shown = c.before.decode(errors="replace")
    c.sendline("hunks")
    walked, i = "", 0
    while i == 0:  # a question: it walked what was left out
        i = c.expect([r"Apply this (change|hunk).*\? ", MENU, pexpect.EOF])
        walked += c.before.decode(errors="replace") if i == 0 else ""
        if i == 0:
            c.sendline("q")
    if i == 1:
        c.sendline("k")
        c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0
    assert not out.exists(), "saved the whole session with nothing picked"
    assert "nothing is selected" in saving, saving
    assert "left-out.txt" not in shown and "nothing is selected" in shown, shown
    assert walked == "", walked
    assert not (lo.target / "a.txt").exists() and not (lo.target / "left-out.txt").exists()
