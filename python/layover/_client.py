"""Host side of the REPL protocol (docs/protocol.md).

Everything read here comes from inside the sandbox and is untrusted: frame
lengths are capped, headers must be small JSON objects of known types, the
total output of one request is capped, and nothing is ever evaluated.  Any
violation "breaks" the client: the on_break callback stops the helper (the
session is kept, so its changes stay recoverable) and SandboxError is raised.
A dead helper or REPL shows up as EOF or via the alive() callback; reads wait
in short slices, so a call never hangs on a dead peer.
"""
from __future__ import annotations

import json
import os
import socket
import struct
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import SandboxError, TimeoutError

MAX_HEADER = 64 * 1024          # must match _server.py
MAX_PAYLOAD = 1024 * 1024       # must match _server.py
POLL = 0.25                     # seconds between liveness checks while waiting
INTERRUPT_GRACE = 2.0           # after an interrupt, before killing descendants
KILL_GRACE = 3.0                # after that, before stopping the sandbox
SEND_STALL = 30.0               # a REPL that reads nothing for this long is stuck
EXEC_SLACK = 5.0                # exec timeouts are enforced inside; this is the backstop
CTL_INTERRUPT = 1
CTL_KILL = 2
STREAMS = ("stdout", "stderr", "result")

Frame = Tuple[Dict[str, Any], bytes]


class _Deadline(Exception):
    pass


class Reply:
    """Collected answer to one request."""

    def __init__(self) -> None:
        self.streams: Dict[str, List[bytes]] = {s: [] for s in STREAMS}
        self.done: Dict[str, Any] = {}
        self.texts: List[Optional[str]] = []
        self.interrupted_by_host = False

    def data(self, stream: str) -> bytes:
        return b"".join(self.streams[stream])

    def text(self, i: int) -> Optional[str]:
        return self.texts[i] if i < len(self.texts) else None


class ReplClient:
    def __init__(self, sock: socket.socket, ctl: Optional[socket.socket],
                 alive: Callable[[], Optional[str]], on_break: Callable[[str], None],
                 max_output: int = 512 * 1024 * 1024) -> None:
        self.sock = sock
        self.ctl = ctl
        self.alive = alive
        self.on_break = on_break
        self.max_output = max_output
        self.broken: Optional[str] = None
        self.next_id = 1
        self.buf = bytearray()
        self.chunk = bytearray(256 * 1024)
        # A blocking socket with kernel-side timeouts (SO_RCVTIMEO/SNDTIMEO):
        # one syscall per recv/send on the fast path, where Python's own
        # timeouts would poll() first; a timeout surfaces as EAGAIN.
        sock.settimeout(None)
        tv = struct.pack("ll", int(POLL), int((POLL % 1) * 1e6))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
        if ctl is not None:
            ctl.setblocking(False)

    # --- failure ---

    def fail(self, reason: str) -> SandboxError:
        """Mark the client unusable, stop the sandbox, return the error."""
        if self.broken is None:
            self.broken = reason
            try:
                self.on_break(reason)
            finally:
                self.close()
        return SandboxError(reason)

    def check_usable(self) -> None:
        # A killed helper may leave the REPL answering for a moment (until
        # the kernel tears the PID namespace down), so look before each call.
        if self.broken is not None:
            raise SandboxError(self.broken)
        why = self.alive()
        if why is not None:
            raise self.fail(why)

    def close(self) -> None:
        for s in (self.sock, self.ctl):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    # --- frames ---

    def send(self, header: Mapping[str, Any], payload: bytes = b"") -> None:
        self.send_raw(json.dumps(header, separators=(",", ":")).encode("ascii"), payload)

    def send_raw(self, h: bytes, payload: bytes = b"") -> None:
        view = memoryview(len(h).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + h + payload)
        last_progress = time.monotonic()
        while view:
            try:
                n = self.sock.send(view)
            except (BlockingIOError, socket.timeout):
                why = self.alive()
                if why is not None:
                    raise self.fail(why) from None
                if time.monotonic() - last_progress > SEND_STALL:
                    raise self.fail("layover: the REPL stopped reading requests for %.0f s; the sandbox "
                                    "was stopped and its session kept" % SEND_STALL) from None
                continue
            except OSError as e:
                raise self.fail(self._dead_reason("cannot send to the REPL (%s)" % e)) from None
            view = view[n:]
            last_progress = time.monotonic()

    def _dead_reason(self, what: str) -> str:
        why = self.alive()
        return why if why is not None else "layover: %s; the sandbox was stopped" % what

    def _fill(self, n: int, deadline: Optional[float]) -> None:
        while len(self.buf) < n:
            try:
                got = self.sock.recv_into(self.chunk)
            except (BlockingIOError, socket.timeout):
                why = self.alive()
                if why is not None:
                    raise self.fail(why) from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise _Deadline() from None
                continue
            except OSError as e:
                raise self.fail(self._dead_reason("reading from the REPL failed (%s)" % e)) from None
            if not got:
                # Give the helper a moment to exit so its message can be shown.
                for _ in range(20):
                    if self.alive() is not None:
                        break
                    time.sleep(0.025)
                raise self.fail(self._dead_reason("the REPL inside the sandbox closed its socket"))
            self.buf += memoryview(self.chunk)[:got]

    def recv(self, deadline: Optional[float]) -> Frame:
        self._fill(8, deadline)
        hlen = int.from_bytes(self.buf[0:4], "big")
        plen = int.from_bytes(self.buf[4:8], "big")
        if not 0 < hlen <= MAX_HEADER or plen > MAX_PAYLOAD:
            raise self.fail("layover: the REPL sent a malformed frame (lengths %d/%d); the sandbox was "
                            "stopped and its session kept" % (hlen, plen))
        self._fill(8 + hlen + plen, deadline)
        raw = bytes(self.buf[8:8 + hlen])
        payload = bytes(self.buf[8 + hlen:8 + hlen + plen])
        del self.buf[:8 + hlen + plen]
        try:
            header = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as e:
            raise self.fail("layover: the REPL sent a frame with a bad header (%s); the sandbox was "
                            "stopped and its session kept" % type(e).__name__) from None
        if not isinstance(header, dict) or not isinstance(header.get("t"), str):
            raise self.fail("layover: the REPL sent a frame without a type; the sandbox was stopped "
                            "and its session kept")
        return header, payload

    # --- requests ---

    def hello(self, timeout: float) -> Dict[str, Any]:
        try:
            header, _ = self.recv(time.monotonic() + timeout)
        except _Deadline:
            raise self.fail("layover: the sandbox did not start within %.0f s" % timeout) from None
        if header.get("t") != "hello" or header.get("version") != 1:
            raise self.fail("layover: the REPL did not greet as expected; the sandbox was stopped")
        return header

    def interrupt(self, rid: int, kind: int = CTL_INTERRUPT) -> None:
        if self.ctl is None:
            return
        try:
            self.ctl.send(rid.to_bytes(8, "big") + bytes([kind]))
        except OSError:
            pass  # full or gone: the escalation below copes

    def request(self, header: Dict[str, Any], payload: bytes = b"", *, timeout: Optional[float] = None,
                backstop: float = 0.0, extra: Sequence[Frame] = ()) -> Reply:
        """Send one request (plus `extra` frames) and collect its reply.

        On timeout: interrupt, then kill the REPL's descendants, then stop the
        sandbox, each after a grace period.  Raises TimeoutError when the
        request was cut short by the timeout; KeyboardInterrupt on the host
        interrupts the request the same way and is re-raised.
        """
        self.check_usable()
        rid = self.next_id
        self.next_id += 1
        reply = Reply()
        if len(header) == 1:  # {"t": ...} only: the hot path skips json.dumps
            self.send_raw(b'{"t":"%s","id":%d}' % (header["t"].encode("ascii"), rid), payload)
        else:
            self.send(dict(header, id=rid), payload)
        for h, p in extra:
            self.send(dict(h, id=rid), p)
        deadline = None if timeout is None else time.monotonic() + timeout + backstop
        try:
            self._collect(rid, reply, deadline, timeout)
        except KeyboardInterrupt:
            reply.interrupted_by_host = True
            try:
                self._escalate(rid, reply, timeout)
            except (SandboxError, KeyboardInterrupt):
                pass
            raise
        return reply

    def _collect(self, rid: int, reply: Reply, deadline: Optional[float], timeout: Optional[float]) -> None:
        try:
            self._read_until_done(rid, reply, deadline)
        except _Deadline:
            self._escalate(rid, reply, timeout)
            raise TimeoutError("layover: the code in the sandbox ran past its %ss timeout and was "
                               "interrupted" % timeout, timeout=timeout, stdout=reply.data("stdout"),
                               stderr=reply.data("stderr")) from None

    def _escalate(self, rid: int, reply: Reply, timeout: Optional[float]) -> None:
        for kind, grace in ((CTL_INTERRUPT, INTERRUPT_GRACE), (CTL_KILL, KILL_GRACE)):
            self.interrupt(rid, kind)
            try:
                self._read_until_done(rid, reply, time.monotonic() + grace)
                return
            except _Deadline:
                continue
        self.fail("layover: the code in the sandbox ignored interrupts; the sandbox was stopped and "
                  "its session kept")
        raise TimeoutError("layover: the code in the sandbox ignored interrupts after its timeout; the "
                           "sandbox was stopped and its session kept", timeout=timeout,
                           stdout=reply.data("stdout"), stderr=reply.data("stderr"), stopped=True)

    def _read_until_done(self, rid: int, reply: Reply, deadline: Optional[float]) -> None:
        if reply.done:
            return
        total = sum(len(b) for s in reply.streams.values() for b in s)
        while True:
            header, payload = self.recv(deadline)
            t = header["t"]
            fid = header.get("id")
            total += len(payload)
            if total > self.max_output:
                raise self.fail("layover: the sandbox sent more than max_output=%d bytes for one call; "
                                "the sandbox was stopped and its session kept (raise max_output if this "
                                "is expected)" % self.max_output)
            if t == "out":
                stream = header.get("s")
                if stream not in STREAMS:
                    raise self.fail("layover: the REPL sent output for an unknown stream; the sandbox "
                                    "was stopped and its session kept")
                if fid == rid:
                    reply.streams[stream].append(payload)
                # Output of an earlier request (background threads): dropped.
                continue
            if t == "done" and fid == rid:
                reply.done = header
                reply.texts = self._split_texts(header, payload)
                return
            raise self.fail("layover: the REPL sent an unexpected %r frame; the sandbox was stopped and "
                            "its session kept" % t[:40])

    def _split_texts(self, header: Dict[str, Any], payload: bytes) -> List[Optional[str]]:
        lens = header.get("lens", [])
        if not isinstance(lens, list) or len(lens) > 8 or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= -1 for n in lens):
            raise self.fail("layover: the REPL sent a malformed reply; the sandbox was stopped and its "
                            "session kept")
        if sum(max(n, 0) for n in lens) != len(payload):
            raise self.fail("layover: the REPL sent a reply of the wrong length; the sandbox was stopped "
                            "and its session kept")
        out: List[Optional[str]] = []
        pos = 0
        for n in lens:
            if n < 0:
                out.append(None)
                continue
            out.append(payload[pos:pos + n].decode("utf-8", "replace"))
            pos += n
        return out


def socketpair() -> Tuple[socket.socket, socket.socket]:
    """A CLOEXEC stream socketpair (the child's end is passed explicitly)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    for s in (a, b):
        os.set_inheritable(s.fileno(), False)
    return a, b
