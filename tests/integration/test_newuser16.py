"""Three new users (newuser16), from README.md and docs/ alone: a developer
at the exit prompt, a reviewer handed a patch file, a user keeping sessions
over days. What tripped them, each test failing before its fix; checked on
the real filesystem afterwards."""
import json

import pexpect
import pytest

from conftest import LAYOVER

MENU = r"What now.*\? \[r/a/s/p/K/d\] "


def test_hunks_at_the_menu_asks_hunk_by_hunk_as_p_then_hunks_does(lo, home):
    # Before: the `?` help names 'hunks' on [p]'s line, so a developer typed it
    # at the menu and got "unknown choice 'hunks'"; only p, then hunks at the
    # Pick question, walked the hunks.
    lines = ["line %d\n" % i for i in range(1, 13)]
    (home / "f.txt").write_text("".join(lines))
    lo.run("sed -i -e 's/^line 1$/LINE 1/' -e 's/^line 12$/LINE 12/' f.txt", session="s", check=True)
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "s"], env=dict(lo.env, PAGER="cat", TERM="dumb"),
                          cwd=str(home), timeout=30)
    child.expect(MENU)
    child.sendline("hunks")
    child.expect(r"\(1/2\) Apply this hunk")
    child.sendline("y")
    child.expect(r"\(2/2\) Apply this hunk")
    child.sendline("n")
    child.expect("Why not")
    child.sendline("")
    child.expect_exact("1 change(s) chosen; [a] applies them")
    child.expect(MENU)
    child.sendline("a")
    child.expect(r"\[y/N\]")
    child.sendline("y")
    child.expect("still holds the changes not applied")
    child.expect(MENU)  # the menu again, over the rest (prompt2)
    child.sendline("k")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    lines[0] = "LINE 1\n"
    assert (home / "f.txt").read_text() == "".join(lines)  # hunk 1 applied, hunk 2 left in the session
    assert "LINE 12" in (lo.upper("s") / "f.txt").read_text()


@pytest.mark.parametrize("word,verb", [("ls", "sessions"), ("list", "sessions"), ("ps", "sessions"),
                                       ("history", "log"), ("rm", "discard")])
def test_another_tools_word_for_a_verb_names_the_verb(lo, word, verb):
    # Before: `layover ls` (docker's, podman's word) and `layover history`
    # were "unknown verb 'ls'; see 'layover --help'", naming no verb.
    r = lo(word)
    assert (r.returncode, r.stdout) == (2, b"")
    assert r.stderr.decode() == "layover: unknown verb '%s' (did you mean '%s'?); see 'layover --help'\n" % (
        word, verb)


def _described(lo, verb):
    """The flags VERB --help describes on a line of their own ("  --force ...")."""
    r = lo(verb, "--help")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    return {line.split()[0].rstrip(",") for line in r.stdout.decode().splitlines() if line.startswith("  -")}


def test_apply_and_undo_help_say_what_force_dry_run_and_undo_to_do(lo):
    # Before: a reviewer told by a conflict to "re-run with --force" found
    # --force, --dry-run, --yes, --target and --undo-to in apply's usage
    # line only; undo's --force and --dry-run likewise.
    described = _described(lo, "apply")
    assert {"--target", "--dry-run", "--force", "--yes", "--undo-to"} <= described, described
    assert {"--force", "--dry-run"} <= _described(lo, "undo")


def test_diff_help_lists_the_ignore_flags_as_status_help_does(lo):
    # Before: diff --help named --ignore, --no-default-ignores and
    # --include-ignored in its usage line only; status, save and apply say
    # what they do.
    status = lo("status", "--help").stdout.decode()
    ignore_lines = status[status.index("  --ignore GLOB "):]
    assert ignore_lines.count("\n") == 3, ignore_lines
    assert lo("diff", "--help").stdout.decode().endswith(ignore_lines)


def test_a_rollback_to_the_step_the_session_is_at_says_nothing_was_set_aside(lo, home):
    # Before: "rolled back to step 1 (0 later steps set aside, live changes
    # included; 'layover rollback s --undo' brings them back)": nothing moved,
    # and --undo brought back what the rollback before it had set aside.
    lo.run("echo 1 > a.txt", session="s", check=True)
    lo.run("echo 2 > b.txt", session="s", check=True)
    assert lo("checkpoint", "s").returncode == 0
    r = lo("rollback", "s", "1")
    assert r.returncode == 0 and b"(1 later step set aside" in r.stderr, r.stderr
    r = lo("rollback", "s", "1")
    assert r.returncode == 0
    assert r.stderr == b"layover: session 's' is at step 1 already, with no live changes; nothing was set aside\n"
    assert lo("rollback", "s", "--undo").returncode == 0  # the first rollback's step 2 is still set aside
    assert sorted(c["path"] for c in json.loads(lo("status", "s", "--json").stdout)) == ["a.txt", "b.txt"]
    assert not (home / "b.txt").exists()
