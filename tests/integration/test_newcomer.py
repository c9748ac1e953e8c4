"""What a new user stumbled on, through the real CLI: `undo --last` typed in
a project dir, a session whose history a rollback set aside removed at exit
as if it were empty, `layover mcp --keep-empty`."""
import json
import os

from conftest import real_dir
from mcp_util import McpClient, text


def _run(lo, target, session, cmd, env=None):
    r = lo("run", "--target", target, "--session", session, "--on-exit", "keep", "--", "/bin/sh", "-c", cmd,
           env=env)
    assert r.returncode == 0, r.stderr
    return r


def test_undo_last_without_target_in_a_project_applied_to_since_undoes_nothing_and_names_both(lo):
    home = real_dir("newcomer-home-")
    proj = home / "proj"
    proj.mkdir()
    (proj / "a.txt").write_text("one\n")
    env = {"HOME": str(home)}
    # An apply on the whole home, then a newer one on the project.
    _run(lo, home, "h", "echo h > %s/h.txt" % home, env=env)
    assert lo("apply", "h", "--yes", env=env).returncode == 0
    _run(lo, proj, "p", "echo two >> %s/a.txt" % proj, env=env)
    assert lo("apply", "p", "--yes", env=env).returncode == 0
    # From the project: $HOME's older apply is not what `--last` means here.
    r = lo("undo", "--last", env=env, cwd=proj)
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    assert err.startswith("layover: undo: --last without --target undoes the newest apply on %s (" % home), err
    assert ", from h), but the current directory is in %s, applied to since (" % proj in err, err
    assert err.endswith(", from p): undo that one with 'layover undo --last --target %s', or the older one with "
                        "'layover undo --last --target %s'\n" % (proj, home)), err
    assert (home / "h.txt").exists() and (proj / "a.txt").read_text() == "one\ntwo\n"  # nothing undone
    # --list lists $HOME's records, and says where the newer one is.
    r = lo("undo", "--list", env=env, cwd=proj)
    assert r.returncode == 0 and r.stderr.decode() == (
        "layover: undo: these are the records of %s; the current directory is in %s, applied to since: 'layover "
        "undo --list --target %s' lists its records\n" % (home, proj, proj)), r.stderr
    assert lo("undo", "--list", env=env, cwd=home).stderr == b""
    # --dry-run is refused the same way; from the home dir itself, $HOME's newest is meant.
    assert lo("undo", "--last", "--dry-run", env=env, cwd=proj).returncode == 1
    r = lo("undo", "--last", "--dry-run", env=env, cwd=home)
    assert r.returncode == 0 and b"h.txt" in r.stdout, r.stderr
    # The commands it names work.
    assert lo("undo", "--last", "--target", proj, env=env, cwd=proj).returncode == 0
    assert (proj / "a.txt").read_text() == "one\n"
    r = lo("undo", "--last", env=env, cwd=proj)  # the project has no newer apply now
    assert r.returncode == 0 and not (home / "h.txt").exists(), r.stderr


def test_a_session_rolled_back_to_nothing_is_kept_at_exit_so_rollback_undo_still_works(lo, home):
    _run(lo, home, "rb", "echo a > new.txt")
    assert lo("rollback", "rb", "0").returncode == 0
    r = _run(lo, home, "rb", "true")
    assert r.stderr.decode().endswith(
        "layover: session 'rb' kept: no changes against the real tree, but the steps a rollback set aside: "
        "'layover rollback rb --undo' brings them back\n"), r.stderr
    assert b"removed" not in r.stderr
    r = lo("rollback", "rb", "--undo")
    assert r.returncode == 0, r.stderr
    assert lo("status", "rb").stdout.decode().startswith("A  new.txt\n")


def test_a_session_whose_steps_cancel_out_is_kept_for_its_history(lo, home):
    _run(lo, home, "st", "echo a > new.txt")
    r = _run(lo, home, "st", "rm new.txt")  # the resume froze step 1; the view is the real tree again
    assert r.stderr.decode().endswith(
        "layover: session 'st' kept: no changes against the real tree, but 1 step(s) of history: "
        "'layover log st' lists them\n"), r.stderr
    assert b"step 1" not in lo("log", "st").stderr and b"echo a > new.txt" in lo("log", "st").stdout
    # Not `empty` either, which gc removes: `kept`, with its 0 changes, and gc leaves it.
    _run(lo, home, "rb0", "echo b > b.txt")
    assert lo("rollback", "rb0", "0").returncode == 0
    _run(lo, home, "rb0", "true")
    states = {s["name"]: (s["state"], s["changes"]) for s in json.loads(lo("sessions", "--json").stdout)}
    assert states["st"] == ("kept", 0) and states["rb0"][0] == "kept", states
    r = lo("gc")
    assert r.returncode == 0 and lo.session_dir("st").is_dir() and lo.session_dir("rb0").is_dir(), r.stdout
    assert lo("rollback", "rb0", "--undo").returncode == 0
    # A session with no history that changed nothing still goes, as before.
    r = _run(lo, home, "none", "true")
    assert b"made no changes; removed (--keep-empty keeps it)" in r.stderr and not lo.session_dir("none").exists()


def _mcp(target, state, session, *extra):
    c = McpClient(target, state, session, *extra)
    r = c.initialize()
    assert "result" in r, r
    return c


def test_mcp_rollback_to_nothing_keeps_the_session_and_mcp_takes_keep_empty(require_sandbox, state_dir):
    proj = real_dir("newcomer-mcp-")
    (proj / "README.md").write_text("# demo\n")
    c = _mcp(proj, state_dir, "mcp-rb")
    try:
        assert not c.call("write_file", path="notes.md", content="hi\n")["isError"]
        r = c.call("rollback", step=0)
        assert not r["isError"], text(r)
        assert c.close() == 0
    finally:
        c.kill()
    err = c.stderr()
    assert "'layover rollback mcp-rb --undo' brings them back" in err and "removed" not in err, err
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    import subprocess
    from conftest import LAYOVER
    r = subprocess.run([LAYOVER, "rollback", "mcp-rb", "--undo"], capture_output=True, env=env)
    assert r.returncode == 0, r.stderr
    # The "removed (--keep-empty keeps it)" advice works for `layover mcp` too.
    c = _mcp(proj, state_dir, "mcp-empty", "--keep-empty")
    try:
        assert "demo" in text(c.call("read_file", path="README.md"))
        assert c.close() == 0
    finally:
        c.kill()
    err = c.stderr()
    assert "made no changes; kept (--keep-empty)" in err and "session mcp-empty kept" in err, err
    listed = json.loads(subprocess.run([LAYOVER, "sessions", "--json"], capture_output=True, env=env).stdout)
    assert [s["state"] for s in listed if s["name"] == "mcp-empty"] == ["empty"]


def test_a_mistyped_session_name_gets_the_session_it_likely_meant(lo, home):
    _run(lo, home, "agent1", "echo a > new.txt")
    for verb in (["status"], ["diff"], ["apply", "--dry-run"], ["log"], ["save", "-o", "x.tar.zst"]):
        r = lo(verb[0], "agnet1", *verb[1:])
        assert r.returncode in (1, 2) and (
            "no session named 'agnet1' (did you mean 'agent1'?); list them with 'layover sessions'\n"
            in r.stderr.decode()), (verb, r.stderr)
    r = lo("status", "zzz")  # nothing near: the old line
    assert r.stderr == b"layover: no session named 'zzz'; list them with 'layover sessions'\n"


def test_the_exit_prompt_words_its_total_and_its_apply_as_status_and_apply_do(lo, home):
    # The prompt said "2 changes (1 added, 1 modified, 0 deleted, 0 other)" where status says
    # "2 changes: 1 added, 1 modified", and "applied 2 path(s)" where apply says "applied 2 change(s)".
    import pexpect
    from conftest import LAYOVER
    _run(lo, home, "pr", "echo four >> notes.txt; echo fresh > new.txt")
    assert lo("status", "pr").stdout.decode().endswith("\n2 changes: 1 added, 1 modified\n")
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "pr"], env=dict(lo.env, PAGER="cat", TERM="dumb"),
                          cwd=str(home), timeout=15)
    child.expect(r"\n2 changes: 1 added, 1 modified\r?\n")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect(r"layover: applied 2 change\(s\) to %s\r?\n" % home)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and (home / "new.txt").read_text() == "fresh\n"
    # --on-exit apply says it the same way.
    r = lo("run", "--target", home, "--on-exit", "apply", "--", "/bin/sh", "-c", "echo more > more.txt")
    assert r.returncode == 0 and ("layover: applied 1 change(s) to %s\n" % home).encode() in r.stderr, r.stderr


def test_a_shell_started_with_no_command_says_it_is_in_the_sandbox_and_how_it_ends(lo, home):
    import pexpect
    from conftest import LAYOVER
    env = dict(lo.env, SHELL="/bin/sh", PS1="$ ", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--session", "sh1", "--on-exit", "keep"], env=env,
                          cwd=str(home), timeout=20)
    child.expect(r"layover: a shell in session 'sh1' over %s: what it changes stays in the session "
                 r"\(\$LAYOVER_SESSION names it\); exit it to end the run \(--on-exit keep\)\r?\n" % home)
    child.sendline("echo in-$LAYOVER_SESSION; touch made.txt; exit")
    child.expect("in-sh1")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and not (home / "made.txt").exists()
    assert lo("status", "sh1").stdout.decode().startswith("A  made.txt\n")
    # A command of its own, or --quiet: no such line.
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--on-exit", "keep", "--", "true"], env=env,
                          cwd=str(home), timeout=20)
    child.expect(pexpect.EOF)
    assert b"a shell in session" not in child.before


def test_mcp_says_once_that_the_session_is_kept_and_how_to_review_it(require_sandbox, state_dir):
    # It said it twice: run's "session 'X' kept: 'layover status X' lists its changes, ..." and then the
    # server's own "layover mcp: session X kept. Nothing is applied ...".
    proj = real_dir("newcomer-mcp1-")
    c = _mcp(proj, state_dir, "mcp-once")
    try:
        assert not c.call("write_file", path="notes.md", content="hi\n")["isError"]
        assert c.close() == 0
    finally:
        c.kill()
    err = c.stderr()
    assert [x for x in err.splitlines() if " kept" in x] == [
        "layover mcp: session mcp-once kept. Nothing is applied to the real tree until a person reviews it: layover "
        "status mcp-once; layover diff mcp-once; layover apply mcp-once (or layover discard mcp-once)"], err


def test_run_of_a_discarded_sessions_name_says_it_starts_a_new_one(lo, home):
    # `run --session NAME` resumes a kept session; a discarded one it silently replaced with a new, empty one.
    _run(lo, home, "fix", "echo 1 > one.txt")
    assert lo("discard", "fix").returncode == 0
    r = _run(lo, home, "fix", "true")
    assert ("layover: session 'fix' is in the trash (discarded): this run starts a new one of that name; to resume "
            "the discarded one, exit without changes, then 'layover restore fix' and run again\n").encode() \
        in r.stderr, r.stderr
    assert lo("restore", "fix").returncode == 0  # the run changed nothing: the name was free
    r = _run(lo, home, "fix", "echo 2 > two.txt")
    assert b"in the trash" not in r.stderr
    assert lo("status", "fix").stdout.decode().startswith("A  one.txt\nA  two.txt\n")


def test_mcp_write_outside_the_target_says_why_and_where_to_write(require_sandbox, state_dir):
    proj = real_dir("newcomer-mcp2-")
    c = _mcp(proj, state_dir, "mcp-ro")
    try:
        r = c.call("write_file", path="/etc/layover-newcomer", content="x")
        assert r["isError"] and text(r) == (
            "write_file: /etc/layover-newcomer: Read-only file system; this path is outside the target (%s), which "
            "the sandbox shows read-only: write under the target, where a person reviews and applies the changes"
            % proj), text(r)
        r = c.call("write_file", path="/tmp/scratch.txt", content="x")  # the sandbox's own /tmp: fine
        assert not r["isError"], text(r)
    finally:
        c.kill()
