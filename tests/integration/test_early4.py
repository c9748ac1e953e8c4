"""early4: `apply -p` (and the exit prompt's `hunks`) says a file apply would
refuse before its questions, not after the last answer.
- a file changed on both sides that does not merge: one line, then left out
  unasked (the rest applies); with --force, asked about whole (y overwrites).
- a conflict --force does not override: said before the first question,
  naming the file and the fix; nothing asked or applied."""
import shutil

import pexpect

from conftest import LAYOVER
from test_apply_interactive import HUNK, WHOLE


def lines(n, edits=None):
    edits = edits or {}
    return "".join(edits.get(i, "l%d\n" % i) for i in range(1, n + 1))


AGENT = {20: "agent20\n", 35: "agent35\n"}
MINE = {20: "mine20\n"}  # the real file's edit since, on a line the agent edited too: no clean merge


def saved_patch(lo, tmp_path, name, script):
    (lo.target / "f.txt").write_text(lines(40))
    (lo.target / "g.txt").write_text(lines(10))
    (lo.target / "sub").mkdir(exist_ok=True)
    (lo.target / "sub" / "x.txt").write_text("x\n")
    r = lo.run("cd '%s' && %s" % (lo.target, script), session=name, env={"NEW": lines(40, AGENT)})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / (name + ".tar.zst")
    lo("save", name, "-o", patch, check=True)
    lo("discard", name, "--now", check=True)
    return str(patch)


def spawn(lo, *args):
    env = dict(lo.env, TERM="dumb", PAGER="cat")
    return pexpect.spawn(LAYOVER, list(args), env=env, cwd=str(lo.target), timeout=60)


def finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


EDIT_BOTH = "printf '%s' \"$NEW\" > f.txt && echo g-new > g.txt"


def test_apply_p_leaves_out_a_conflicting_file_before_its_hunks(lo, tmp_path):
    patch = saved_patch(lo, tmp_path, "both", EDIT_BOTH)
    (lo.target / "f.txt").write_text(lines(40, MINE))
    c = spawn(lo, "apply", patch, "-p", "--target", str(lo.target))
    # Said before any question about f.txt, which is never walked.
    i = c.expect([r"f\.txt conflicts with the target: [^\n]*left out, not asked about", HUNK, WHOLE])
    assert i == 0, c.before
    c.expect(HUNK)
    assert b"g.txt" in c.before and b"agent20" not in c.before, c.before
    c.sendline("y")
    assert finish(c) == 0, c.before
    assert (lo.target / "f.txt").read_text() == lines(40, MINE)
    assert (lo.target / "g.txt").read_text() == "g-new\n"


def test_apply_p_force_asks_about_a_conflicting_file_whole(lo, tmp_path):
    patch = saved_patch(lo, tmp_path, "forced", EDIT_BOTH)
    (lo.target / "f.txt").write_text(lines(40, MINE))
    c = spawn(lo, "apply", patch, "-p", "--force", "--target", str(lo.target))
    i = c.expect([r"f\.txt conflicts with the target: [^\n]*y overwrites the target's version", HUNK])
    assert i == 0, c.before
    c.expect(WHOLE)
    c.sendline("y")
    c.expect(HUNK)
    c.sendline("n")
    assert finish(c) == 0, c.before
    assert (lo.target / "f.txt").read_text() == lines(40, AGENT)
    assert (lo.target / "g.txt").read_text() == lines(10)


def test_apply_p_says_a_conflict_force_does_not_override_before_the_first_question(lo, tmp_path):
    patch = saved_patch(lo, tmp_path, "gone", "echo x2 > sub/x.txt && echo g-new > g.txt")
    shutil.rmtree(lo.target / "sub")  # its parent gone: a conflict --force does not override
    c = spawn(lo, "apply", patch, "-p", "--force", "--target", str(lo.target))
    i = c.expect([r"--force does not override; apply would refuse it whatever the answers", HUNK, WHOLE])
    assert i == 0, c.before
    c.expect(r"sub/x\.txt: ")
    c.expect(r"fix: put back what they need, or leave them out with --exclude GLOB")
    assert finish(c) == 1, c.before
    assert b"Apply this" not in c.before
    assert (lo.target / "g.txt").read_text() == lines(10)
    assert not (lo.target / "sub").exists()


def test_exit_prompt_hunks_asks_about_a_conflicting_file_whole(lo):
    # The exit prompt's `hunks` walked a file changed on the target since, hunk by hunk, and [a]
    # then refused the hunks chosen whatever [f] said (a file taken by hunk must be as the base was).
    from test_apply_hunks import NEW, edit_session
    edit_session(lo, "x")
    (lo.target / "f.txt").write_text("changed on the target since\n")
    c = spawn(lo, "on-exit", "prompt", "x")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("hunks")
    i = c.expect([r"f\.txt conflicts with the target: [^\n]*\[a\] then offers to overwrite", HUNK])
    assert i == 0, c.before
    c.expect(WHOLE)
    c.sendline("y")
    c.expect(WHOLE)  # other.txt, added
    c.sendline("n")
    c.expect(r"Why not\? .*: ")
    c.sendline("")
    c.expect(r"1 change\(s\) chosen")
    c.expect(r"\[r/a/s/p/K/d\] ")
    c.sendline("a")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect(r"\[f\] overwrite them")
    c.sendline("f")
    c.expect(r"\[r/a/s/p/K/d\] |still holds|applied")
    c.sendline("k")
    finish(c)
    assert (lo.target / "f.txt").read_text() == NEW
    assert not (lo.target / "other.txt").exists()
