"""attack30: hostile patches and target states against early4's conflict
check before `apply -p`'s questions."""
import pexpect

from test_apply_interactive import HUNK, WHOLE
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
