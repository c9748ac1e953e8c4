"""leftovers3: what the last round left open about per-hunk review.
- `apply -p` (and `--hunks`) of a file that moved on the target since the
  session's base: some of the merge's hunks apply (they were a conflict
  --force could not override).
- `diff` of a moved file over 8 MiB says what apply does (it merges up to
  64 MiB; diff said "conflict").
- the exit prompt's `hunks` keeps its answers as `apply -p` does, and each
  reuses the other's."""
import json
from pathlib import Path

import pexpect

from apply_util import tree
from conftest import LAYOVER
from test_apply_interactive import HUNK, answer_hunks

MENU = r"What now.*\? \[r/a/s/p/K/d\] "


def lines(n, edits=None):
    edits = edits or {}
    return "".join(edits.get(i, "l%d\n" % i) for i in range(1, n + 1))


AGENT = {20: "agent20\n", 35: "agent35\n"}  # two hunks, far apart
MINE = {3: "mine3\n"}  # the real file's edit since, where the agent wrote nothing


def moved_patch(lo, tmp_path, name):
    """A saved patch whose f.txt the agent edited at lines 20 and 35, and the
    real f.txt edited at line 3 since (the reviewer's tree moved on; a
    session's own real file changed after its run is a stale copy instead,
    with no original to merge from)."""
    (lo.target / "f.txt").write_text(lines(40))
    r = lo.run("cd '%s' && printf '%%s' \"$NEW\" > f.txt" % lo.target, session=name, env={"NEW": lines(40, AGENT)})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / (name + ".tar.zst")
    lo("save", name, "-o", patch, check=True)
    lo("discard", name, "--now", check=True)
    (lo.target / "f.txt").write_text(lines(40, MINE))
    return str(patch)


def spawn(lo, *args, env=None):
    e = dict(lo.env, TERM="dumb", PAGER="cat")
    e.update(env or {})
    return pexpect.spawn(LAYOVER, list(args), env=e, cwd=str(lo.target), timeout=30)


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_apply_p_takes_some_hunks_of_a_file_that_moved_on_the_target(lo, tmp_path):
    # The last round's walk offered the merge's hunks, but taking some of them was a conflict --force
    # could not override (only all of them applied).
    patch = moved_patch(lo, tmp_path, "mv")
    before = tree(lo.target, mtimes=True)
    c = spawn(lo, "apply", patch, "-p", "--target", str(lo.target))
    c.expect(r"its hunks are of what apply will write")
    c.expect(r"\(1/2\) " + HUNK)
    assert b"+agent20" in c.before and b"mine3" not in c.before, c.before
    c.sendline("y")
    c.expect(r"\(2/2\) " + HUNK)
    assert b"+agent35" in c.before, c.before
    c.sendline("n")
    c.expect(r"f.txt \(hunk 1 of 2 of the merge with changes made since\)")
    assert finish(c) == 0, c.before
    # The real edit kept, the chosen hunk merged in; undo gives the exact bytes and mtimes back.
    taken = lines(40, {**MINE, 20: "agent20\n"})
    assert (lo.target / "f.txt").read_text() == taken
    assert lo("undo", "--last", "--target", lo.target).returncode == 0
    assert tree(lo.target, mtimes=True) == before
    r = lo("apply", patch, "--target", lo.target, "--hunks", "f.txt:1", "--yes")
    assert r.returncode == 0 and (lo.target / "f.txt").read_text() == taken, r.stderr
    # diff shows the hunk left out.
    r = lo("diff", patch, "--target", lo.target)
    assert "+agent35" in r.stdout.decode() and "agent20" not in r.stdout.decode(), r.stdout
    # The rest applies later (merged again, the hunk taken is on both sides).
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == lines(40, {**MINE, **AGENT})
    assert lo("undo", "--last", "--target", lo.target).returncode == 0
    assert (lo.target / "f.txt").read_text() == taken


def test_hunks_by_number_of_a_moved_file_are_the_merges_as_diff_numbers_them(lo, tmp_path):
    patch = moved_patch(lo, tmp_path, "num")
    r = lo("diff", patch, "--target", lo.target, "--hunk-numbers", "--", "f.txt")
    heads = [ln for ln in r.stdout.decode().splitlines() if ln.startswith("@@ ")]
    assert len(heads) == 2 and "mine3" not in r.stdout.decode(), r.stdout
    r = lo("apply", patch, "--target", lo.target, "--hunks", "f.txt:2", "--yes", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert [(p["hunks"], p["of"]) for p in out["partial"]] == [([2], 2)] and [m["path"] for m in out["merged"]] == [
        "f.txt"]
    assert (lo.target / "f.txt").read_text() == lines(40, {**MINE, 35: "agent35\n"})
    # An overlapping edit still has no merge to choose from: a conflict --force does not override.
    (lo.target / "f.txt").write_text(lines(40, {20: "mine20\n"}))
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--hunks", "f.txt:1", "--yes", "--force")
    assert r.returncode == 1 and b"--force does not override this" in r.stderr, r.stderr
    assert tree(lo.target, mtimes=True) == before


def test_diff_of_a_moved_file_over_8_mib_says_apply_merges_it_as_apply_does(lo, tmp_path):
    # diff compares files over 8 MiB on both sides by their differing window only, and said "apply will
    # report a conflict" for one that moved on, where apply merges it (up to 64 MiB). Such a file is now
    # held whole, as apply holds it: the note, the diff and apply agree.
    (lo.target / "f.txt").write_text(lines(1000))
    r = lo.run("cd '%s' && seq 1 1000000 | sed 's/^/agent/' >> f.txt" % lo.target, session="big")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / "big.tar.zst"
    lo("save", "big", "-o", patch, check=True)
    mine = "".join("mine%d\n" % i for i in range(1000000))
    (lo.target / "f.txt").write_text(mine + lines(1000))
    assert (lo.target / "f.txt").stat().st_size > 8 << 20
    r = lo("diff", patch, "--target", lo.target)
    err = r.stderr.decode()
    assert r.returncode == 1 and "the diff shows what apply will write: the patch's changes merged" in err, err
    assert "report a conflict" not in err and b"\n-mine" not in r.stdout and b"\n+agent999999\n" in r.stdout
    r = lo("apply", patch, "--target", lo.target, "--dry-run", "--json")
    assert [m["path"] for m in json.loads(r.stdout)["merged"]] == ["f.txt"], r.stderr
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == mine + lines(1000) + "".join(
        "agent%d\n" % i for i in range(1, 1000001))


def test_exit_prompt_hunks_keeps_its_answers_and_shares_them_with_apply_p(lo):
    # The exit prompt's `hunks` kept no answers: a review left at [k] (or a conflicting [a]) was asked
    # again from the start. They are kept as `apply -p` keeps them, in the same place: either reuses them.
    from test_apply_hunks import EDITS, edit_session
    edit_session(lo, "x")
    before = tree(lo.target, mtimes=True)

    def pick_hunks(c):
        c.expect(MENU)
        c.sendline("p")
        c.expect(r"Pick \(")
        c.sendline("-other.txt")
        c.expect(r"Pick \(")
        c.sendline("hunks")

    c = spawn(lo, "on-exit", "prompt", "x")
    pick_hunks(c)
    answer_hunks(c, ("y", "n", "y"))
    c.expect(r"1 change\(s\) chosen")
    c.expect(MENU)
    c.sendline("k")
    c.expect(r"your 3 answer\(s\) are kept: 'layover apply x -p' or the exit prompt's hunks")
    assert finish(c) == 0
    assert tree(lo.target, mtimes=True) == before
    kept = list((Path(lo.state) / "apply-p").iterdir())
    assert len(kept) == 1
    # `apply -p` of the session offers them (Ctrl+D there applies nothing).
    c = spawn(lo, "apply", "x", "-p")
    c.expect(r"reuse its 3 answers\? \[Y/n\] ")
    c.sendeof()
    assert finish(c) == 1 and tree(lo.target, mtimes=True) == before
    # The exit prompt again: its `hunks` reuses them, asks nothing, and the apply drops them.
    c = spawn(lo, "on-exit", "prompt", "x")
    pick_hunks(c)
    c.expect(r"reuse its 3 answers\? \[Y/n\] ")
    c.sendline("")
    i = c.expect([r"reused 3 of the 3 answer\(s\)", HUNK])
    assert i == 0, c.before
    c.expect(r"1 change\(s\) chosen")
    c.expect(MENU)
    c.sendline("a")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("still holds the changes not applied")
    c.expect(MENU)  # the menu again, over the rest (prompt2)
    c.sendline("k")
    assert finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert list((Path(lo.state) / "apply-p").iterdir()) == []
