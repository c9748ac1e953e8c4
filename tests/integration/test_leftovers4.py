"""leftovers4: what the last round left open about review.
- `diff` and `apply` merged every file changed on both sides that the patch
  carries an original for, each up to 64 MiB, all held at once: three ~50 MiB
  pairs took ~790 MiB. The merges of one diff or apply now hold at most
  128 MiB of sides together (one file of the biggest size fits); a file past
  that is a conflict naming the limit, and merges on its own (--only).
- `apply -p` of a file the agent renamed: a deletion and an addition, as
  status, diff and apply see it (the capture records no renames).
- the exit prompt's `hunks` feeds [a] only; its line now says [r] and [s]
  take the picked files whole."""
import pexpect

from apply_util import tree
from conftest import LAYOVER
from test_apply_hunks import edit_session
from test_apply_interactive import WHOLE, answer_hunks

N = 2200000  # lines the agent appends, and the reviewer prepends: ~27 MiB each side


def lines(n):
    return "".join("l%d\n" % i for i in range(1, n + 1))


def merged_patch(lo, tmp_path):
    """A saved patch whose f1..f3.txt the agent grew at the end, and the real
    files grown at the start since: each merges cleanly, ~54 MiB of sides."""
    for i in (1, 2, 3):
        (lo.target / ("f%d.txt" % i)).write_text(lines(100))
    r = lo.run("cd '%s' && for f in f1 f2 f3; do seq 1 %d | sed 's/^/agent/' >> $f.txt; done" % (lo.target, N),
               session="big")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / "big.tar.zst"
    lo("save", "big", "-o", patch, check=True)
    lo("discard", "big", "--now", check=True)
    mine = "".join("mine%d\n" % i for i in range(N))
    for i in (1, 2, 3):
        (lo.target / ("f%d.txt" % i)).write_text(mine + lines(100))
    return str(patch), mine


def test_merges_of_one_apply_stay_within_the_limit_and_the_rest_merges_alone(lo, tmp_path):
    patch, mine = merged_patch(lo, tmp_path)
    agent = "".join("agent%d\n" % i for i in range(1, N + 1))
    merged = mine + lines(100) + agent
    # diff says what apply does: f1 and f2 merged, f3 past the limit (in path order), and how to merge it.
    r = lo("diff", patch, "--target", lo.target, "--stat")
    err = r.stderr.decode()
    assert r.returncode == 1, err
    for f in ("f1.txt", "f2.txt"):
        assert f + " changed on the real filesystem since the session's base was recorded; the diff shows what " \
            "apply will write" in err, err
    assert "f3.txt changed on the real filesystem since the session's base was recorded; the diff shows its " \
        "current content, and apply will report a conflict (not merged: with the files merged before it its " \
        "merge would pass the 128 MiB that merges may hold together (both sides of each file); apply it on its " \
        "own to merge it (--only f3.txt))" in err, err
    r = lo("diff", patch, "--target", lo.target, "--stat", "--", "f3.txt")
    assert "f3.txt changed on the real filesystem since the session's base was recorded; the diff shows what " \
        "apply will write" in r.stderr.decode(), r.stderr
    # apply: nothing written, f3 the one conflict, with the same reason.
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes")
    err = r.stderr.decode()
    assert r.returncode == 1 and "f3.txt: changed on both sides since the base; not merged: with the files merged " \
        "before it" in err and "f1.txt:" not in err and "f2.txt:" not in err, err
    assert tree(lo.target, mtimes=True) == before
    # On its own it merges, and then the other two together.
    r = lo("apply", patch, "--target", lo.target, "--only", "f3.txt", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f3.txt").read_text() == merged
    assert (lo.target / "f1.txt").read_text() == mine + lines(100)
    r = lo("apply", patch, "--target", lo.target, "--exclude", "f3.txt", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    for f in ("f1.txt", "f2.txt", "f3.txt"):
        assert (lo.target / f).read_text() == merged, f


def test_apply_p_of_a_renamed_file_asks_about_the_deletion_and_the_addition(lo):
    (lo.target / "a.txt").write_text(lines(20))
    r = lo.run("cd '%s' && mv a.txt b.txt && sed -i 's/^l5$/five/' b.txt" % lo.target, session="mv")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    r = lo("diff", "mv", "--name-status")
    assert r.stdout.decode() == "D\ta.txt\nA\tb.txt\n", r.stdout
    c = pexpect.spawn(LAYOVER, ["apply", "mv", "-p"], env=dict(lo.env, TERM="dumb"), cwd=str(lo.target), timeout=30)
    c.expect(r"D  a.txt.*" + WHOLE)
    c.sendline("y")
    c.expect(r"A  b.txt.*" + WHOLE)
    c.sendline("y")
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0, c.before
    assert not (lo.target / "a.txt").exists()
    assert (lo.target / "b.txt").read_text() == lines(20).replace("l5\n", "five\n")


def test_exit_prompt_hunks_says_r_and_s_take_the_picked_files_whole(lo, tmp_path):
    edit_session(lo, "x")
    c = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "x"], env=dict(lo.env, TERM="dumb", PAGER="cat"),
                      cwd=str(lo.target), timeout=30)
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("-other.txt")
    c.expect(r"Pick \(")
    c.sendline("hunks")
    answer_hunks(c, ("y", "n", "y"))
    c.expect(r"1 change\(s\) chosen; \[a\] applies them \(\[r\] and \[s\] take files whole\)")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("r")  # the picked file whole: the hunk answered n is shown too
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    assert b"+twenty-five" in c.before and b"other.txt" not in c.before, c.before
    c.sendline("a")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("still holds the changes not applied")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")  # the menu again, over the rest (prompt2)
    c.sendline("k")
    c.expect(pexpect.EOF)
    c.close()
    got = (lo.target / "f.txt").read_text().splitlines()
    assert "five" in got and "forty-five" in got and "twenty-five" not in got, got
