"""The attack pass of 27 Nov on the host side of the REPL channel
(attack23): a hostile REPL flooding the reply socket with frames that carry
headers and no payload. Each test failed before its fix."""
from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time

import pytest

from layover import SandboxError, TimeoutError
from layover import _client, _client_frames

# A child that writes header-only "out" frames of an earlier request (id 0,
# which the host drops) as fast as the socket takes them, until killed.
FLOOD = ("import os, socket, sys\n"
         "s = socket.socket(fileno=int(sys.argv[1]))\n"
         "h = sys.argv[2].encode()\n"
         "f = len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h\n"
         "block = f * max(1, 65536 // len(f))\n"
         "try:\n"
         "    while True:\n"
         "        s.sendall(block)\n"
         "except OSError:\n"
         "    pass\n")


@contextlib.contextmanager
def _flooded_client(header: bytes, **kw):
    """A ReplClient whose peer floods it with `header`-only frames (from
    another process: the host's reading is what is measured)."""
    host, peer = _client.socketpair()
    writer = subprocess.Popen([sys.executable, "-c", FLOOD, str(peer.fileno()), header.decode()],
                              pass_fds=[peer.fileno()])
    peer.close()
    client = _client.ReplClient(host, None, lambda: None, lambda reason: None, proc=writer, **kw)
    try:
        yield client
    finally:
        writer.kill()
        writer.wait()
        client.close()


def _call(client, timeout):
    """client.run_code in a thread: (exception or result, seconds), or None
    when it was still reading after 40 s (the flood then ends)."""
    got = []

    def go():
        t0 = time.monotonic()
        try:
            got.append(client.run_code("x", timeout=timeout))
        except BaseException as e:  # noqa: B036 - reported below
            got.append(e)
        got.append(time.monotonic() - t0)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(40)
    return got if got else None


OUT = b'{"t":"out","id":0,"s":"stdout"}'  # the REPL's own form: the fast header match
PADDED = b'{"t":"out","id":0,"s":"stdout","pad":"' + b"x" * 60000 + b'"}'  # 60 KB of header, json.loads


@pytest.mark.parametrize("header", [OUT, PADDED], ids=["fast form", "60 KB header"])
def test_a_flood_of_header_only_frames_counts_against_max_output(header):
    # Only payload bytes counted: frames with a header and no payload never
    # reached max_output, and the host read (and parsed) them forever.
    with _flooded_client(header, max_output=4 << 20) as client:
        got = _call(client, None)
        assert got is not None, "still reading a flood of empty frames after 40 s"
        assert isinstance(got[0], SandboxError) and "max_output" in str(got[0]), got


@pytest.mark.parametrize("header", [OUT], ids=["fast form"])
def test_a_flood_never_keeps_a_call_past_its_timeout_and_the_escalation(header):
    # The deadline was looked at only when no data was waiting: a REPL that
    # kept the socket full held run(timeout=1) past its timeout, the
    # interrupt's and the kill's grace, until max_output (or for ever).
    with _flooded_client(header, max_output=1 << 40) as client:  # only the deadline can stop it
        got = _call(client, 1.0)
        assert got is not None, "run(timeout=1) still reading a flood after 40 s"
        assert isinstance(got[0], TimeoutError) and got[0].stopped, got
        grace = _client_frames.INTERRUPT_GRACE + _client_frames.KILL_GRACE
        assert got[1] < 1.0 + grace + 2 * _client_frames.POLL + 3, got  # a few seconds of slack for a loaded machine
