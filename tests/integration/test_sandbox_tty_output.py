"""Runs whose stdin is not a terminal but whose stdout or stderr is one
(`echo x | layover run -- cmd`, a script under a terminal): the command gets
an output-only pty, and what it prints reaches the user's terminal through
the same filter as an interactive run's (docs/security.md, "Terminal control
strings"). The user's terminal here is a real pty the test holds; stdin is a
pipe."""
import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import time

from conftest import LAYOVER, without_sanitizer_notes
from test_sandbox_core import _pids_with
from test_sandbox_tty import RESET

# OSC 52 (the clipboard) as BEL, ST and UTF-8 C1 forms, inside tmux
# passthrough, a title, OSC 7, window operations and kitty keyboard flags;
# colours and a hyperlink must still arrive.
HOSTILE = ("import os, sys\n"
           "w = lambda fd, b: os.write(fd, b)\n"
           "w(1, b'before \\x1b[31mred\\x1b[m\\n')\n"
           "w(1, b'\\x1b]52;c;U0VDUkVUMQ==\\x07\\x1b]52;c;U0VDUkVUMg==\\x1b\\\\\\xc2\\x9d52;c;U0VDUkVUMw==\\xc2\\x9c')\n"
           "w(2, b'\\x1bPtmux;\\x1b\\x1b]52;c;U0VDUkVUNA==\\x07\\x1b\\\\\\x1b]2;SPOOFED\\x07\\x1b]7;file://x/tmp\\x07')\n"
           "w(2, b'\\x1b[2t\\x1b[3;0;0t\\x1b[>31u\\x1b[=31;1u')\n"  # iconify, move; kitty keyboard flags
           "w(2, b'err \\x1b[32mgreen\\x1b[m\\n')\n"
           "w(1, b'\\x1b]8;;https://example.com/\\x1b\\\\link\\x1b]8;;\\x1b\\\\ after\\n')\n"
           "w(1, b'ttys %s %s %s\\n' % tuple(str(int(os.isatty(fd))).encode() for fd in (0, 1, 2)))\n"
           "w(1, b'stdin ' + sys.stdin.buffer.read() + b'\\n')\n")
LEAKS = (b"52;", b"U0VDUkVU", b"SPOOFED", b"file://", b"tmux", b"[2t", b"[3;0;0t", b">31u", b"=31;1u")


def _start(lo, args, out_tty=True, err_tty=True, env=None, stdin=b"piped-in"):
    """`layover run ARGS` with stdin a pipe and the chosen fds on a fresh pty."""
    master, slave = os.openpty()
    env = dict(dict(lo.env, TERM="xterm"), **(env or {}))
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), *args], stdin=subprocess.PIPE,
                         stdout=slave if out_tty else subprocess.PIPE, stderr=slave if err_tty else subprocess.PIPE,
                         env=env, cwd=str(lo.target))
    os.close(slave)
    try:
        p.stdin.write(stdin)
        p.stdin.close()
    except BrokenPipeError:
        # A command that never reads stdin may have ended, and the run with
        # it, before this write on a loaded machine (CI's pool). The tests
        # that need stdin read it, which keeps the pipe open until it closes.
        pass
    return p, master


def _read(master, until=None, timeout=60):
    """What reaches the outer terminal: up to `until` if given, else all of it (EIO once every writer is gone)."""
    out = b""
    end = time.monotonic() + timeout
    while until is None or until not in out:
        left = end - time.monotonic()
        assert left > 0, out[-2000:]
        if not select.select([master], [], [], left)[0]:
            continue
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        out += data
    return out


def _finish(p, master):
    out = _read(master)
    os.close(master)
    piped = (p.stdout or p.stderr).read() if (p.stdout or p.stderr) else b""
    p.wait(timeout=30)
    return out, piped


def test_host_reaching_strings_are_filtered_when_stdin_is_not_a_terminal(lo, home):
    # Before the output-only pty, the command wrote to this terminal itself:
    # every one of these reached it.
    p, master = _start(lo, ["--on-exit", "discard", "--", "/usr/bin/python3", "-c", HOSTILE])
    out, _ = _finish(p, master)
    assert p.returncode == 0, out
    assert b"before \x1b[31mred\x1b[m" in out and b"err \x1b[32mgreen\x1b[m" in out, out
    assert b"\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\ after" in out, out
    assert b"ttys 0 1 1" in out, out  # stdout and stderr stay terminals inside; stdin stays the pipe
    assert b"stdin piped-in" in out, out
    for leaked in LEAKS:
        assert leaked not in out, (leaked, out)
    assert b"\x9d" not in out and b"\x1b]" not in out.replace(b"\x1b]8;;", b""), out


def test_requests_are_dropped_when_no_one_reads_the_answers(lo, home):
    # With stdin a pipe, the terminal's answers to these (cursor position,
    # device attributes, a colour, DECRQSS, the size) would land in the user's
    # terminal's input, typed at the shell's prompt after the run; and a screen
    # read (DECRQCRA) is dropped on every relay. Before, all of them arrived.
    reqs = (b"\x1b[6n", b"\x1b[c", b"\x1b[>c", b"\x1b]11;?\x07", b"\x1bP$qm\x1b\\", b"\x1b[18t", b"\x1bZ",
            b"\x1b[1;1;1;1;1;1*y", b"\x05", b"\x1b[#R")  # ENQ: the answerback (PuTTY's is "PuTTY")
    code = "import os\nos.write(1, b'start ' + %r + b' end\\n')\n" % b"".join(reqs)
    p, master = _start(lo, ["--on-exit", "discard", "--", "/usr/bin/python3", "-c", code])
    out, _ = _finish(p, master)
    assert p.returncode == 0, out
    assert b"start  end" in out, out
    for r in reqs:
        assert r not in out, (r, out)


def test_stdout_piped_and_stderr_a_terminal(lo, home):
    # `cmd > file` at a terminal: the pipe stays a pipe (its bytes are the
    # command's own, for a program to read), stderr's terminal gets the filter.
    p, master = _start(lo, ["--on-exit", "discard", "--", "/usr/bin/python3", "-c", HOSTILE], out_tty=False)
    out, piped = _finish(p, master)
    assert p.returncode == 0, (out, piped)
    assert b"err \x1b[32mgreen\x1b[m" in out and b"before" not in out, out
    for leaked in LEAKS:
        assert leaked not in out, (leaked, out)
    assert b"before \x1b[31mred\x1b[m\n" in piped and b"ttys 0 0 1\n" in piped, piped
    assert b"stdin piped-in\n" in piped, piped
    # And the other way round: stdout the terminal, stderr piped.
    p, master = _start(lo, ["--on-exit", "discard", "--", "/usr/bin/python3", "-c", HOSTILE], err_tty=False)
    out, piped = _finish(p, master)
    assert b"before \x1b[31mred" in out and b"ttys 0 1 0" in out and b"err" not in out, out
    assert b"err \x1b[32mgreen" in piped, piped


def test_output_is_complete_before_layovers_own_lines(lo, home):
    # A command that prints much and exits at once: all of it, then run's line.
    cmd = "seq 1 30000; printf END"
    p, master = _start(lo, ["--on-exit", "discard", "--", "/bin/sh", "-c", cmd])
    out, _ = _finish(p, master)
    out = without_sanitizer_notes(out)
    assert p.returncode == 0, out[-500:]
    # run's own notices (a secret path hidden, when the home has one) come first.
    lines = [x for x in out.replace(b"\r", b"").split(b"\n") if not x.startswith(b"layover: ")]
    assert [int(x) for x in lines[:30000]] == list(range(1, 30001)), out[-500:]
    assert lines[30000].startswith(b"END"), out[-500:]
    # Killed by --timeout: what it printed first, then the line that says so.
    # The timeout leaves room for a loaded machine: the 20000 lines go through
    # two ptys and the relay first, and took over 2.5 s with the tests starved
    # (under 0.25 s idle); --timeout 1 then killed the command before its END.
    cmd = "seq 1 20000; printf 'END\\n'; printf '\\033[8m'; exec sleep 30"
    p, master = _start(lo, ["--on-exit", "discard", "--timeout", "5", "--", "/bin/sh", "-c", cmd])
    out, _ = _finish(p, master)
    assert p.returncode == 124, out[-500:]
    assert b"\n20000\r\r\nEND\r\r\n\x1b[8m" + RESET in out, out[-500:]  # the reset before run's line
    assert out.index(b"END") < out.index(b"--timeout 5s reached"), out[-500:]
    # A background process killed at exit: its line comes after what was printed.
    cmd = "sleep 30 & seq 1 20000; echo END"
    p, master = _start(lo, ["--on-exit", "discard", "--", "/bin/sh", "-c", cmd])
    out, _ = _finish(p, master)
    assert p.returncode == 0 and b"\n20000\r\r\nEND\r\r\n" in out, out[-500:]
    assert out.index(b"END") < out.index(b"killed 1 background process"), out[-500:]


def test_the_users_terminal_keeps_its_settings_and_a_dumb_one_gets_no_reset(lo, home):
    # The command changes its own pty's settings, never the user's terminal's.
    off = ("import termios; a = termios.tcgetattr(1); a[3] &= ~(termios.ECHO | termios.ICANON); "
           "termios.tcsetattr(1, termios.TCSANOW, a); print('echo-off', flush=True)")
    p, master = _start(lo, ["--on-exit", "discard", "--", "/usr/bin/python3", "-c", off])
    out = _read(master, until=b"echo-off")
    lflag = termios.tcgetattr(master)[3]
    out += _finish(p, master)[0]
    assert lflag & termios.ECHO and lflag & termios.ICANON, (lflag, out)
    assert RESET not in out, out  # plain output: no reset
    p, master = _start(lo, ["--on-exit", "discard", "--", "/bin/sh", "-c", "printf 'x\\033[8my\\n'"],
                       env={"TERM": "dumb"})
    out, _ = _finish(p, master)
    assert b"x\x1b[8my" in out and RESET not in out, out


def test_window_size_comes_from_the_terminal_and_changes_reach_the_command(lo, home):
    script = ("import os, signal\n"
              "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])\n"
              "print('size %d %d' % os.get_terminal_size(1), flush=True)\n"
              "print('ready', flush=True)\n"
              "got = signal.sigtimedwait([signal.SIGWINCH], 20)\n"
              "print('now %d %d' % os.get_terminal_size(1), got is not None, flush=True)\n")
    p, master = _start(lo, ["--on-exit", "discard", "--", "/usr/bin/python3", "-c", script])
    out = _read(master, until=b"ready")
    assert b"size 100 30" in out, out
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 132, 0, 0))
    p.send_signal(signal.SIGWINCH)  # the terminal's own would go to its foreground job: not this test's child
    out += _finish(p, master)[0]
    assert p.returncode == 0 and b"now 132 50 True" in out, out


def test_no_pty_when_no_fd_is_a_terminal(lo, home):
    # The bench's start-up case (an agent's, CI's): the command's fds are run's own.
    r = lo.run("test -t 1 || echo not-a-tty; readlink /proc/$$/fd/1 /proc/$$/fd/2 | cut -c1-5", on_exit="discard")
    assert r.returncode == 0 and r.stdout == b"not-a-tty\npipe:\npipe:\n", r


def test_a_stopped_terminal_holds_the_command_not_run(lo, home):
    # ^S on the user's terminal (IXON) stops its output: the relay waits for
    # it without blocking, so --timeout (and a forwarded Ctrl+C) still act;
    # what waited arrives after ^Q, then run's line.
    marker = "flood-%d" % os.getpid()
    p, master = _start(lo, ["--on-exit", "discard", "--timeout", "2", "--", "/usr/bin/yes", marker])
    _read(master, until=marker.encode())
    os.write(master, b"\x13")  # ^S, typed
    sandbox = lambda: [pid for pid in _pids_with(marker) if pid != p.pid]  # run's own cmdline has it too
    deadline = time.monotonic() + 20
    while sandbox() and time.monotonic() < deadline:
        # Keep the outer side drained of what came before the stop.
        if select.select([master], [], [], 0.2)[0]:
            os.read(master, 65536)
    assert not sandbox(), "the command outlived --timeout while the terminal was stopped"
    os.write(master, b"\x11")  # ^Q
    out, _ = _finish(p, master)
    assert p.returncode == 124 and b"--timeout 2s reached" in out, out[-300:]
