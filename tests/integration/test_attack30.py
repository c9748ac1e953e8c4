"""attack30: hostile patches and target states against early4's conflict
check before `apply -p`'s questions."""
import re

import pexpect

from test_apply_interactive import HUNK, WHOLE, WHY
from test_early4 import finish, saved_patch, spawn


def test_apply_p_force_names_every_conflict_beneath_a_dir_asked_about_whole(lo, tmp_path):
    # The agent removed sub/; since, the user changed two files in it.
    # `apply -p --force` asks about sub whole, and y removes both (kept for
    # undo): the line before the question named only the first of them.
    (lo.target / "sub").mkdir(exist_ok=True)
    (lo.target / "sub" / "a.txt").write_text("a\n")
    (lo.target / "sub" / "z.txt").write_text("z\n")
    patch = saved_patch(lo, tmp_path, "rmdir", "rm -rf sub")
    (lo.target / "sub" / "a.txt").write_text("a mine\n")
    (lo.target / "sub" / "z.txt").write_text("z mine\n")
    c = spawn(lo, "apply", patch, "-p", "--force", "--target", str(lo.target))
    i = c.expect([r"sub \(([^\n]*) beneath it\) conflicts with the target", HUNK, WHOLE])
    assert i == 0, c.before
    said = c.match.group(1).decode()
    assert "sub/a.txt" in said and "sub/z.txt" in said, said
    c.expect(WHOLE)
    c.sendline("n")
    assert finish(c) == 0, c.before
    assert (lo.target / "sub" / "z.txt").read_text() == "z mine\n"


def test_apply_p_force_asks_again_about_a_file_a_kept_yes_was_given_before_it_conflicted(lo):
    # Held (no fix): a kept `y` (from a --dry-run walk) to adding new.txt,
    # where nothing was; then the user made their own new.txt. `apply -p
    # --force` says the conflict, "y overwrites the target's version", and
    # asks: the old y, given to a change with nothing in its way, is not
    # taken as a yes to overwriting.
    r = lo.run("cd '%s' && echo agent > new.txt" % lo.target, session="kept")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    c = spawn(lo, "apply", "kept", "-p", "--dry-run")
    c.expect(WHOLE)
    c.sendline("y")
    c.expect(r"answer\(s\) are kept")
    assert finish(c) == 0, c.before
    (lo.target / "new.txt").write_text("mine\n")
    decline_the_forced_question(lo, "kept", "new.txt")
    assert (lo.target / "new.txt").read_text() == "mine\n"


def decline_the_forced_question(lo, session, name):
    """`apply -p --force` reusing the kept answers: `name`'s conflict is said
    and asked about anew, whole, and answered n (nothing applied)."""
    c = spawn(lo, "apply", session, "-p", "--force")
    c.expect(r"reuse its 1 answers?\? \[Y/n\] ")
    c.sendline("")
    c.expect(re.escape(name) + r" conflicts with the target: [^\n]*y overwrites the target's version")
    i = c.expect([WHOLE, pexpect.EOF])
    assert i == 0, c.before
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    finish(c)


def agent_rewrites_blob(lo, session):
    """blob.bin (binary: asked about whole) in the real tree, which the agent rewrites in `session`."""
    (lo.target / "blob.bin").write_bytes(b"\0base\n")
    r = lo.run("cd '%s' && printf '\\0agent\\n' > blob.bin" % lo.target, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def test_apply_p_force_asks_again_about_a_binary_file_a_kept_yes_was_given_before_it_conflicted(lo):
    # A kept `y` (from a --dry-run walk) to the agent's edit of blob.bin;
    # then the user changed blob.bin too. `apply -p --force` said the
    # conflict and "y overwrites the target's version", then took the old
    # y, given while nothing was in its way, without a question, and
    # overwrote the user's edit. A conflict's whole question is now asked
    # anew.
    agent_rewrites_blob(lo, "keptbin")
    c = spawn(lo, "apply", "keptbin", "-p", "--dry-run")
    c.expect(WHOLE)
    c.sendline("y")
    c.expect(r"answer\(s\) are kept")
    assert finish(c) == 0, c.before
    (lo.target / "blob.bin").write_bytes(b"\0mine\n")
    decline_the_forced_question(lo, "keptbin", "blob.bin")
    assert (lo.target / "blob.bin").read_bytes() == b"\0mine\n"


def test_apply_p_force_refuses_a_conflict_that_arose_while_the_questions_were_asked(lo):
    # blob.bin had no conflict when `apply -p --force` asked about it; the
    # user edited it before answering y. --force overrode that conflict,
    # said only after the fact ('overriding conflict'), and the edit was
    # gone (kept for undo). Now the check runs again on the selection: a
    # conflict new since refuses the apply, nothing written, answers kept.
    agent_rewrites_blob(lo, "during")
    c = spawn(lo, "apply", "during", "-p", "--force")
    c.expect(WHOLE)
    (lo.target / "blob.bin").write_bytes(b"\0mine, during the walk\n")
    c.sendline("y")
    c.expect(r"1 conflict arose while the questions were asked; --force overrides only those said before them, "
             r"so nothing was applied")
    c.expect(r"blob\.bin: ")
    assert finish(c) == 1, c.before
    assert (lo.target / "blob.bin").read_bytes() == b"\0mine, during the walk\n"
    # Again: the kept y is not taken for the conflict; asked about anew.
    c = spawn(lo, "apply", "during", "-p", "--force")
    c.expect(r"reuse its 1 answers?\? \[Y/n\] ")
    c.sendline("")
    c.expect(r"blob\.bin conflicts with the target: [^\n]*y overwrites the target's version")
    c.expect(WHOLE)
    c.sendline("y")
    assert finish(c) == 0, c.before
    assert (lo.target / "blob.bin").read_bytes() == b"\0agent\n"
