"""A sandbox driven over --ipc-fd (the Python bindings, `layover mcp`) whose
caller is gone: found at the end of the stop of 27 Nov, a REPL busy in the
agent's code (a regex of exponential time) ran on for 46 minutes after its
MCP server had died, and would have until --timeout (24 h by default),
burning a CPU. The supervisor now watches its end of the socket for the
caller's hang-up and stops the sandbox 5 s later if it has not ended, keeping
the session (docs/security.md, "The caller gone")."""
import socket
import subprocess
import time

from conftest import LAYOVER


def start(lo, session, script, on_exit="discard"):
    mine, theirs = socket.socketpair()
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), "--on-exit", on_exit, "--session", session,
                          "--ipc-fd", str(theirs.fileno()), "--", "/bin/sh", "-c", script],
                         env=lo.env, cwd=str(lo.target), pass_fds=(theirs.fileno(),),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    theirs.close()
    return p, mine


def wait_for(path, p):
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.02)
    assert path.exists(), p.communicate(timeout=30)


def test_a_busy_sandbox_whose_caller_is_gone_is_stopped_and_kept(lo):
    p, mine = start(lo, "gone", "cd '%s' && echo kept > work.txt && while :; do :; done" % lo.target)
    wait_for(lo.upper("gone") / "work.txt", p)
    t = time.monotonic()
    mine.close()  # the caller dies: its end of the socket closes
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()  # (run only: its sandbox is the supervisor's, which a build without the watch leaves running)
        raise
    took = time.monotonic() - t
    assert p.returncode == 125, err
    assert b"the caller closed its IPC socket (--ipc-fd) and the command did not end within 5s: sandbox stopped" \
        in err, err
    assert 4.5 < took < 30, took
    # Kept whatever --on-exit said, as a --timeout stop is; the real tree untouched.
    assert (lo.upper("gone") / "work.txt").read_text() == "kept\n"
    assert not (lo.target / "work.txt").exists()


def test_a_sandbox_that_reads_its_socket_ends_by_itself_when_the_caller_closes(lo):
    # As the REPL does at the end of its socket: no stop, --on-exit as asked.
    p, mine = start(lo, "eof", "cd '%s' && echo x > done.txt && cat <&3 >/dev/null" % lo.target)
    wait_for(lo.upper("eof") / "done.txt", p)
    mine.close()
    out, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert b"sandbox stopped" not in err, err
    assert not lo.session_dir("eof").exists()  # discarded, as asked


def test_a_caller_that_keeps_its_socket_open_is_never_stopped_for_it(lo):
    p, mine = start(lo, "open", "cd '%s' && echo x > ran.txt && sleep 7" % lo.target)
    out, err = p.communicate(timeout=60)
    mine.close()
    assert p.returncode == 0, err
    assert b"sandbox stopped" not in err, err
