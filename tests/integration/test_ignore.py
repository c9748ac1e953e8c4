"""Ignore rules and PATH... filters, checked on the real tree afterwards:
caches are neither shown nor applied (and stay in the session), the real
target's .layoverignore counts, an agent-written one does not."""
import json

import pexpect

from conftest import LAYOVER

VENV = ("mkdir -p proj/pkg/__pycache__ .cache/pip src tests && "
        "echo code > proj/pkg/mod.py && echo pyc > proj/pkg/__pycache__/mod.cpython-311.pyc && "
        "echo c1 > .cache/pip/a && echo c2 > .cache/pip/b && echo swap > notes.txt.swp && "
        "echo main > src/main.py && echo t > tests/t.py")


def _caches(lo, home):
    lo.env["HOME"] = str(home)  # the home caches are anchored at the home
    lo.run(VENV, session="v", check=True)
    return "v"


def test_status_shows_one_ignored_line_and_apply_leaves_caches_out(lo, home):
    name = _caches(lo, home)
    out = lo("status", name, check=True).stdout.decode()
    assert "__pycache__" not in out and ".cache" not in out and ".swp" not in out
    assert "proj/pkg/mod.py" in out or "A  proj/" in out
    assert "+ 7 paths in ignored caches (--include-ignored to show them)" in out
    js = json.loads(lo("status", name, "--json", check=True).stdout)
    assert not any("__pycache__" in c["path"] or c["path"].startswith(".cache") for c in js)
    r = lo("apply", name, "--yes", "--json", check=True)
    assert json.loads(r.stdout)["ignored"] == 7
    assert (home / "proj/pkg/mod.py").read_text() == "code\n"
    assert (home / "src/main.py").read_text() == "main\n"
    assert not (home / "proj/pkg/__pycache__").exists()
    assert not (home / ".cache").exists() and not (home / "notes.txt.swp").exists()
    # Hidden, never lost: the upper layer still holds them.
    assert (lo.upper(name) / ".cache/pip/a").read_text() == "c1\n"


def test_include_ignored_shows_flags_and_applies_them(lo, home):
    name = _caches(lo, home)
    js = json.loads(lo("status", name, "--json", "--include-ignored", check=True).stdout)
    flagged = {c["path"] for c in js if c.get("ignored")}
    assert "proj/pkg/__pycache__/mod.cpython-311.pyc" in flagged and ".cache/pip/a" in flagged
    assert "src/main.py" not in flagged
    out = lo("status", name, "--include-ignored", "--no-default-ignores", check=True).stdout.decode()
    assert "ignored caches" not in out
    lo("apply", name, "--yes", "--include-ignored", check=True)
    assert (home / "proj/pkg/__pycache__/mod.cpython-311.pyc").read_text() == "pyc\n"
    assert (home / ".cache/pip/b").read_text() == "c2\n"


def test_real_layoverignore_with_negation_and_ignore_flag(lo, home):
    (home / ".layoverignore").write_text("# build output\n*.log\n!keep.log\n")
    lo.run("echo x > a.log; echo k > keep.log; mkdir -p out; echo o > out/o.txt; echo n > new.txt",
           session="g", check=True)
    out = lo("status", "g", "--ignore", "out/", check=True).stdout.decode()
    assert "a.log" not in out and "out/" not in out
    assert "keep.log" in out and "new.txt" in out
    assert "+ 3 paths in ignored caches" in out  # a.log, out/, out/o.txt
    lo("apply", "g", "--yes", "--ignore", "out/", check=True)
    assert (home / "keep.log").read_text() == "k\n" and (home / "new.txt").read_text() == "n\n"
    assert not (home / "a.log").exists() and not (home / "out").exists()


def test_agent_written_layoverignore_hides_nothing(lo, home):
    lo.run("printf '*\\n' > .layoverignore; echo evil > payload.sh; echo m >> notes.txt", session="h", check=True)
    out = lo("status", "h", check=True).stdout.decode()
    assert "payload.sh" in out and "notes.txt" in out and ".layoverignore" in out
    assert "ignored caches" not in out
    # Even a real rule that ignores everything never hides a changed rules file.
    (home / ".layoverignore").write_text("# everything\n*\n")
    out = lo("status", "h", check=True).stdout.decode()
    assert "M  .layoverignore" in out and "payload.sh" not in out


def test_symlinked_layoverignore_is_an_error_naming_the_fix(lo, home):
    (home / "rules").write_text("*.txt\n")
    (home / ".layoverignore").symlink_to("rules")
    lo.run("echo n > new.txt", session="l", check=True)
    r = lo("status", "l")
    assert r.returncode == 1
    assert b".layoverignore is a symlink" in r.stderr and b"replace the link" in r.stderr


def test_status_and_save_take_paths_after_dashdash(lo, home, tmp_path):
    name = _caches(lo, home)
    out = lo("status", name, "--", "src/", check=True).stdout.decode()
    assert "src/" in out and "proj" not in out and "tests" not in out
    out = lo("status", name, "--", "*.py", check=True).stdout.decode()
    assert "src/main.py" in out and "tests/t.py" in out and "proj/pkg/mod.py" in out
    patch = tmp_path / "src.tar.zst"
    lo("save", name, "-o", patch, "--", "src/", check=True)
    shown = {c["path"] for c in json.loads(lo("show", patch, "--json", check=True).stdout)}
    assert shown == {"src", "src/main.py"}
    r = lo("diff", name, "--", "tests")
    assert r.returncode == 1  # as git diff --exit-code: there are changes
    diff = r.stdout.decode()
    assert "+++ b/tests/t.py" in diff and "src/main.py" not in diff
    lo("apply", name, "--yes", "--", "tests/", check=True)
    assert (home / "tests/t.py").read_text() == "t\n" and not (home / "src").exists()


def test_deleted_dir_is_one_line_and_totals_use_separators(lo, home):
    lo.run("rm -rf old; mkdir many; for i in $(seq 1 1200); do echo $i > many/f$i; done", session="d", check=True)
    out = lo("status", "d", check=True).stdout.decode().splitlines()
    assert "D  old/" in out
    assert not any(line.startswith("D  old/a.txt") for line in out)
    # many/ is one line, with its 1,200 files: the total says so (ux9).
    assert out[-1] == ("1,202 changes: 1,201 added, 1 deleted (listed on 2 lines: a new dir's line stands for "
                       "what it holds)")


def test_prompt_pick_takes_paths_and_globs_and_shows_a_count(lo, home):
    _caches(lo, home)
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "v"], env=e, cwd=str(home), timeout=15)
    child.expect("in ignored caches")
    child.expect(r"\? \[r/a/s/p/K/d\] ")
    child.sendline("p")
    child.expect(r"Pick \((\d+) of (\d+) changes picked; Enter when done\): ")
    total = int(child.match.group(2))
    child.sendline("src/ tests/ -tests/*")
    child.expect(r"Pick \(3 of %d changes picked" % total)  # src, src/main.py, tests
    child.sendline("+tests/t.py")
    child.expect(r"Pick \(4 of %d changes picked" % total)
    child.sendline("")
    child.expect(r"What now \(4 of %d picked\)\?" % total)
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect("applied")
    child.expect("still holds the changes not applied")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")  # the menu again, over the rest (prompt2)
    child.sendline("k")
    child.expect(pexpect.EOF)
    child.close()
    assert (home / "src/main.py").read_text() == "main\n" and (home / "tests/t.py").read_text() == "t\n"
    assert not (home / "proj").exists() and not (home / ".cache").exists()


def test_done_when_a_real_venv_with_pip_install_reads_in_a_few_lines(lo, home):
    """Issue 16's "done when": after a venv and a pip install in the target,
    the exit prompt shows a folded .venv/ line and one ignored-caches line;
    Enter keeps; applying leaves nothing of layover's in the target, and
    `sessions` shows the session as applied."""
    from test_real_tools import _wheel
    wheel = home / "tinypkg-1.0-py3-none-any.whl"
    _wheel(wheel)
    lo.run("/usr/bin/python3 -m venv .venv && .venv/bin/python -m pip install -q --no-index --no-cache-dir "
           "--disable-pip-version-check %s && .venv/bin/python -c 'import tinypkg'" % wheel, session="venv",
           check=True)
    e = dict(lo.env, PAGER="cat", TERM="dumb", HOME=str(home))
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "venv"], env=e, cwd=str(home), timeout=30)
    child.expect(r"changed .*?:\r\n")
    child.expect(r"\? \[r/a/s/p/K/d\] ")
    review = child.before.decode()
    lines = [ln.strip() for ln in review.splitlines() if ln.strip()]
    assert any(ln.startswith("A  .venv/  (") for ln in lines), review
    assert sum("in ignored caches" in ln for ln in lines) == 1, review
    assert len(lines) <= 12, review  # the changes, the ignored line, the total, the menu
    child.sendline("")  # Enter keeps
    child.expect("kept")
    child.expect(pexpect.EOF)
    child.close()
    assert (lo.state / "sessions" / "venv" / "upper" / ".venv").is_dir()
    r = lo("apply", "venv", "--yes")
    assert r.returncode == 0, r.stderr
    assert b"undo with: layover undo --last" in r.stdout + r.stderr
    site = list(home.glob(".venv/lib/python3*/site-packages/tinypkg/__init__.py"))
    assert site and not list(home.glob(".venv/**/__pycache__"))
    assert not (home / ".layover-undo").exists()
    listed = json.loads(lo("sessions", "--json").stdout)
    assert [s["state"] for s in listed if s["name"] == "venv"] == ["applied"]
