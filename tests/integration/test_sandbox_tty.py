"""Interactive runs: the command gets its own pty, Ctrl+C reaches the
command (not layover), and the user's terminal is restored afterwards."""
import os

import pexpect
import pytest

from conftest import LAYOVER


def _spawn(lo, *cmd):
    env = dict(lo.env, PS1="$ ", TERM="dumb")
    return pexpect.spawn(LAYOVER, ["run", "--target", str(lo.target), "--on-exit", "keep", "--", *cmd],
                         env=env, cwd=str(lo.target), timeout=60)  # per expect: generous on a starved CI pool


def test_interactive_run_gets_its_own_pty_and_ctrl_c_reaches_the_command(lo, home):
    child = _spawn(lo, "/bin/sh")
    child.sendline("test -t 0 && echo IS-A-\"\"TTY; ls /dev/pts | tr '\\n' ' '; echo; echo typed > typed.txt")
    child.expect("IS-A-TTY")
    child.expect(r"\r\nptmx \r\n")  # a private devpts: none of the host's terminals
    # The command says when its handler is in place (a Ctrl+C before it, on a
    # loaded machine's slow start, killed python outside its try); what the
    # test waits for is printed, never the pty's echo of the typed line.
    child.sendline("/usr/bin/python3 -c 'import time\ntry: print(\"in-\" \"try\", flush=True); time.sleep(30)\n"
                   "except KeyboardInterrupt: print(\"got-\" \"ctrl-c\")'")
    child.expect("in-try")
    child.sendcontrol("c")
    child.expect("got-ctrl-c")
    child.sendline("echo still-\"\"here")  # Ctrl+C went to the command, not to layover
    child.expect("still-here")
    child.sendline("exit 4")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 4
    assert not (home / "typed.txt").exists()
    sessions = [p for p in (lo.state / "sessions").iterdir()]
    assert len(sessions) == 1
    assert (sessions[0] / "upper" / "typed.txt").read_text() == "typed\n"


def test_terminal_settings_are_restored_after_the_run(lo):
    import termios
    child = _spawn(lo, "/bin/sh", "-c", "echo inside")
    child.expect("inside")
    child.expect(pexpect.EOF)
    attrs = termios.tcgetattr(child.child_fd)
    child.close()
    lflag = attrs[3]
    assert lflag & termios.ICANON and lflag & termios.ECHO  # not left in raw mode


def test_window_size_changes_reach_the_command(lo):
    child = _spawn(lo, "/bin/sh")
    child.setwinsize(24, 80)
    child.sendline("stty size")
    child.expect(r"24 80")
    child.setwinsize(40, 132)  # SIGWINCH to layover, which resizes the command's pty
    # The command asks until it sees the new size (no sleep for layover to
    # take the signal first); what is matched is printed, never the echo.
    child.sendline("until [ \"$(stty size)\" = '40 132' ]; do sleep 0.05; done; echo now-\"\"$(stty size)")
    child.expect(r"now-40 132", timeout=60)
    child.sendline("exit")
    child.expect(pexpect.EOF)


RESET = b"\x1b[?1047l\x1b[!p"  # the start of the relay's terminal reset (helper/sandbox/supervisor/pty_relay.h)


def test_a_command_that_left_the_terminal_altered_is_reset_before_the_exit_prompt(lo, home):
    # Concealed text, the G1 charset and a two-line scroll region would
    # shape how the exit prompt is drawn (its risk line hidden): the relay
    # resets the terminal before the prompt.
    cmd = "echo x >> notes.txt; echo ~ > ~/.bashrc; printf 'FAKE: no risks\\n\\033[8m\\016\\033[1;2r'"
    env = dict(lo.env, TERM="xterm", HOME=str(home))
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--session", "t", "--", "/bin/sh", "-c", cmd],
                          env=env, cwd=str(home), timeout=30)
    child.expect(r"\[r/a/s/p/K/d\] ")
    before = child.before
    child.sendline("k")
    child.expect(pexpect.EOF)
    child.close()
    tail = before.split(b"\x1b[1;2r", 1)[1]
    assert tail.startswith(RESET) and b"\x0f\x1b(B" in tail and b"\x1b[?1000l" in tail, before
    assert tail.index(RESET) < tail.index(b".bashrc")
    # Plain output is left alone.
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--on-exit", "discard", "--", "/bin/sh", "-c",
                                    "echo plain"], env=env, cwd=str(home), timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    assert b"plain" in child.before and b"\x1b" not in child.before
    # A dumb terminal interprets no escape: it gets none.
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--on-exit", "discard", "--", "/bin/sh", "-c",
                                    "printf 'x\\033[8my\\n'"], env=dict(env, TERM="dumb"), cwd=str(home), timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    assert RESET not in child.before and b"x\x1b[8my" in child.before, child.before


def test_a_command_given_the_terminal_directly_cannot_hide_the_lines_layover_prints_after_it(lo, home):
    # stdin not a terminal (`< /dev/null`, a piped prompt). Found by the
    # attack pass of 27 Nov, when the command wrote to the user's terminal
    # itself: its ESC[8m concealed "session kept" (and an --on-exit apply's
    # list of what it applied), below a decoy line of its own. Now its output
    # reaches it through an output-only pty, whose relay resets it the same.
    env = dict(lo.env, TERM="xterm")
    cmd = "echo ~ > .bashrc; printf 'layover: discarded session\\n\\033[8m'"
    argv = [LAYOVER, "run", "--target", str(home), "--session", "direct", "--", "/bin/sh", "-c", cmd]
    child = pexpect.spawn("/bin/sh", ["-c", 'exec "$@" < /dev/null', "sh", *argv], env=env, cwd=str(home), timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    out = child.before
    assert child.exitstatus == 0, out
    tail = out.split(b"\x1b[8m", 1)[1]
    assert tail.startswith(RESET) and b"\x1b[m" in tail, out
    assert tail.index(RESET) < tail.index(b"session 'direct' kept"), out
    # A dumb terminal still gets none.
    child = pexpect.spawn("/bin/sh", ["-c", 'exec "$@" < /dev/null', "sh", LAYOVER, "run", "--target", str(home),
                                      "--on-exit", "discard", "--", "/bin/sh", "-c", "echo plain"],
                          env=dict(env, TERM="dumb"), cwd=str(home), timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    assert b"plain" in child.before and b"\x1b" not in child.before, child.before


def test_terminal_settings_a_command_changed_unrelayed_are_put_back(lo, home):
    # The same terminal: echo turned off there would stay off in the user's
    # shell, which keeps a finished job's settings (found by the attack pass
    # of 27 Nov, when the command had that terminal itself; now it changes
    # its own output-only pty's: test_sandbox_tty_output.py).
    import termios
    env = dict(lo.env, TERM="xterm")
    off = ("import termios; a = termios.tcgetattr(1); a[3] &= ~(termios.ECHO | termios.ICANON); "
           "termios.tcsetattr(1, termios.TCSANOW, a); print('echo-off')")
    argv = [LAYOVER, "run", "--target", str(home), "--on-exit", "discard", "--", "/usr/bin/python3", "-c", off]
    child = pexpect.spawn("/bin/sh", ["-c", 'exec "$@" < /dev/null', "sh", *argv], env=env, cwd=str(home), timeout=30)
    child.expect("echo-off")
    child.expect(pexpect.EOF)
    lflag = termios.tcgetattr(child.child_fd)[3]
    child.close()
    assert lflag & termios.ECHO and lflag & termios.ICANON, lflag


def test_host_reaching_terminal_strings_from_the_command_never_reach_the_users_terminal(lo, home):
    # OSC 52 would set the host's clipboard (the person then pastes the
    # agent's command into a host shell); the others reach past the screen
    # too (docs/security.md, "Terminal control strings"). Colours, hyperlinks
    # and plain output still arrive.
    big = "QUFB" * 20000  # one OSC 52 of 80 KB, spread over many reads
    script = ("import sys, time\n"
              "w = sys.stdout.buffer.write\n"
              "w(b'before \\x1b[31mred\\x1b[m\\n')\n"
              "w(b'\\x1b]52;c;U0VDUkVUMQ==\\x07\\x1b]52;c;U0VDUkVUMg==\\x1b\\\\\\xc2\\x9d52;c;U0VDUkVUMw==\\xc2\\x9c')\n"
              "w(b'\\x1bPtmux;\\x1b\\x1b]52;c;U0VDUkVUNA==\\x07\\x1b\\\\\\x1b]2;SPOOFED\\x07\\x1b]7;file://x/tmp\\x07')\n"
              "w(b'\\x1b]1337;File=name=eA==;inline=0:U0VDUkVUNQ==\\x07\\x1b]4;1;rgb:ff/00/00\\x07')\n"
              "w(b'\\x1b]52;c;' + b'%s' + b'\\x07'); sys.stdout.flush()\n"
              "w(b'\\x1b]5'); sys.stdout.flush(); time.sleep(0.2)\n"  # split across two reads
              "w(b'2;c;U0VDUkVUNg==\\x07\\x1b]8;;https://example.com/\\x1b\\\\link\\x1b]8;;\\x1b\\\\ after\\n')\n"
              % big)
    env = dict(lo.env, TERM="xterm")
    child = pexpect.spawn(LAYOVER, ["run", "--target", str(home), "--on-exit", "discard", "--",
                                    "/usr/bin/python3", "-c", script], env=env, cwd=str(home), timeout=30)
    child.expect(pexpect.EOF)
    child.close()
    out = child.before
    assert child.exitstatus == 0, out
    assert b"before \x1b[31mred\x1b[m" in out, out
    assert b"\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\ after" in out, out
    for leaked in (b"52;", b"U0VDUkVU", b"QUFB", b"SPOOFED", b"file://", b"1337", b"rgb:", b"tmux"):
        assert leaked not in out, (leaked, out[:2000])
    assert b"\x9d" not in out and b"\x1b]" not in out.replace(b"\x1b]8;;", b""), out[:2000]
