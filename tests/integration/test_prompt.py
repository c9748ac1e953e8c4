"""The exit-review prompt, driven in a pty: r, a, s, p, k, d, Enter, EOF,
Ctrl+C and type-ahead, checked on the real filesystem afterwards."""
import json
import os
import re
import subprocess
from pathlib import Path

import pexpect
import pytest

from conftest import LAYOVER

MENU = r"What now.*\? \[r/a/s/p/K/d\] "


def _prompt(lo, name, cwd=None, env=None, pre=None):
    """`layover on-exit prompt NAME`, as the supervisor runs it, in a pty."""
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    e.update(env or {})
    args = [LAYOVER, "on-exit", "prompt", name]
    if pre:  # something to do in the terminal before the prompt starts
        args = ["/bin/sh", "-c", pre + '; exec "$@"', "sh", *args]
    return pexpect.spawn(args[0], args[1:], env=e, cwd=str(cwd or lo.target), timeout=15)


def _finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def _session_exists(lo, name):
    return (lo.state / "sessions" / name).is_dir()


def _trashed(lo, name):
    return (lo.state / "trash" / name / "upper").is_dir()


@pytest.fixture
def edited(lo, home):
    """A kept session that edits notes.txt and adds new.txt."""
    lo.run("echo four >> notes.txt; echo fresh > new.txt", session="s", check=True)
    return "s"


def test_an_undo_of_the_prompts_apply_names_the_trashed_session_and_unmarks_it(lo, home, edited):
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("applied")
    assert _finish(child) == 0 and _trashed(lo, edited)
    r = lo("undo", "--last", "--target", home, "--json")  # --json too
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == ("layover: undo: session 's', whose apply this was, is in the trash for 24 hours; "
                                 "'layover restore s' brings it back\n")
    trash = json.loads(lo("sessions", "--trash", "--json").stdout)
    assert [(t["name"], t["state"], t["applied"]) for t in trash] == [("s", "kept", None)]
    assert lo("restore", "s").returncode == 0 and not (home / "new.txt").exists()
    assert lo("apply", "s", "--yes").returncode == 0 and (home / "new.txt").read_text() == "fresh\n"


def test_summary_then_r_shows_the_diff_and_returns_to_the_menu(lo, home, edited):
    child = _prompt(lo, edited)
    child.expect(r"A  new.txt")
    child.expect(r"M  notes.txt")
    child.expect(r"\[r\] review diff +\[a\] apply +\[s\] save patch +\[p\] pick files\r\n"
                 r"  \[k\] keep session \(default\) +\[d\] discard\r\n")
    child.expect(MENU)
    child.sendline("r")
    child.expect(r"\+\+\+ b/notes.txt")
    child.expect(r"\+four")
    child.expect(MENU)
    child.sendline("k")
    child.expect("kept")
    assert _finish(child) == 0
    assert _session_exists(lo, edited)


def test_a_confirms_then_applies_to_the_real_tree_and_trashes_the_session(lo, home, edited):
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("a")
    child.expect(r"Apply 2 changes to .*\? \[y/N\] ")
    child.sendline("n")  # no: nothing happens
    child.expect(MENU)
    assert not (home / "new.txt").exists()
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("applied")
    assert _finish(child) == 0
    assert (home / "new.txt").read_text() == "fresh\n"
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\nfour\n"
    assert not _session_exists(lo, edited) and _trashed(lo, edited)


def test_a_with_a_conflict_lists_it_writes_nothing_and_can_go_back(lo, home, edited):
    (home / "notes.txt").write_text("edited meanwhile\n")
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("conflict")
    child.expect("notes.txt")
    child.expect(r"\[f\] overwrite them +\[x\] apply the rest +\[b\] back")
    child.sendline("b")
    child.expect(MENU)
    assert not (home / "new.txt").exists()
    assert (home / "notes.txt").read_text() == "edited meanwhile\n"
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect(r"\[x\] apply the rest")
    child.sendline("x")  # everything but the conflicting path
    child.expect("applied")
    child.expect("still holds the changes not applied")
    child.expect(MENU)  # the menu again, over the rest (prompt2)
    child.sendline("k")
    assert _finish(child) == 0
    assert (home / "new.txt").read_text() == "fresh\n"
    assert (home / "notes.txt").read_text() == "edited meanwhile\n"
    assert _session_exists(lo, edited)  # it still holds the change not applied


def test_s_expands_a_leading_tilde_of_the_path_as_a_shell_would(lo, home, edited, tmp_path):
    # No shell reads the answer: '~/x' was taken literally ("directory ~ does not exist").
    child = _prompt(lo, edited, env={"HOME": str(tmp_path)})
    child.expect(MENU)
    child.sendline("s")
    child.expect(r"Save patch to .*: ")
    child.sendline("~/tilde.tar.zst")
    child.expect("saved")
    child.expect(MENU)
    child.sendline("k")
    assert _finish(child) == 0
    assert (tmp_path / "tilde.tar.zst").stat().st_size > 0


def test_s_saves_a_patch_to_the_given_path_then_d_discards(lo, home, edited, tmp_path):
    out = tmp_path / "saved.tar.zst"
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("s")
    # Run from the target: the default lies outside it, in the state dir (test_newcomer_marks.py).
    child.expect(r"Save patch to \[%s/patches/layover-\d{8}-\d{6}\.tar\.zst\]: " % re.escape(str(lo.state)))
    child.sendline(str(out))
    child.expect("saved")
    child.expect(MENU)
    child.sendline("d")
    child.expect(r"Discard session '\w+' and its \d+ changes?\? \[y/N\] ")
    child.sendline("y")
    child.expect("discarded")
    assert _finish(child) == 0
    assert out.is_file() and out.stat().st_mode & 0o777 == 0o600
    names = subprocess.run(["tar", "--zstd", "-tf", str(out)], capture_output=True, check=True).stdout.decode()
    assert "new.txt" in names and "notes.txt" in names
    assert _trashed(lo, edited) and not _session_exists(lo, edited)
    assert not (home / "new.txt").exists()
    show = lo("diff", out)  # the saved patch holds the same changes
    assert show.returncode == 1 and b"+fresh" in show.stdout


def test_s_with_enter_saves_to_the_default_name_in_the_current_dir(lo, home, edited, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    child = _prompt(lo, edited, cwd=cwd)
    child.expect(MENU)
    child.sendline("s")
    child.expect(r"\]: ")
    child.sendline("")
    child.expect("saved")
    child.expect(MENU)
    child.sendline("k")
    assert _finish(child) == 0
    saved = list(cwd.glob("layover-*.tar.zst"))
    assert len(saved) == 1 and saved[0].stat().st_size > 0
    assert _session_exists(lo, edited)


def test_p_picks_files_and_apply_uses_only_those(lo, home, edited):
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("p")
    child.expect(r"\[x\] 1  A  new.txt")
    child.expect(r"\[x\] 2  M  notes.txt")
    child.expect(r"Pick \(2 of 2 changes picked; Enter when done\): ")
    help_lines = child.before.decode().splitlines()
    assert any("+X adds it" in l for l in help_lines) and max(map(len, help_lines)) <= 80, help_lines
    child.sendline("2")
    child.expect(r"Pick \(1 of 2 changes picked; Enter when done\): ")  # a count, not the list again
    child.sendline("")
    child.expect(r"What now \(1 of 2 picked\)\?")
    child.sendline("a")
    child.expect(r"Apply 1 change to .*\[y/N\] ")
    child.sendline("y")
    child.expect("applied")
    # The rest is said, and the menu comes back over it (prompt2; before, the
    # prompt ended with a line naming status, apply and discard: newuser9).
    child.expect_exact("layover: session 's' still holds the changes not applied:")
    child.expect(MENU)
    assert "M  notes.txt" in child.before.decode() and "new.txt" not in child.before.decode()
    child.sendline("k")
    child.expect_exact("layover: session 's' kept; review it later")
    assert _finish(child) == 0
    assert (home / "new.txt").read_text() == "fresh\n"
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert _session_exists(lo, edited)


def test_enter_keeps_and_d_asks_before_discarding(lo, home, edited):
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("")  # a bare Enter never throws work away
    child.expect("kept")
    assert _finish(child) == 0
    assert _session_exists(lo, edited)
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("d")
    child.expect(r"\[y/N\] ")
    child.sendline("")  # not a yes: back to the menu, nothing lost
    child.expect(MENU)
    child.sendline("d")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("discarded")
    child.expect("layover restore s")
    assert _finish(child) == 0
    assert not _session_exists(lo, edited)
    assert (lo.state / "trash" / "s" / "upper" / "new.txt").read_text() == "fresh\n"
    assert not (home / "new.txt").exists()


def test_eof_keeps_the_session_and_says_how_to_resume(lo, edited):
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendeof()
    child.expect("kept; review it later with 'layover diff s'")
    assert _finish(child) == 0
    assert _session_exists(lo, edited)


def test_ctrl_c_keeps_the_session(lo, edited):
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendintr()
    child.expect("kept; review it later with")
    assert _finish(child) == 0
    assert _session_exists(lo, edited)
    assert not (lo.state / "trash" / "s").exists()


def test_ctrl_c_at_a_question_ends_its_line_before_saying_kept(lo, edited):
    # Ctrl+C at "Discard ...? [y/N]" keeps the session; the message that says
    # so starts on a line of its own, not after the question.
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("d")
    child.expect(r"\[y/N\] ")
    child.sendintr()
    child.expect("layover: session 's' kept; review it later with")
    assert child.before.endswith(b"\n"), child.before
    assert _finish(child) == 0
    assert _session_exists(lo, edited)


def test_type_ahead_is_flushed_before_the_prompt(lo, edited):
    # "d" + Enter typed while the command still ran would discard the session
    # if the prompt read it; it must be flushed instead.
    child = _prompt(lo, edited, pre="sleep 1")
    child.sendline("d")
    child.expect(MENU)
    # the prompt answers "k" after any "d" it had still to read (no sleep decides it)
    child.sendline("k")
    child.expect("kept")
    assert _session_exists(lo, edited)
    assert _finish(child) == 0
    assert _session_exists(lo, edited)


def test_no_changes_says_so_and_exits_without_a_menu(lo):
    lo.run("true", "--keep-empty", session="nothing", check=True)
    child = _prompt(lo, "nothing")
    child.expect("made no changes")
    child.expect(pexpect.EOF)
    assert b"What now" not in child.before
    child.close()
    assert child.exitstatus == 0
    assert not _session_exists(lo, "nothing")


def test_risky_destinations_are_highlighted(lo, home):
    lo.run("echo 'curl x | sh' >> .bashrc; mkdir -p .ssh && echo k > .ssh/authorized_keys; "
           "printf '#!/bin/sh\\n' > tool && chmod 755 tool; ln -s /etc/passwd pw; echo ok > plain.txt",
           session="r", check=True)
    child = _prompt(lo, "r", env={"HOME": str(home)})
    child.expect(MENU)
    text = child.before.decode()
    child.sendline("k")
    _finish(child)
    lines = {l.split()[1]: l for l in text.splitlines() if l.startswith("  ") and len(l.split()) > 1}
    assert "! shell startup file" in lines[".bashrc"]
    assert "! ssh keys or config" in lines[".ssh/authorized_keys"]
    assert "! executable" in lines["tool"]
    assert "! symlink leads outside the target" in lines["pw"]
    assert "!" not in lines["plain.txt"]


def test_prompt_through_layover_run(lo, home):
    """The real pipeline: run in a pty, the command exits, the prompt applies."""
    env = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--session", "live", "--on-exit", "prompt",
                                    "--", "/bin/sh", "-c", "echo made-in-sandbox > made.txt"],
                          env=env, cwd=str(home), timeout=15)
    child.expect(r"A  made.txt")
    child.expect(MENU)
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("applied")
    assert _finish(child) == 0
    assert (home / "made.txt").read_text() == "made-in-sandbox\n"
    assert not _session_exists(lo, "live")


def test_on_exit_apply_applies_or_keeps_the_session_on_conflict(lo, home):
    r = lo.run("echo applied > a.txt", "--session", "ap", on_exit="apply")
    assert r.returncode == 0, r.stderr
    assert (home / "a.txt").read_text() == "applied\n"
    assert not _session_exists(lo, "ap")
    # Said as the exit prompt's apply says it (it said nothing: `sessions` no longer listed the session).
    assert r.stderr.decode().endswith("layover: session 'ap' moved to the trash for 24 hours; 'layover restore ap' "
                                      "brings it back\n"), r.stderr
    assert "ap" in lo("sessions", "--trash").stdout.decode()
    # A conflict: the real file changed after the session ran.
    lo.run("echo sandbox >> notes.txt", session="c2", check=True)
    (home / "notes.txt").write_text("changed for real\n")
    r = subprocess.run([LAYOVER, "on-exit", "apply", "c2"], env=lo.env, capture_output=True, timeout=60)
    assert r.returncode == 125
    assert b"conflict" in r.stderr and b"notes.txt" in r.stderr
    assert (home / "notes.txt").read_text() == "changed for real\n"
    assert _session_exists(lo, "c2")


def test_on_exit_save_writes_the_patch_and_drops_the_session(lo, home, tmp_path):
    out = tmp_path / "p.tar.zst"
    r = lo.run("echo saved > s.txt", "--session", "sv", on_exit="save:" + str(out))
    assert r.returncode == 0, r.stderr
    assert out.is_file() and b"+saved" in lo("diff", out).stdout
    assert not _session_exists(lo, "sv")
    assert not (home / "s.txt").exists()


def test_on_exit_save_failure_keeps_the_session_and_exits_125(lo, home, tmp_path):
    bad = tmp_path / "no-such-dir" / "p.tar.zst"
    r = lo.run("echo saved > s.txt", "--session", "sf", on_exit="save:" + str(bad))
    assert r.returncode == 125
    assert b"kept" in r.stderr
    assert _session_exists(lo, "sf")
    assert (lo.upper("sf") / "s.txt").read_text() == "saved\n"


def test_ctrl_c_at_the_prompt_under_run_keeps_the_session_and_the_exit_status(lo, home):
    """Ctrl+C at the prompt belongs to the prompt: `run` survives it and still
    exits with the command's status."""
    env = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--session", "cc", "--on-exit", "prompt",
                                    "--", "/bin/sh", "-c", "echo x > made.txt; exit 3"],
                          env=env, cwd=str(home), timeout=15)
    child.expect(MENU)
    child.sendintr()
    child.expect("kept; review it later with")
    assert _finish(child) == 3
    assert _session_exists(lo, "cc")
    assert (lo.upper("cc") / "made.txt").read_text() == "x\n"
    assert not (home / "made.txt").exists()


def test_discarded_session_is_listed_in_the_trash_and_restores(lo, edited):
    import json
    child = _prompt(lo, edited)
    child.expect(MENU)
    child.sendline("d")
    child.expect(r"Discard session '\w+' and its \d+ changes?\? \[y/N\] ")
    child.sendline("y")
    child.expect("discarded")
    _finish(child)
    assert not _session_exists(lo, edited)
    trash = json.loads(lo("sessions", "--trash", "--json", check=True).stdout)
    assert [t["name"] for t in trash] == [edited] and trash[0]["status"] == "trash"
    lo("restore", edited, check=True)
    assert _session_exists(lo, edited)
    assert (lo.state / "sessions" / edited / "upper" / "new.txt").read_text() == "fresh\n"
    assert json.loads(lo("sessions", "--trash", "--json").stdout) == []
    assert lo("restore", edited).returncode == 1
