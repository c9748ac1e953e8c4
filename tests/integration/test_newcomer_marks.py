"""What a new user's walk found rough, through the real CLI: the risk lines
of `diff` and `diff --stat` and the marks of the exit prompt and MCP
`changes` in one format with `status`'s, `--stat`'s names as status shows
them, the exit prompt's [s] default outside the target, the restore hint
after an apply trashes the session, a did-you-mean for `--on-exit`, and what
`apply -p` records when it is quit or interrupted."""
import json
import os
import subprocess

import pexpect

from conftest import LAYOVER
from mcp_util import McpClient, text
from test_apply_hunks import edit_session
from test_apply_interactive import HUNK, WHY, _apply_p, _finish

RISKY = "umask 022; echo 'alias ls=rm' > .bashrc; printf x > run.sh; chmod 755 run.sh; mkdir -m 777 pub"


def _status_lines(lo, name, env):
    r = lo("status", name, "--risk", env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().splitlines()[:-1]  # the total line left out


def prompt_summary(lo, name, env):
    """What the exit prompt prints before its menu (answered `k`: kept)."""
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", name], env=dict(lo.env, PAGER="cat", TERM="dumb", **env),
                          cwd=str(lo.target), timeout=20)
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    summary = child.before.decode().replace("\r\n", "\n")
    child.sendline("k")
    child.expect(pexpect.EOF)
    return summary


def test_diff_and_diff_stat_list_the_risky_changes_as_status_does(lo):
    env = {"HOME": str(lo.target)}  # the home rules apply: the target is $HOME
    assert lo.run(RISKY, session="m", env=env).returncode == 0
    listed = _status_lines(lo, "m", env)
    assert listed == ["A  .bashrc  ! shell startup file", "A  pub/  ! group/world-writable",
                      "A  run.sh  ! executable"], listed
    # diff: the same lines under one header, on stderr when piped (stdout stays git's).
    r = lo("diff", "m", env=env)
    assert r.returncode == 1 and r.stdout.startswith(b"diff --git "), r.stderr
    assert r.stderr.decode() == ("layover: 3 changes marked ! need a careful look:\n" +
                                 "".join("  %s\n" % line for line in listed)), r.stderr
    # --stat: the same header and lines, with what git's table cannot show (mode, size).
    r = lo("diff", "m", "--stat", env=env)
    assert r.returncode == 1 and b"!" not in r.stdout, r.stdout
    assert r.stderr.decode() == ("layover: 3 changes marked ! need a careful look:\n"
                                 "  A  .bashrc  [0644, 12 B]  ! shell startup file\n"
                                 "  A  pub/  [0777]  ! group/world-writable\n"
                                 "  A  run.sh  [0755, 1 B]  ! executable\n"), r.stderr
    # The JSON forms are unchanged: the same reasons, as a list.
    js = {c["path"]: c["risks"] for c in json.loads(lo("status", "m", "--json", env=env).stdout)}
    assert js["pub"] == ["group/world-writable"] and js[".bashrc"] == ["shell startup file"], js


def test_the_exit_prompt_and_mcp_changes_space_the_marks_as_status_does(lo, require_sandbox, state_dir, tmp_path):
    env = {"HOME": str(lo.target)}
    assert lo.run(RISKY, session="p", env=env).returncode == 0
    listed = _status_lines(lo, "p", env)
    summary = prompt_summary(lo, "p", env)
    for line in listed:
        assert "\n  %s\n" % line in summary, (line, summary)
    assert "   !" not in summary, summary
    # MCP `changes`: the same spacing.
    c = McpClient(lo.target, state_dir, "mcp-marks", env=env)
    try:
        assert "result" in c.initialize()
        r = c.call("run_command", command="printf x > tool.sh; chmod 755 tool.sh")
        assert not r["isError"], text(r)
        out = text(c.call("changes"))
        assert "A  tool.sh  ! executable" in out.splitlines(), out
    finally:
        c.kill()


def test_diff_stat_shows_names_as_status_does_and_name_status_stays_gits(lo):
    script = "printf 'x\\n' > \"$(printf 'caf\\303\\251.txt')\"; printf 'y\\n' > \"$(printf 'raw\\351')\""
    assert lo.run(script, session="n").returncode == 0
    st = lo("status", "n").stdout.decode("utf-8")
    assert "A  café.txt\n" in st and 'A  "raw\\xe9"\n' in st, st
    r = lo("diff", "n", "--stat")
    assert r.returncode == 1, r.stderr
    assert r.stdout.decode("utf-8").splitlines() == [" café.txt  | 1 +", ' "raw\\xe9" | 1 +',
                                                     " 2 files changed, 2 insertions(+)"], r.stdout
    # --name-status is git's, for scripts (git's quotePath quoting).
    r = lo("diff", "n", "--name-status")
    assert r.stdout.decode() == 'A\t"caf\\303\\251.txt"\nA\t"raw\\351"\n', r.stdout


def _prompt(lo, name, cwd):
    return pexpect.spawn(LAYOVER, ["on-exit", "prompt", name], env=dict(lo.env, PAGER="cat", TERM="dumb"),
                         cwd=str(cwd), timeout=20)


def test_the_exit_prompts_save_defaults_outside_the_target_and_says_where(lo, tmp_path):
    assert lo.run("echo new > new.txt", session="sv").returncode == 0
    before = sorted(os.listdir(lo.target))
    # Run from the target (the project): the default is the state dir's patches dir.
    child = _prompt(lo, "sv", lo.target)
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("s")
    patches = os.path.join(str(lo.state), "patches")
    child.expect(r"layover: the current directory is in the target; by default the patch goes to (\S+), outside "
                 r"it\r\n")
    assert child.match.group(1).decode() == patches
    child.expect(r"Save patch to \[(\S+)\]: ")
    default = child.match.group(1).decode()
    assert os.path.dirname(default) == patches and os.path.basename(default).startswith("layover-"), default
    child.sendline("")
    child.expect(r"layover: saved (\S+); the session is still here")
    assert child.match.group(1).decode() == default
    child.expect(r"What now.*\? ")
    child.sendline("k")
    child.expect(pexpect.EOF)
    assert sorted(os.listdir(lo.target)) == before  # nothing new in the project
    assert os.path.getsize(default) > 0 and oct(os.stat(patches).st_mode & 0o777) == "0o700"
    assert lo("show", default).stdout.decode().count("new.txt") == 1
    # From outside the target: ./ as before, no note.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    child = _prompt(lo, "sv", elsewhere)
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("s")
    child.expect(r"Save patch to \[\./layover-\d{8}-\d{6}\.tar\.zst\]: ")
    assert b"current directory" not in child.before
    child.sendline("")
    child.expect(r"layover: saved (\./\S+);")
    saved = child.match.group(1).decode()
    child.sendline("k")
    child.expect(pexpect.EOF)
    assert (elsewhere / saved).exists()


def test_an_apply_that_trashes_the_session_says_how_to_restore_it(lo):
    said = "layover: session '%s' moved to the trash for 24 hours; 'layover restore %s' brings it back\n"
    # The exit prompt's [a].
    assert lo.run("echo a > a.txt", session="ap").returncode == 0
    child = _prompt(lo, "ap", lo.target)
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect(pexpect.EOF)
    assert (said % ("ap", "ap")).replace("\n", "\r\n").encode() in child.before, child.before
    # --on-exit apply, of a name the trash holds already: the entry restore takes is named.
    r = lo.run("echo b > b.txt", session="ap", on_exit="apply")
    assert r.returncode == 0 and r.stderr.decode().endswith(said % ("ap", "ap.1")), r.stderr
    assert lo("restore", "ap.1").returncode == 0  # the session just applied (its changes on the tree now)
    assert [x["name"] for x in json.loads(lo("sessions", "--json").stdout)] == ["ap"]
    assert lo("diff", "ap").returncode == 0 and (lo.target / "b.txt").read_text() == "b\n"
    # `discard` says it the same way.
    r = lo("discard", "ap")
    assert r.returncode == 0 and r.stderr.decode() == said % ("ap", "ap.1"), r.stderr


def test_a_mistyped_on_exit_mode_gets_the_one_it_likely_meant(lo):
    for typo, meant in (("dicard", "discard"), ("Keep", "keep"), ("sav:w.tar.zst", "save:w.tar.zst"),
                        ("save", "save:FILE")):
        r = lo("run", "--on-exit", typo, "--", "true")
        assert r.returncode == 125 and r.stderr.decode() == (
            "layover: run: unknown --on-exit mode '%s' (did you mean '%s'?); use prompt, keep, discard, apply or "
            "save:FILE; see 'layover run --help'\n" % (typo, meant)), r.stderr
    r = lo("run", "--on-exit", "zzz", "--", "true")  # nothing near: the old line
    assert r.stderr == (b"layover: run: unknown --on-exit mode 'zzz'; use prompt, keep, discard, apply or save:FILE; "
                        b"see 'layover run --help'\n")
    r = subprocess.run([LAYOVER, "mcp", "--on-exit", "dicard"], capture_output=True, env=lo.env,
                       stdin=subprocess.DEVNULL, timeout=60)
    assert r.returncode == 2 and r.stderr.decode() == (
        "layover: mcp: --on-exit dicard (did you mean 'discard'?): use keep, discard or save:FILE (apply is the "
        "person's); see 'layover mcp --help'\n"), r.stderr


def _first_hunk_rejected(lo, name, reason):
    """`apply -p NAME` on a pty, its first hunk of three answered `n` with
    `reason`; the second hunk's question is up."""
    c = _apply_p(lo, name)
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("n")
    c.expect(WHY)
    c.sendline(reason)
    c.expect(r"\(2/3\) " + HUNK)
    return c


def test_apply_p_records_the_rejections_of_a_quit_walk_and_says_so_and_none_of_an_interrupted_one(lo):
    edit_session(lo, "q")
    c = _first_hunk_rejected(lo, "q", "not this one")
    c.sendline("y")
    c.expect(r"\(3/3\) " + HUNK)
    c.sendline("q")  # what was chosen is applied; its rejection is recorded, and said
    c.expect(r"layover: recorded 1 rejection\(s\) in session 'q' \('layover rejections q' lists them\)\r\n")
    c.expect(r"applied 1 change")
    assert _finish(c) == 0
    rj = json.loads(lo("rejections", "q", "--json", check=True).stdout)["rejections"]
    assert [(x["path"], x["hunk"], x["reason"]) for x in rj] == [("f.txt", 1, "not this one")], rj
    # Ctrl+D after an `n` and its reason: nothing applied, nothing recorded.
    edit_session(lo, "i")
    before = (lo.target / "f.txt").read_bytes()
    c = _first_hunk_rejected(lo, "i", "changed my mind")
    c.sendeof()
    c.expect(r"interrupted; nothing was applied")
    assert _finish(c) == 1
    assert b"recorded" not in c.before
    assert (lo.target / "f.txt").read_bytes() == before
    assert json.loads(lo("rejections", "i", "--json", check=True).stdout)["rejections"] == []


def test_status_marks_what_lies_inside_a_new_dir_as_json_and_diff_do(lo):
    """Below a dir the session made, status (plain and --risk) marks a
    world-writable dir, an executable file and a git hook's mode as
    `status --json`, `diff` and the exit prompt do: the summary's walk once
    typed such entries from the directory listing alone and missed them."""
    assert lo.run("umask 022; mkdir -p nd/x && chmod 777 nd/x && printf x > nd/x/f && chmod 755 nd/x/f && "
                  "mkdir -p nd2/.git/hooks && printf '#!/bin/sh\\n' > nd2/.git/hooks/pre-commit && "
                  "chmod 755 nd2/.git/hooks/pre-commit", session="inside").returncode == 0
    want = ["A  nd/x/  ! group/world-writable", "A  nd/x/f  ! executable", "A  nd2/.git/hooks/  ! git hook",
            "A  nd2/.git/hooks/pre-commit  ! git hook, executable"]
    assert _status_lines(lo, "inside", None) == want
    plain = lo("status", "inside", check=True).stdout.decode().splitlines()
    assert all(line in plain for line in want), plain
    js = {c["path"]: c.get("risks") for c in json.loads(lo("status", "inside", "--json").stdout)}
    assert js["nd/x"] == ["group/world-writable"] and js["nd/x/f"] == ["executable"], js
