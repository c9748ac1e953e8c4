"""A newcomer's rough edges (round 8): the exit prompt's 'no' to secrets, a
verb that needs a session given none, a deleted repository, `diff --target .`.

Each test fails before its fix."""
import os
import subprocess

from conftest import LAYOVER, real_dir

GH = "ghp_" + "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0hJ2kL4"


def test_the_exit_prompts_no_to_secrets_says_nothing_was_applied_and_how_to_leave_them_out(lo, home):
    import pexpect
    r = lo.run("printf 'T=%s\\n' > deploy.env; echo fine > notes.txt" % GH, session="s")
    assert r.returncode == 0, r.stderr
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "s"], env=e, cwd=str(home), timeout=15, encoding="utf-8")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("a")
    child.expect(r"Apply 2 changes to .*\? \[y/N\] ")
    child.sendline("y")
    child.expect(r"Apply these secrets too\? \[y/N\] ")
    child.sendline("n")
    # Before: straight back to the menu, not a word on what happened or how
    # to apply the rest.
    child.expect(r"nothing was applied; to apply the rest without the secrets: \[p\], then -deploy.env\r\n")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    # The answer it names works as it says.
    child.sendline("p")
    child.expect(r"Enter when done\): ")
    child.sendline("-deploy.env")
    child.expect(r"1 of 2 changes picked; Enter when done\): ")
    child.sendline("")
    child.expect(r"What now \(1 of 2 picked\)\? \[r/a/s/p/K/d\] ")
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("applied 1 change")
    child.expect("still holds the changes not applied")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")  # the menu again, over the rest (prompt2)
    child.sendline("k")
    child.expect(pexpect.EOF)
    child.close()
    assert (home / "notes.txt").read_text() == "fine\n"
    assert not (home / "deploy.env").exists()


def test_apply_and_save_without_a_session_name_the_most_recent(lo, home):
    # Nothing yet: the usage line as before, no hint.
    r = lo("apply")
    assert r.returncode == 2
    assert r.stderr.decode() == "layover: apply: missing SESSION or PATCH; see 'layover apply --help'\n"
    assert not (lo.state / "sessions").exists() or not any((lo.state / "sessions").iterdir())
    lo.run("echo a > a.txt", session="first", check=True)
    lo.run("echo b > b.txt", session="second", check=True)
    r = lo("apply")
    assert r.returncode == 2
    assert r.stderr.decode() == ("layover: apply: missing SESSION or PATCH (the most recent is 'second': "
                                 "'layover apply second'); see 'layover apply --help'\n")
    r = lo("save")
    assert r.returncode == 2
    assert r.stderr.decode() == ("layover: save: missing SESSION (the most recent is 'second': "
                                 "'layover save second -o FILE.tar.zst'); see 'layover save --help'\n")
    assert not (home / "a.txt").exists() and not (home / "b.txt").exists()


def _git_repo(d):
    d.mkdir(parents=True)
    (d / "main.py").write_text("print(1)\n")
    subprocess.run(["git", "init", "-q", str(d)], check=True)


def test_a_deleted_git_repository_is_marked_in_status_diff_and_a_saved_patch(lo, home, tmp_path):
    _git_repo(home / "app")
    _git_repo(home / "lib")
    (home / "plain").mkdir()
    (home / "plain" / "x.txt").write_text("x\n")
    r = lo.run("rm -rf app/.git lib plain", session="s")
    assert r.returncode == 0, r.stderr
    out = lo("status", "s").stdout.decode()
    # Before: `D  lib/` and `D  app/.git/` looked like any deleted dir.
    assert "D  app/.git/  ! deletes a git repository's history (.git)\n" in out, out
    assert "D  lib/  ! deletes a git repository\n" in out, out
    assert "D  plain/\n" in out, out
    risk = lo("status", "s", "--risk").stdout.decode()
    assert "lib/" in risk and "app/.git/" in risk and "plain" not in risk, risk
    js = lo("status", "s", "--json").stdout.decode()
    assert '"deletes a git repository"' in js
    patch = tmp_path / "s.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    show = lo("show", patch).stdout.decode()
    assert "D  lib/  ! deletes a git repository" in show, show
    diff = lo("diff", patch, "--stat")
    assert "deletes a git repository" in diff.stderr.decode(), diff.stderr


def test_diff_of_a_patch_with_target_dot_names_the_tree_it_compared_with(lo, home, tmp_path):
    lo.run("echo more >> notes.txt", session="s", check=True)
    patch = tmp_path / "s.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "notes.txt").write_text("one\ntwo\nthree\n")
    r = lo("diff", patch, "--target", ".", cwd=copy)
    assert r.returncode == 1, r.stderr
    # Before: "compared with . (--target)", which names no tree.
    assert "layover: diff: compared with %s (--target)\n" % os.path.realpath(copy) in r.stderr.decode(), r.stderr


def test_the_outside_line_names_a_single_file_as_a_file_not_a_dir_files_are_under(lo):
    # An interactive bash over a project writes ~/.bash_history: before, the
    # line said "1 file under ~/.bash_history", as if it were a dir.
    home = real_dir("nc8-home-")
    (home / "project").mkdir()
    lo.env["HOME"] = str(home)
    lo.target = home / "project"
    try:
        r = lo.run("echo h > ~/.nc8_history", session="o")
        assert r.returncode == 0, r.stderr
        assert b"outside the target (not applied): 1 file: ~/.nc8_history\n" in r.stderr, r.stderr
        r = lo.run("mkdir -p ~/.nc8dir && echo a > ~/.nc8dir/a && echo b > ~/.nc8dir/b", session="o")
        assert (b"outside the target (not applied): 3 files: 2 under ~/.nc8dir, ~/.nc8_history "
                b"(1 of them from earlier runs)\n") in r.stderr, r.stderr
        st = lo("status", "o")
        assert b"3 files: 2 under ~/.nc8dir, ~/.nc8_history" in st.stdout + st.stderr, st
    finally:
        subprocess.run(["rm", "-rf", str(home)])


def test_undo_says_which_paths_it_removes_rather_than_restores(lo, home):
    lo.run("echo changed > notes.txt && echo n > fresh.txt", session="u", check=True)
    assert lo("apply", "u", "--yes").returncode == 0
    dry = lo("undo", "--last", "--target", home, "--dry-run")
    # Before: "fresh.txt" alone under "restored", as if it came back.
    assert dry.stdout.decode() == ("dry run: would restore 2 path(s)\n"
                                   "  fresh.txt  (would be removed: the apply added it)\n  notes.txt\n"), dry
    r = lo("undo", "--last", "--target", home)
    assert r.stdout.decode() == "restored 2 path(s)\n  fresh.txt  (removed: the apply added it)\n  notes.txt\n", r
    assert not (home / "fresh.txt").exists() and (home / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_mcp_takes_a_target_with_a_tilde_as_a_clients_config_passes_it(require_sandbox, state_dir):
    # A JSON config's "args": ["mcp", "--target", "~/proj"] reaches layover
    # with no shell to expand it: before, "--target /~/proj: not a directory".
    home = real_dir("nc8-mcp-")
    (home / "proj").mkdir()
    env = dict(os.environ, HOME=str(home), LAYOVER_STATE_DIR=str(state_dir))
    try:
        def mcp(target):
            return subprocess.run([LAYOVER, "mcp", "--target", target, "--session", "nc8"], capture_output=True,
                                  env=env, cwd="/", stdin=subprocess.DEVNULL, timeout=60)
        r = mcp("~/proj")
        assert r.returncode == 0, r.stderr
        assert b"sandbox over %s/proj" % bytes(home) in r.stderr, r.stderr
        r = mcp("$HOME/proj")
        assert r.returncode == 2
        assert b"(the client passes it as written, with no shell to expand $HOME/proj: give the absolute path)" \
            in r.stderr, r.stderr
        r = mcp("proj")
        assert r.returncode == 2
        assert b"(a relative --target is taken from the directory the client started the server in, /: " \
               b"give the absolute path)" in r.stderr, r.stderr
    finally:
        subprocess.run(["rm", "-rf", str(home)])


def test_run_of_a_quoted_tilde_target_names_the_dir_it_likely_meant(lo, home):
    env = {"HOME": str(home)}
    r = lo("run", "--target", "~/docs", "--", "true", env=env, cwd=home.parent)
    assert r.returncode == 125
    # Before: "target ~/docs does not exist; create it or pass another --target", no more.
    assert r.stderr.decode() == ("layover: target ~/docs does not exist; create it or pass another --target "
                                 "(a quoted '~' is not expanded: did you mean %s/docs?)\n" % home), r.stderr
    r = lo("run", "--target", "$HOME/docs", "--", "true", env=env, cwd=home.parent)
    assert r.returncode == 125
    assert b"(a quoted '~' or '$VAR' is not expanded: leave it unquoted, or give the absolute path)\n" in r.stderr


def test_apply_conflict_markers_on_a_stale_copy_says_why_no_markers_were_written(lo, home):
    lo.run("echo sandbox >> notes.txt", session="st", check=True)
    with open(home / "notes.txt", "a") as f:
        f.write("host\n")
    r = lo("apply", "st", "--yes", "--conflict=markers")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "notes.txt: was changed on the target after the sandbox's version was made (stale copy)" in err, err
    # Before: the usual conflict lines only, as if --conflict=markers had not been given.
    assert ("note: --conflict=markers merges a file with the original a saved patch carries; a stale copy "
            "(the real file changed after the sandbox's version was made) has none to merge with, so it stays a "
            "conflict: compare it with 'layover diff', then --force or --exclude it\n") in err, err
    assert "note: --conflict=markers" not in lo("apply", "st", "--yes").stderr.decode()
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\nhost\n"
