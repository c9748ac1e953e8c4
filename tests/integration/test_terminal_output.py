"""Colors, bold and paging only on a terminal, NO_COLOR respected (issue 16):
checked on the exact bytes a real pty and a pipe receive."""
import os
import subprocess

import pexpect

from conftest import LAYOVER

SOURCE_ROOT = os.environ.get("LAYOVER_SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")


def _pager(tmp_path):
    """A pager proving it ran, and with which LESS, passing its input through."""
    p = tmp_path / "pager.sh"
    p.write_text('#!/bin/sh\necho "PAGER-STARTED LESS=$LESS"\ncat\n')
    p.chmod(0o755)
    return str(p)


def _pty(args, env, cwd=None):
    child = pexpect.spawn(LAYOVER, args, env=env, cwd=cwd, timeout=20)
    child.expect(pexpect.EOF)
    out = child.before
    child.close()
    return child.exitstatus, out


def _env(lo, tmp_path, **extra):
    env = {k: v for k, v in lo.env.items() if k not in ("NO_COLOR", "LESS")}
    env.update(PAGER=_pager(tmp_path), TERM="xterm")
    env.update(extra)
    return env


def test_diff_on_a_terminal_is_colored_unless_no_color_is_set(lo, home, tmp_path):
    lo.run("echo more >> notes.txt && printf 'bell \\007\\n' > b.txt", session="c", check=True)
    rc, out = _pty(["diff", "c"], _env(lo, tmp_path))
    assert rc == 1 and b"PAGER-STARTED LESS=FRX" in out and b"\x1b[32m+more\x1b[m" in out
    rc, out = _pty(["diff", "c"], _env(lo, tmp_path, NO_COLOR="1"))
    assert rc == 1 and b"+more" in out and b"\x1b[" not in out
    assert b"+bell ^G" in out  # control bytes still shown visibly on a terminal
    assert b"PAGER-STARTED LESS=FX" in out  # less shows stray escapes, not passes them
    # The flag wins over the environment, as the NO_COLOR convention says.
    rc, out = _pty(["diff", "c", "--color=always"], _env(lo, tmp_path, NO_COLOR="1"))
    assert b"\x1b[32m+more\x1b[m" in out
    # TERM=dumb means no colors either.
    rc, out = _pty(["diff", "c"], _env(lo, tmp_path, TERM="dumb"))
    assert b"+more" in out and b"\x1b[" not in out


def test_status_and_show_page_on_a_terminal_and_never_into_a_pipe(lo, home, tmp_path):
    lo.run("echo more >> notes.txt && echo x > added.txt", session="p", check=True)
    rc, out = _pty(["status", "p"], _env(lo, tmp_path))
    assert rc == 0 and b"PAGER-STARTED LESS=FX" in out
    assert out.index(b"PAGER-STARTED") < out.index(b"M  notes.txt")  # the listing went through it
    rc, out = _pty(["status", "p", "--no-pager"], _env(lo, tmp_path))
    assert rc == 0 and b"M  notes.txt" in out and b"PAGER-STARTED" not in out
    piped = subprocess.run([LAYOVER, "status", "p"], env=_env(lo, tmp_path), capture_output=True)
    assert piped.returncode == 0 and b"A  added.txt" in piped.stdout and b"PAGER" not in piped.stdout
    # --json is for programs: never paged, even on a terminal.
    rc, out = _pty(["status", "p", "--json"], _env(lo, tmp_path))
    assert b"PAGER-STARTED" not in out and b'"notes.txt"' in out
    patch = tmp_path / "p.tar.zst"
    assert lo("save", "p", "-o", str(patch)).returncode == 0
    rc, out = _pty(["show", str(patch)], _env(lo, tmp_path))
    assert rc == 0 and b"PAGER-STARTED" in out and b"A  added.txt" in out
    rc, out = _pty(["show", str(patch), "--no-pager"], _env(lo, tmp_path))
    assert rc == 0 and b"PAGER-STARTED" not in out and b"A  added.txt" in out


def test_exit_prompt_marks_risk_in_red_on_a_terminal_but_not_under_no_color(lo, home, tmp_path):
    lo.run("echo 'alias x=y' >> .bashrc", session="r", check=True)

    def prompt(**extra):
        env = _env(lo, tmp_path, PAGER="cat", HOME=str(home), **extra)
        child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "r"], env=env, cwd=str(lo.target), timeout=20)
        child.expect(r"\[r/a/s/p/K/d\] ")
        seen = child.before
        child.sendline("k")
        child.expect(pexpect.EOF)
        child.close()
        return seen

    colored = prompt()
    assert b".bashrc" in colored and b"\x1b[1;31m" in colored
    plain = prompt(NO_COLOR="1")
    assert b".bashrc" in plain and b"\x1b[" not in plain
    assert (lo.state / "sessions" / "r" / "upper" / ".bashrc").is_file()  # kept, both times


def test_make_demo_into_a_file_holds_no_escape_codes(tmp_path):
    demo = os.path.join(SOURCE_ROOT, "tests", "demo.sh")
    binary_dir = os.path.relpath(os.path.dirname(LAYOVER), SOURCE_ROOT)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "LAYOVER_STATE_DIR")}
    env["TERM"] = "xterm"
    r = subprocess.run(["bash", demo, binary_dir], env=env, capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-2000:]
    out = r.stdout + r.stderr
    assert b"demo finished" in out and b"+hello, sandbox" in out
    assert b"\x1b" not in out and b"\r" not in out
    # On a terminal the same demo is bold: the check above can fail.
    child = pexpect.spawn("bash", [demo, binary_dir], env=env, timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0 and b"\x1b[1m== 1. A scratch home" in child.before
