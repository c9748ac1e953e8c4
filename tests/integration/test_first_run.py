"""The first run as a new user meets it (issue 15): where the command starts,
host paths it names, --ro/--rw, background processes at exit, git above the
target."""
import os
import subprocess

import pytest

from conftest import LAYOVER, real_dir


@pytest.fixture
def realdir(require_sandbox):
    d = real_dir("first-")
    (d / "proj").mkdir()
    (d / "proj" / "notes.txt").write_text("one\n")
    yield d
    subprocess.run(["rm", "-rf", str(d)])


def run(lo, target, *args, cwd, env=None):
    e = dict(lo.env, **(env or {}))
    return subprocess.run([LAYOVER, "run", "--target", str(target), "--on-exit", "keep", *map(str, args)],
                          capture_output=True, env=e, cwd=str(cwd), stdin=subprocess.DEVNULL, timeout=60)


def test_cwd_outside_the_target_starts_at_the_target_and_says_so(lo, realdir):
    proj = realdir / "proj"
    r = run(lo, proj, "--session", "tour", "--", "/bin/sh", "-c", "pwd; echo hi >> notes.txt", cwd="/usr/share")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().strip() == str(proj)
    assert b"starting in %s: the current directory is outside the target" % str(proj).encode() in r.stderr
    assert (lo.upper("tour") / "notes.txt").read_text() == "one\nhi\n"
    assert (proj / "notes.txt").read_text() == "one\n"


def test_cwd_flag_chooses_a_dir_and_refuses_an_invisible_one(lo, realdir):
    proj = realdir / "proj"
    (proj / "sub").mkdir()
    r = run(lo, proj, "--cwd", proj / "sub", "--on-exit", "discard", "--", "pwd", cwd="/")
    assert r.stdout.decode().strip() == str(proj / "sub")
    r = run(lo, proj, "--cwd", "/usr/share", "--on-exit", "discard", "--", "pwd", cwd="/")
    assert r.stdout.decode().strip() == "/usr/share"  # readable, outside the target: allowed
    r = run(lo, proj, "--cwd", "/tmp", "--", "pwd", cwd="/")
    assert r.returncode == 125
    assert b"--cwd /tmp is not visible inside" in r.stderr and b"--ro /tmp" in r.stderr


def test_a_script_in_the_hosts_tmp_fails_early_naming_ro(lo, realdir, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\necho job ran\n")
    script.chmod(0o755)
    r = run(lo, realdir / "proj", "--", script, cwd=realdir / "proj")
    assert r.returncode == 125, r.stderr
    assert r.stderr.count(b"\n") == 1
    assert b"is not visible inside the sandbox" in r.stderr and b"--ro " + str(script).encode() in r.stderr
    sessions = lo.state / "sessions"
    assert not sessions.exists() or not any(sessions.iterdir())  # refused before any session was made
    r = run(lo, realdir / "proj", "--ro", script, "--on-exit", "discard", "--", script, cwd=realdir / "proj")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"job ran\n"


def test_an_argument_naming_a_host_tmp_file_fails_early(lo, realdir, tmp_path):
    data = tmp_path / "input.csv"
    data.write_text("a,b\n")
    r = run(lo, realdir / "proj", "--", "cat", data, cwd=realdir / "proj")
    assert r.returncode == 125 and b"--ro " + str(data).encode() in r.stderr
    r = run(lo, realdir / "proj", "--ro", data, "--on-exit", "discard", "--", "cat", data, cwd=realdir / "proj")
    assert r.stdout == b"a,b\n"
    # Showing it read-only means read-only.
    r = run(lo, realdir / "proj", "--ro", data, "--on-exit", "discard", "--", "/bin/sh", "-c",
            "echo x >> %s; echo rc=$?" % data, cwd=realdir / "proj")
    assert b"rc=0" not in r.stdout
    assert data.read_text() == "a,b\n"


def test_rw_path_is_written_for_real_and_never_captured(lo, realdir):
    out = realdir / "out"
    out.mkdir()
    r = run(lo, realdir / "proj", "--rw", out, "--session", "rw", "--", "/bin/sh", "-c",
            "echo real > %s/result; echo inside > notes.txt" % out, cwd=realdir / "proj")
    assert r.returncode == 0, r.stderr
    assert b"--rw %s: writes there are real and never captured" % str(out).encode() in r.stderr
    assert (out / "result").read_text() == "real\n"
    st = lo("status", "rw", "--json", check=True)
    assert b"result" not in st.stdout and b"notes.txt" in st.stdout


@pytest.mark.parametrize("flag,path,why", [("--rw", "proj", b"overlaps the target"),
                                           ("--rw", "missing", b"does not exist"),
                                           ("--ro", "/proc/self", b"not supported")])
def test_bad_ro_rw_paths_are_refused(lo, realdir, flag, path, why):
    p = path if path.startswith("/") else realdir / path
    r = run(lo, realdir / "proj", flag, p, "--", "true", cwd=realdir / "proj")
    assert r.returncode == 125 and why in r.stderr, r.stderr


def test_background_processes_are_named_when_killed_and_wait_waits(lo, realdir):
    r = run(lo, realdir / "proj", "--on-exit", "discard", "--", "/bin/sh", "-c", "sleep 3081 & sleep 3082 & sleep 0.3",
            cwd=realdir / "proj")
    assert b"killed 2 background processes at exit: sleep (pid" in r.stderr, r.stderr
    assert b"--wait" in r.stderr
    r = run(lo, realdir / "proj", "--wait", "--session", "w", "--", "/bin/sh", "-c",
            "(sleep 0.5; echo late > late.txt) & echo early", cwd=realdir / "proj")
    assert r.stdout == b"early\n" and b"killed" not in r.stderr
    assert (lo.upper("w") / "late.txt").read_text() == "late\n"


def test_target_inside_a_git_work_tree_finds_the_repo_and_warns(lo, realdir):
    repo = realdir / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "sub" / "f.txt").write_text("f\n")
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "init"], check=True)
    r = run(lo, repo / "sub", "--on-exit", "discard", "--", "/bin/sh", "-c",
            "git log --format=%s; git status --short; echo x > f.txt; git commit -qam y; echo rc=$?",
            cwd=repo / "sub")
    out = r.stdout.decode()
    assert out.startswith("init\n"), (out, r.stderr)
    assert "rc=0" not in out  # .git is read-only: the commit fails, as warned
    line = "%s/.git is outside the target: git commits will fail; use --target %s" % (repo, repo)
    assert line.encode() in r.stderr
    # At the repo root: no warning.
    r = run(lo, repo, "--on-exit", "discard", "--", "git", "log", "--format=%s", cwd=repo)
    assert r.stdout == b"init\n" and b"outside the target" not in r.stderr


def test_hard_linked_file_is_marked_in_review_and_apply_keeps_the_link(lo, realdir):
    proj = realdir / "proj"
    (proj / "a.txt").write_text("one\n")
    os.link(proj / "a.txt", proj / "b.txt")
    r = run(lo, proj, "--session", "hl", "--", "/bin/sh", "-c", "echo two > a.txt; cat b.txt", cwd=proj)
    assert r.stdout == b"one\n"  # inside, the copy-up broke the link: the sibling is stale
    st = lo("status", "hl", check=True).stdout.decode()
    assert "hard-linked on the real tree: a.txt (2 names;" in st
    out = lo("apply", "hl", "--yes", check=True).stdout.decode()
    assert "hard links kept: 1 file(s)" in out and ": a.txt" in out
    assert (proj / "b.txt").read_text() == "two\n"  # every name sees the new content
    assert os.stat(proj / "a.txt").st_ino == os.stat(proj / "b.txt").st_ino
