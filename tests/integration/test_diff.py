"""`layover diff`: git-format output that real git applies, git's --stat and
--name-status, diff(1) exit codes, path filters, and terminal safety."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pexpect
import pytest

from conftest import LAYOVER

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}

# A mix of text changes git can express: edits, additions, a deletion of a
# whole dir, no newline at EOF, CRLF, a symlink, an exec bit, odd names.
SCRIPT = r"""
umask 022
printf 'one\nTWO\nthree\nfour\n' > notes.txt
printf 'hello\nworld' > docs/readme.txt
rm -rf old
printf 'a\r\nb\r\n' > docs/crlf.txt
printf 'new\nfile' > docs/new.txt
ln -s ../notes.txt docs/link
printf '#!/bin/sh\necho hi\n' > run.sh && chmod +x run.sh
printf 'spaced\n' > 'with space.txt'
printf 'tabbed\n' > "$(printf 'tab\there')"
printf 'latin\n' > "$(printf 'caf\351')"
rm link && printf 'was a link\n' > link
: > empty
"""


def _git(cwd, *args, check=True):
    return subprocess.run(["git", *args], cwd=cwd, env=dict(os.environ, **GIT_ENV), capture_output=True,
                          check=check)


def _files(root):
    """Files and symlinks (git tracks no dirs): path -> (kind, mode or target, bytes)."""
    out = {}
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]:
            p = Path(dirpath) / name
            rel = os.fsencode(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("l", os.readlink(p))
            else:
                out[rel] = ("f", p.stat().st_mode & 0o111 != 0, p.read_bytes())
    return out


def _expected(home, tmp_path, script):
    """The same script run directly on a copy: what applying must produce."""
    exp = tmp_path / "expected"
    shutil.copytree(home, exp, symlinks=True)
    subprocess.run(["/bin/sh", "-c", script], cwd=exp, check=True)
    return exp


def test_diff_output_applies_with_git_apply_to_a_copy_of_the_base(lo, home, tmp_path):
    lo.run(SCRIPT, session="s", check=True)
    r = lo("diff", "s")
    assert r.returncode == 1, r.stderr
    assert b"diff --git a/notes.txt b/notes.txt" in r.stdout
    patch = tmp_path / "out.diff"
    patch.write_bytes(r.stdout)
    copy = tmp_path / "copy"
    shutil.copytree(home, copy, symlinks=True)
    check = _git(copy, "apply", "--check", str(patch), check=False)
    assert check.returncode == 0, check.stderr
    _git(copy, "apply", str(patch))
    assert _files(copy) == _files(_expected(home, tmp_path, SCRIPT))
    # The real tree was never touched by diffing.
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_diff_matches_git_for_the_same_changes(lo, home, tmp_path):
    lo.run(SCRIPT, session="s", check=True)
    repo = tmp_path / "repo"
    shutil.copytree(home, repo, symlinks=True)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    subprocess.run(["/bin/sh", "-c", SCRIPT], cwd=repo, check=True)
    _git(repo, "add", "-A")
    for flag in ("--stat", "--name-status"):
        ours = lo("diff", "s", flag)
        assert ours.returncode == 1, ours.stderr
        theirs = _git(repo, "-c", "core.quotePath=true", "diff", "--cached", flag).stdout.decode("latin-1")
        if flag == "--stat":  # names as status shows them ("caf\xe9", as wide as git's "caf\351")
            theirs = theirs.replace('"caf\\351"', '"caf\\xe9"')
        assert ours.stdout.decode("latin-1") == theirs, flag
    ours = lo("diff", "s").stdout
    theirs = _git(repo, "-c", "core.quotePath=true", "diff", "--cached").stdout
    # layover writes no "index" lines and no function-name context after "@@".
    theirs = re.sub(rb"(?m)^index [0-9a-f]+\.\.[0-9a-f]+( \d+)?\n", b"", theirs)
    theirs = re.sub(rb"(?m)^(@@ [^@]+ @@).*$", rb"\1", theirs)
    assert ours == theirs


def test_diff_exit_codes_follow_diff1(lo, home):
    lo.run("true", "--keep-empty", session="empty", check=True)
    r = lo("diff", "empty")
    assert (r.returncode, r.stdout) == (0, b"")
    lo.run("echo x >> notes.txt", session="one", check=True)
    assert lo("diff", "one").returncode == 1
    r = lo("diff", "no-such-session")
    assert r.returncode == 2
    assert r.stderr.count(b"\n") == 1 and b"no-such-session" in r.stderr
    r = lo("diff", "one", "--color=sometimes")
    assert r.returncode == 2 and b"--color" in r.stderr
    # No SESSION: the most recent one, as status and log take it (it was a usage error, exit 2).
    r = lo("diff")
    assert r.returncode == 1 and r.stdout == lo("diff", "one").stdout and b"notes.txt" in r.stdout, r.stderr
    assert lo("diff", "--stat").stdout == lo("diff", "one", "--stat").stdout
    # Which session it took is said on stderr (the output never names it); status too.
    said = "the most recent ('layover sessions' lists them)\n"
    assert r.stderr.decode() == "layover: diff of session 'one', " + said
    r = lo("status")
    assert r.stdout == lo("status", "one").stdout and r.stderr.decode() == "layover: status of session 'one', " + said
    assert lo("status", "one").stderr == b"" and lo("status", "--json").stderr == b""


def test_diff_without_a_session_and_none_made_says_how_to_start_one(lo):
    r = lo("diff")
    assert r.returncode == 2 and r.stderr == b"layover: diff: no sessions yet; start one with 'layover run'\n"


def test_diff_of_a_saved_patch_file_equals_the_session_diff(lo, tmp_path):
    lo.run(SCRIPT, session="s", check=True)
    out = tmp_path / "s.tar.zst"
    lo("save", "s", "-o", out, check=True)
    a, b = lo("diff", "s"), lo("diff", out)
    assert a.returncode == b.returncode == 1
    assert a.stdout == b.stdout


def test_diff_path_filter_limits_output_to_those_paths(lo):
    lo.run(SCRIPT, session="s", check=True)
    r = lo("diff", "s", "--name-status", "--", "docs", "old/sub")
    assert r.returncode == 1
    assert r.stdout.decode() == ("A\tdocs/crlf.txt\nA\tdocs/link\nA\tdocs/new.txt\nM\tdocs/readme.txt\n"
                                 "D\told/sub/b.txt\n")
    r = lo("diff", "s", "--", "nothing-here")
    assert (r.returncode, r.stdout) == (0, b"")


def test_binary_and_mode_only_changes(lo, home):
    (home / "blob").write_bytes(b"a\0b")
    lo.run("printf 'a\\000c\\000' > blob; chmod 755 notes.txt", session="b", check=True)
    r = lo("diff", "b")
    assert r.returncode == 1
    assert r.stdout.decode() == ("diff --git a/blob b/blob\nBinary files a/blob and b/blob differ\n"
                                 "diff --git a/notes.txt b/notes.txt\nold mode 100644\nnew mode 100755\n")
    st = lo("diff", "b", "--stat").stdout.decode()
    # As git 2.39 prints it: counts align with "Bin".
    assert st == " blob      | Bin 3 -> 4 bytes\n notes.txt |   0\n 2 files changed, 0 insertions(+), 0 deletions(-)\n"


def test_piped_output_is_byte_exact_even_with_color_always(lo, home):
    (home / "esc.txt").write_bytes(b"plain\n")
    lo.run("printf 'red \\033[31m bell \\007 cr \\r\\n' > esc.txt", session="e", check=True)
    r = lo("diff", "e", "--color=always")
    assert b"\x1b[32m+red \x1b[31m bell \x07 cr \r\x1b[m\n" in r.stdout
    r = lo("diff", "e")
    assert b"+red \x1b[31m bell \x07 cr \r\n" in r.stdout and b"\x1b[m" not in r.stdout


def test_terminal_output_is_colored_paged_and_shows_control_characters(lo, home, tmp_path):
    (home / "esc.txt").write_bytes(b"plain\n")
    lo.run("printf 'red \\033[31m bell \\007\\n' > esc.txt; printf x > \"$(printf 'n\\033m')\"",
           session="e", check=True)
    # The pager: a script proving it was used, passing its input through.
    pager = tmp_path / "pager.sh"
    pager.write_text("#!/bin/sh\necho PAGER-STARTED\ncat\n")
    pager.chmod(0o755)
    env = dict(lo.env, PAGER=str(pager), TERM="xterm")  # TERM=dumb: no colors
    env.pop("NO_COLOR", None)
    child = pexpect.spawn(LAYOVER, ["diff", "e"], env=env, timeout=20)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    assert child.exitstatus == 1
    assert b"PAGER-STARTED" in out
    assert b"\x1b[32m+red ^[[31m bell ^G\x1b[m" in out  # colors ours, escapes made visible
    assert b"\x07" not in out
    assert b'"b/n\\033m"' in out  # names are quoted, never raw


def test_no_pager_and_pager_cat_write_straight_to_the_terminal(lo, home):
    lo.run("echo more >> notes.txt", session="p", check=True)
    for extra, env in ((["--no-pager"], {"PAGER": "/bin/false"}), ([], {"PAGER": "cat"})):
        child = pexpect.spawn(LAYOVER, ["diff", "p", *extra], env=dict(lo.env, TERM="dumb", **env), timeout=20)
        child.expect(pexpect.EOF)
        assert b"+more" in child.before
        child.close()
        assert child.exitstatus == 1


# Opaque dirs (rm -rf + recreate), file <-> dir type changes, a hardlink,
# an empty dir and a fifo (neither of which git can express).
STRUCTURAL = r"""
umask 022
rm -rf old && mkdir old && printf 'recreated\n' > old/a.txt
rm notes.txt && mkdir notes.txt && printf 'inner\n' > notes.txt/inner
rm -rf docs && printf 'docs is a file now\n' > docs
printf 'shared\n' > h1 && ln h1 h2
mkdir emptydir
mkfifo pipe
"""


def test_structural_changes_apply_with_git_and_fifos_are_noted(lo, home, tmp_path):
    lo.run(STRUCTURAL, session="st", check=True)
    r = lo("diff", "st")
    assert r.returncode == 1, r.stderr
    assert b"no diff form" in r.stderr  # the fifo
    ns = lo("diff", "st", "--name-status").stdout.decode()
    assert ns == ("A\tdocs\nD\tdocs/readme.txt\nA\th1\nA\th2\nD\tnotes.txt\nA\tnotes.txt/inner\n"
                  "M\told/a.txt\nD\told/sub/b.txt\n")
    patch = tmp_path / "st.diff"
    patch.write_bytes(r.stdout)
    copy = tmp_path / "copy"
    shutil.copytree(home, copy, symlinks=True)
    check = _git(copy, "apply", "--check", str(patch), check=False)
    assert check.returncode == 0, check.stderr
    _git(copy, "apply", str(patch))
    expected = _expected(home, tmp_path, STRUCTURAL.replace("mkfifo pipe", ""))
    assert _files(copy) == _files(expected)


def test_a_real_file_changed_since_the_session_is_noted_and_diffed_as_it_is_now(lo, home):
    lo.run("echo sandbox >> notes.txt; echo new > added.txt", session="c", check=True)
    clean = lo("diff", "c")
    assert clean.stderr == b""  # the base still matches: no note
    (home / "notes.txt").write_text("edited for real\n")
    (home / "added.txt").write_text("appeared for real\n")
    r = lo("diff", "c")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "notes.txt changed on the real filesystem" in err
    assert "added.txt changed on the real filesystem" in err
    assert "-edited for real\n" in r.stdout.decode()  # from what the real file holds now
    assert "-appeared for real\n" in r.stdout.decode()


def test_a_big_file_shows_the_lines_git_shows_without_being_held_whole(lo, home, tmp_path):
    # Over diff's 8 MiB hold on both sides: only the window that differs is
    # read (review/diff/trim.cc); the hunks must still be git's.
    big = "".join("line %07d of a big text file\n" % i for i in range(300000))  # 9.3 MB
    (home / "big.txt").write_text(big)
    script = "sed -i -e 's/^line 0150000 of/LINE 0150000 of/' -e '/^line 0150007 of/d' big.txt && " \
             "printf 'tail\\n' >> big.txt"
    lo.run(script, session="s", check=True)
    ours = lo("diff", "s", "--", "big.txt")
    assert ours.returncode == 1, ours.stderr
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(home / "big.txt", repo / "big.txt")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    subprocess.run(["/bin/sh", "-c", script], cwd=repo, check=True)
    theirs = _git(repo, "diff").stdout
    theirs = re.sub(rb"(?m)^index [0-9a-f]+\.\.[0-9a-f]+( \d+)?\n", b"", theirs)
    theirs = re.sub(rb"(?m)^(@@ [^@]+ @@).*$", rb"\1", theirs)
    assert b"@@ -149998," in theirs and b"+tail" in theirs
    assert ours.stdout == theirs


def test_diff_of_a_session_whose_target_moved_says_it_was_reading_it(lo):
    # diff reads a session through a capture made for it; an error there said
    # "saving session", as if the user had asked to save.
    lo.run("echo x >> notes.txt", session="mv1", check=True)
    moved = Path(str(lo.target) + "-moved")
    os.rename(lo.target, moved)
    try:
        r = lo("diff", "mv1", cwd=moved)
    finally:
        os.rename(moved, lo.target)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.startswith("layover: diff mv1: reading session 'mv1': the session's target "), err
    assert "saving" not in err and err.count("\n") == 1, err
