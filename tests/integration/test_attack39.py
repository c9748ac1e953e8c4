"""attack39: the exit prompt's [p] as a hostile program's file names meet
it. The picked changes went to apply, save, review and `hunks` as --only
paths: a name holding '*', '?' or '[' was read as a glob there (a file
`notes[1].txt` picked alone brought `notes1.txt` along), and a picked new
directory brought its whole subtree, the changes unpicked in it too."""
import json
import re

import pexpect

from conftest import LAYOVER

MENU = r"What now.*\? \[r/a/s/p/K/d\] "


def _prompt(lo, name):
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    return pexpect.spawn(LAYOVER, ["on-exit", "prompt", name], env=e, cwd=str(lo.target), timeout=15)


def _finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def _pick(lo, name, picks):
    c = _prompt(lo, name)
    c.expect(MENU)
    c.sendline("p")
    c.expect(r"Pick \(")
    listed = dict((m.group(2), m.group(1)) for m in re.finditer(r"\] (\d+)  A  (\S+)\r", c.before.decode()))
    c.sendline("none " + " ".join(listed[p] for p in picks[0]) if isinstance(picks[0], tuple) else picks[0])
    for p in picks[1:]:
        c.expect(r"Pick \(.*; Enter when done\): ")
        c.sendline(p)
    c.expect(r"Pick \(.*; Enter when done\): ")
    c.sendline("")
    c.expect(MENU)
    return c


def _pick_then_apply(lo, name, picks, count):
    c = _pick(lo, name, picks)
    c.sendline("a")
    c.expect(r"Apply %d changes? to .*\[y/N\] " % count)
    c.sendline("y")
    c.expect("applied")
    c.expect(MENU)
    c.sendline("k")
    assert _finish(c) == 0


def test_a_picked_name_holding_glob_characters_applies_that_file_alone(lo):
    r = lo.run("cd '%s' && echo mine > 'notes[1].txt' && echo evil > notes1.txt && echo star > '*'" % lo.target,
               session="g")
    assert r.returncode == 0, r.stderr
    _pick_then_apply(lo, "g", [("notes[1].txt",)], 1)
    assert (lo.target / "notes[1].txt").read_text() == "mine\n"
    assert not (lo.target / "notes1.txt").exists() and not (lo.target / "*").exists()
    _pick_then_apply(lo, "g", [("*",)], 1)
    assert (lo.target / "*").read_text() == "star\n" and not (lo.target / "notes1.txt").exists()


def test_a_picked_new_dir_with_a_file_in_it_unpicked_leaves_that_file_out(lo, tmp_path):
    r = lo.run("cd '%s' && mkdir nd && echo a > nd/a && echo b > nd/b" % lo.target, session="d")
    assert r.returncode == 0, r.stderr
    # [r] and [s] take the pick as [a] does.
    c = _pick(lo, "d", ["nd", "-nd/b"])
    c.sendline("r")
    c.expect(MENU)
    shown = c.before.decode(errors="replace")
    assert "+++ b/nd/a" in shown and "nd/b" not in shown, shown
    c.sendline("s")
    c.expect(r"Save patch to .*: ")
    c.sendline(str(tmp_path / "p.tar.zst"))
    c.expect("saved")
    c.expect(MENU)
    c.sendline("k")
    assert _finish(c) == 0
    r = lo("apply", tmp_path / "p.tar.zst", "--target", lo.target, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    assert sorted(x["path"] for x in json.loads(r.stdout)["applied"]) == ["nd", "nd/a"], r.stdout
    _pick_then_apply(lo, "d", ["nd", "-nd/b"], 2)
    assert (lo.target / "nd/a").read_text() == "a\n"
    assert not (lo.target / "nd/b").exists()


def test_a_rejected_new_dir_counts_what_it_holds_out_of_the_question(lo):
    # A rejected new dir leaves out all it holds (apply's --exclude of it); [a] counted only the dir out
    # of 'Apply N changes?': 'Apply 2 changes?' then applied nothing.
    r = lo.run("cd '%s' && mkdir nd && echo a > nd/a && echo b > nd/b" % lo.target, session="rd")
    assert r.returncode == 0, r.stderr
    lo("reject", "rd", "nd", check=True)
    c = _prompt(lo, "rd")
    c.expect(MENU)
    c.sendline("a")
    c.expect(r"skipping 1 rejected change\(s\)")
    i = c.expect([r"every selected change is rejected; nothing left to apply", r"\[y/N\] "])
    assert i == 0, c.before
    c.expect(MENU)
    c.sendline("k")
    assert _finish(c) == 0
    assert not (lo.target / "nd").exists()
