"""Signals in the first milliseconds of `layover run` (docs/cli.md, run's
signals): whenever SIGINT, SIGTERM or SIGHUP arrives, the command is stopped,
run exits 128+N, and the state dir holds either no session or a complete one
(listed by `sessions`, its meta readable), never a half-made dir. No timing is
asserted: the delays only spread the signal over run's start."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import LAYOVER
from test_sandbox_core import _pids_with

DELAYS = (0, 0.001, 0.005, 0.02)


# The command writes a change first, then becomes the sleep: a lost signal
# leaves the sleep (found by its unique argument) running. bash, not dash:
# `dash -c` itself loses a SIGINT that comes as it starts (outside any
# sandbox, 46 of 300 runs signalled within 2 ms of their exec survived). The
# sleep is exec'd, not forked: a SIGINT that reaches a forked child before it
# drops bash's own handler for the default is bash's to lose (the child
# takes it as handled, the parent sees the child exit 0 and goes on), and a
# loaded machine widens that window enough to fail one run in hundreds.
def _command(marker):
    return ["/bin/bash", "-c", "echo x > early.txt; exec sleep %s" % marker]


def _start(lo, session, marker):
    return subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--session", session, "--on-exit", "keep",
                             "--", *_command(marker)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=lo.env, cwd=str(lo.target))


def _stop(p, sig, delay):
    if delay:
        time.sleep(delay)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("run went on after %s at %s s: the signal was lost" % (sig.name, delay))
    return err


def _check_stopped(lo, p, err, sig, marker):
    # 128+N from run; -N when the signal came before run's first instruction
    # (the default action: a shell shows 128+N as well).
    assert p.returncode in (128 + sig, -sig), (p.returncode, err)
    assert not _pids_with("sleep\x00%s" % marker), "the command outlived run"
    # The command's write went to the session's upper layer, never to the real tree.
    assert not (lo.target / "early.txt").exists()


def _sessions(lo):
    r = lo("sessions", "--json", check=True)
    return {i["name"]: i for i in json.loads(r.stdout)}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_at_any_moment_of_the_start_stops_the_command(lo, sig):
    sessions_dir = lo.state / "sessions"
    for i, delay in enumerate(DELAYS):
        name = "e%d-%d" % (sig, i)
        marker = "30.%d%d" % (sig, i)
        p = _start(lo, name, marker)
        err = _stop(p, sig, delay)
        _check_stopped(lo, p, err, sig, marker)
        listed = _sessions(lo)
        on_disk = set(os.listdir(sessions_dir)) if sessions_dir.exists() else set()
        # Nothing half-made: every dir is a listed session, and vice versa.
        assert on_disk == set(listed), (delay, on_disk, err)
        if name in listed:
            # Kept only because the command's write landed: complete and finished.
            assert listed[name]["status"] == "kept", (delay, listed[name])
            meta = json.loads((sessions_dir / name / "meta.json").read_text())
            assert meta["exit_code"] == 128 + sig
            # The signal may have come between the file's creation and its write.
            assert (lo.upper(name) / "early.txt").read_text() in ("", "x\n")


def test_a_signal_while_a_session_resumes_keeps_its_changes(lo):
    r = lo.run("echo first > kept.txt", session="res")
    assert r.returncode == 0, r.stderr
    # A resume freezes the last run first: its start is longer.
    for i, delay in enumerate(DELAYS + (0.04, 0.08)):
        marker = "31.%d" % i
        p = _start(lo, "res", marker)
        err = _stop(p, signal.SIGINT, delay)
        _check_stopped(lo, p, err, signal.SIGINT, marker)
        item = _sessions(lo)["res"]
        assert item["status"] == "kept", (delay, item, err)
    # The first run's change is still there, in whichever layer holds it now.
    r = lo.run("cat kept.txt", session="res")
    assert r.returncode == 0 and r.stdout == b"first\n", r.stderr


def test_an_early_ctrl_c_at_a_terminal_stops_the_command(lo):
    # With a terminal, Ctrl+C is a SIGINT to layover before its raw mode, and
    # a key after it, relayed once the command owns its pty (never dropped
    # by a pty that has no process group yet).
    import pexpect
    sessions_dir = lo.state / "sessions"
    for i, delay in enumerate(DELAYS):
        marker = "32.%d" % i
        c = pexpect.spawn(LAYOVER, ["run", "--target", str(lo.target), "--on-exit", "keep", "--", *_command(marker)],
                          env=dict(lo.env, TERM="dumb"), cwd=str(lo.target), timeout=10)
        if delay:
            time.sleep(delay)
        c.sendcontrol("c")
        try:
            c.expect(pexpect.EOF)
        except pexpect.TIMEOUT:
            os.kill(c.pid, signal.SIGKILL)
            c.wait()
            pytest.fail("a Ctrl+C at %s s was lost: %r" % (delay, c.before[-300:]))
        c.close()
        assert c.exitstatus == 130 or c.signalstatus == signal.SIGINT, (delay, c.exitstatus, c.signalstatus)
        assert not _pids_with("sleep\x00%s" % marker)
        on_disk = set(os.listdir(sessions_dir)) if sessions_dir.exists() else set()
        assert on_disk == set(_sessions(lo)), (delay, on_disk)


def test_the_command_starts_with_no_signal_blocked(lo):
    # run blocks its signals from its first instruction; the command must not inherit that.
    r = lo.run("grep -E '^Sig(Blk|Ign):' /proc/self/status", on_exit="discard")
    assert r.returncode == 0, r.stderr
    fields = dict(line.split(":\t") for line in r.stdout.decode().splitlines())
    assert int(fields["SigBlk"], 16) == 0
    assert int(fields["SigIgn"], 16) & (1 << (signal.SIGINT - 1)) == 0


def _ignoring(sig):
    return lambda: signal.signal(sig, signal.SIG_IGN)


def test_run_started_with_sigchld_ignored_still_ends(lo):
    # An inherited SIG_IGN for SIGCHLD has the kernel reap run's children for
    # it: run resets it, else it would wait for setup forever.
    p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
                          "echo inside"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                         env=lo.env, cwd=str(lo.target), preexec_fn=_ignoring(signal.SIGCHLD))
    out, err = p.communicate(timeout=20)
    assert (p.returncode, out) == (0, b"inside\n"), err


def test_a_signal_ignored_at_entry_stays_ignored(lo):
    # `nohup layover run ...`: an early SIGHUP neither cancels the run nor stops the command.
    p = subprocess.Popen([LAYOVER, "run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
                          "sleep 0.2; echo finished"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=lo.env, cwd=str(lo.target), preexec_fn=_ignoring(signal.SIGHUP))
    time.sleep(0.005)
    p.send_signal(signal.SIGHUP)
    out, err = p.communicate(timeout=20)
    assert (p.returncode, out) == (0, b"finished\n"), err
