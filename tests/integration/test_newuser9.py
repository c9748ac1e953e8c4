"""A demanding new user's walk (round 9), through the real CLI, the Python
bindings and `layover mcp`: `layover help VERB`, a mistyped verb, the undo
record of a patch applied by a relative path, run()'s timeout message, a
mistyped MCP tool argument. Each test fails before its fix."""
import os
import shutil

import pytest

from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def test_help_verb_is_the_verbs_help_and_an_unknown_one_is_a_usage_error(lo):
    for verb in ("run", "status", "diff", "apply"):  # layover's own verbs and layover-patch's
        r = lo("help", verb)
        assert r.returncode == 0 and r.stderr == b"", r.stderr
        assert r.stdout == lo(verb, "--help").stdout
        assert r.stdout.startswith(b"usage: layover %s " % verb.encode()), r.stdout[:80]
    r = lo("help", "statu")
    assert (r.returncode, r.stdout) == (2, b"")
    assert r.stderr == b"layover: unknown verb 'statu' (did you mean 'status'?); see 'layover --help'\n"
    assert lo("help").stdout.startswith(b"usage: layover VERB [ARGS]\n")


@pytest.mark.parametrize("typo,meant", [("statu", "status"), ("aply", "apply"), ("sesions", "sessions"),
                                        ("chekpoint", "checkpoint"), ("hlep", "help")])
def test_a_mistyped_verb_names_the_verb_it_was_meant_to_be(lo, typo, meant):
    r = lo(typo, "x")
    assert (r.returncode, r.stdout) == (2, b"")
    assert r.stderr.decode() == "layover: unknown verb '%s' (did you mean '%s'?); see 'layover --help'\n" % (
        typo, meant)


def test_an_unknown_verb_is_quoted_as_any_name_on_screen(lo):
    r = lo("x\x1b[2Jy")
    assert r.returncode == 2 and b"\x1b" not in r.stderr, r.stderr
    assert r.stderr == b"layover: unknown verb '\"x\\x1b[2Jy\"'; see 'layover --help'\n"


def test_a_patch_applied_by_a_relative_path_is_recorded_by_its_real_path(lo, home, tmp_path):
    # A reviewer saves the patch beside the tree and applies it from there,
    # then again from inside the tree: the record named 'p.tar.zst', which
    # `undo --list` showed as is and the second apply did not recognise.
    assert lo.run("echo new > new.txt; echo more >> notes.txt", session="rel").returncode == 0
    work = tmp_path / "work"
    work.mkdir()
    assert lo("save", "rel", "-o", work / "p.tar.zst").returncode == 0
    r = lo("apply", "p.tar.zst", "--target", home, "--yes", cwd=work)
    assert r.returncode == 0, r.stderr
    real = os.path.realpath(work / "p.tar.zst")
    r = lo("undo", "--list", "--target", home, cwd=home)
    assert r.returncode == 0 and real in r.stdout.decode(), r.stdout
    shutil.copy(work / "p.tar.zst", home / ".." / "p.tar.zst")  # another path, the same name
    (home / "new.txt").write_text("edited since\n")  # a conflict (the patch's own content is none)
    r = lo("apply", str(work / "p.tar.zst"), "--target", ".", "--yes", cwd=home)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "new.txt: exists on the target now" in err, err
    assert "note: this patch was applied to %s already, at " % os.path.realpath(home) in err, err
    r = lo("apply", "../p.tar.zst", "--target", ".", "--yes", cwd=home)  # a copy elsewhere is another file
    assert r.returncode == 1 and "note: this patch was applied" not in r.stderr.decode(), r.stderr


def test_mcp_a_mistyped_argument_is_named_with_the_one_it_was_meant_to_be(client, state_dir):
    c = client(session="mcp-nu9-args")
    r = c.call("run_command", command="echo hi > made.txt", timout=5)
    assert r["isError"] and text(r) == ("run_command: unknown argument 'timout' (did you mean 'timeout'?); "
                                        "run_command takes command, cwd, timeout, stdin"), r
    r = c.call("run_command", comand="touch made2.txt")
    assert r["isError"] and text(r).startswith("run_command: unknown argument 'comand' (did you mean 'command'?)")
    r = c.call("changes", verbose=True)
    assert r["isError"] and text(r) == "changes: unknown argument 'verbose'; changes takes no arguments", r
    r = c.request("tools/call", {"name": "run_comand", "arguments": {"command": "true"}})
    assert r["error"]["code"] == -32602 and r["error"]["message"] == (
        "Invalid params: unknown tool 'run_comand' (did you mean 'run_command'?); tools/list names the tools"), r
    # Nothing ran: no file, no step.
    r = c.call("changes")
    assert not r["isError"] and "made" not in text(r), text(r)
    assert c.call("log")["structuredContent"]["steps"] == []


def test_apply_and_undo_to_a_target_that_does_not_exist_say_so_as_run_does(lo, home, tmp_path):
    assert lo.run("echo x > x.txt", session="gone").returncode == 0
    nope = tmp_path / "nope"
    r = lo("apply", "gone", "--target", nope, "--yes")
    assert r.returncode == 1
    assert r.stderr.decode() == "layover: apply: target %s does not exist; nothing was applied; pass --target DIR\n" % nope
    for how in ("--last", "--list"):
        r = lo("undo", how, "--target", nope)
        assert r.returncode == 2 and r.stderr.decode() == (
            "layover: undo: target %s does not exist; pass --target DIR, the tree an apply changed; "
            "see 'layover undo --help'\n" % nope), r.stderr


def test_save_over_a_file_that_is_not_a_patch_writes_nothing(lo, home, tmp_path):
    assert lo.run("echo more >> notes.txt", session="sv").returncode == 0
    before = (home / "notes.txt").read_bytes()
    r = lo("save", "sv", "-o", "notes.txt")  # run in the target: the tree's own file
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: save: notes.txt exists and is not a layover patch; nothing was written: pick another "
        "FILE.tar.zst, or remove that file first\n"), r.stderr
    assert (home / "notes.txt").read_bytes() == before
    out = tmp_path / "p.tar.zst"
    for _ in range(2):  # a patch is replaced, as before
        assert lo("save", "sv", "-o", out).returncode == 0
    empty = tmp_path / "empty.tar.zst"
    empty.write_bytes(b"")
    assert lo("save", "sv", "-o", empty).returncode == 0 and empty.stat().st_size > 0
    # --on-exit save:FILE the same way: the session is kept, run exits 125.
    r = lo.run("echo x > x.txt", "--session", "sv2", on_exit="save:notes.txt")
    assert r.returncode == 125 and b"layover: on-exit save: notes.txt exists and is not a layover patch" in r.stderr
    assert (home / "notes.txt").read_bytes() == before and lo.session_dir("sv2").is_dir()


def test_mcp_a_timed_out_command_names_the_fix_and_read_file_past_the_end_the_line_count(client, proj):
    c = client(session="mcp-nu9-text")
    r = c.call("run_command", command="sleep 5", timeout=0.5)
    assert r["isError"] and r["structuredContent"]["timed_out"] is True
    assert text(r).endswith("[timed out after 0.5 s: its process group was killed; pass a larger timeout "
                            "(seconds, at most 3600), or start_command for a server or a long job]"), text(r)
    r = c.call("read_file", path="README.md", offset=9)  # "# demo\n": one line
    assert not r["isError"] and text(r) == "(no lines from 9 on: README.md has 1 line)", text(r)
    r = c.call("read_file", path="src/app.py", offset=5)
    assert text(r) == "(no lines from 5 on: src/app.py has 2 lines)", text(r)


def test_a_directory_given_for_a_session_names_the_session_over_it(lo, home):
    assert lo.run("echo x > x.txt", session="over").returncode == 0
    want = ("'%s' is a directory, not %%s: name a session (the most recent over %s is 'over'; 'layover sessions' "
            "lists them)" % (home, os.path.realpath(home)))
    r = lo("status", home)
    assert r.returncode == 1 and r.stderr.decode() == "layover: %s\n" % (want % "a session"), r.stderr
    r = lo("apply", home, "--dry-run")
    assert r.returncode == 1 and r.stderr.decode() == "layover: apply: %s\n" % (want % "a patch file or a session")
    r = lo("diff", str(home) + "/")
    assert r.returncode == 2 and "is a directory, not a patch file or a session: name a session (the most recent " \
        "over %s is 'over'" % os.path.realpath(home) in r.stderr.decode(), r.stderr
    r = lo("log", ".", cwd=home)
    assert r.returncode == 1 and "'.' is a directory, not a session" in r.stderr.decode(), r.stderr


def test_reject_names_the_session_and_path_in_the_commands_it_suggests(lo, home):
    assert lo.run("echo more >> notes.txt", session="rj").returncode == 0
    r = lo("reject", "rj", "nope.txt")
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: reject: nope.txt is not a change of this session; 'layover status rj' lists the paths to "
        "reject; nothing was recorded\n"), r.stderr
    r = lo("reject", "rj", "notes.txt:7")
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: reject: notes.txt has 1 hunk, no hunk 7; see 'layover diff rj --hunk-numbers -- notes.txt'; "
        "nothing was recorded\n"), r.stderr


def test_run_of_a_directory_as_the_command_says_to_pass_it_as_target(lo, home):
    r = lo("run", home)  # --target left out
    assert r.returncode == 125, r.stderr
    assert r.stderr.decode() == ("layover: %s is a directory, not a command: to run over it, pass --target %s "
                                 "(layover run --target DIR [-- CMD])\n" % (home, os.path.realpath(home)))
    assert not (lo.state / "sessions").exists() or os.listdir(lo.state / "sessions") == []  # nothing started


def test_mcp_rollback_to_a_missing_step_points_the_agent_at_its_log_tool(client, proj):
    c = client(session="mcp-nu9-rb")
    assert not c.call("write_file", path="one.txt", content="1\n")["isError"]
    r = c.call("rollback", step=9)
    assert r["isError"] and "no step 9" in text(r) and "see the log tool" in text(r), text(r)
    assert "'layover log'" not in text(r)


def test_ctrl_c_at_applys_question_says_nothing_was_applied(lo, home):
    import pexpect
    from conftest import LAYOVER
    assert lo.run("echo more >> notes.txt", session="cc").returncode == 0
    before = (home / "notes.txt").read_bytes()
    child = pexpect.spawn(LAYOVER, ["apply", "cc"], env=dict(lo.env, TERM="dumb"), cwd=str(home), timeout=15)
    child.expect(r"Apply 1 change to .*\? \[y/N\] ")
    child.sendintr()
    # It died of the SIGINT, saying nothing.
    child.expect_exact("\r\nlayover: apply: cancelled; nothing was applied")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1 and (home / "notes.txt").read_bytes() == before
