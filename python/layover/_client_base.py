"""ReplClient's general path (docs/protocol.md): the sockets, failure (the
client broken, the sandbox stopped), frames sent and read with every check,
one request and its reply, timeouts and interrupts escalated.  ReplClient
(_client.py) adds the hot paths of run() and exec(), which hand anything
unusual to this code.  Everything read comes from inside and is untrusted
(see _client.py).
"""
from __future__ import annotations

import os
import socket
import subprocess
import struct
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ._client_frames import (CTL_INTERRUPT, CTL_KILL, INTERRUPT_GRACE, KILL_GRACE, MAX_HEADER, MAX_PAYLOAD, POLL,
                             SEND_STALL, STREAMS, Frame, NotJson, Reply, _compact_json, _Deadline, _fast_header,
                             _readable, _run_result, _RUN, strict_json)
from .errors import SandboxError, TimeoutError, os_reason
from .model import RunResult


class ClientBase:
    def __init__(self, sock: socket.socket, ctl: Optional[socket.socket],
                 alive: Callable[[], Optional[str]], on_break: Callable[[str], None],
                 max_output: int = 512 * 1024 * 1024,
                 proc: Optional[subprocess.Popen[bytes]] = None,
                 replies: Optional[socket.socket] = None) -> None:
        self.sock = sock  # requests go out here
        # Replies come in on their own socket (Repl.spawn; docs/protocol.md):
        # a reader sharing a socket with its own sends is woken each time the
        # peer consumes a request, and on one CPU that costs a context switch.
        self.replies = replies if replies is not None else sock
        self.proc = proc  # the child alive() watches, for cheaper checks
        self.ctl = ctl
        self.alive = alive
        self.on_break = on_break
        self.max_output = max_output
        self.broken: Optional[str] = None
        self.again: Tuple[str, str] = ("", "")  # around `broken` for the calls after it (newuser17)
        self.next_id = 1
        self.buf = bytearray()
        self.frame_len = 0  # the whole size of the frame recv() returned last, header included
        self.chunk = bytearray(256 * 1024)
        self.lock = threading.Lock()    # one request at a time (held by Repl and run_code)
        self.current: Optional[int] = None  # the id of the request in flight, for interrupts
        # A blocking socket with kernel-side timeouts (SO_RCVTIMEO/SNDTIMEO):
        # one syscall per recv/send on the fast path, where Python's own
        # timeouts would poll() first; a timeout surfaces as EAGAIN.
        sock.settimeout(None)
        tv = struct.pack("ll", int(POLL), int((POLL % 1) * 1e6))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
        if replies is not None:
            replies.settimeout(None)
            replies.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
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
        if self.broken is not None:  # an earlier call's reason, said as that (it read as this call's own)
            raise SandboxError(self.again[0] + self.broken + self.again[1] if self.again[0] else self.broken)
        if self.proc is not None:
            # One waitid() that leaves the child unreaped (Popen still owns
            # it), instead of alive()'s Popen.poll().
            try:
                if os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                    return
            except OSError:
                pass  # reaped already, or not our child: alive() decides
        why = self.alive()
        if why is not None:
            raise self.fail(why)

    def close(self) -> None:
        for s in (self.sock, self.replies, self.ctl):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass

    # --- frames ---

    def send(self, header: Mapping[str, Any], payload: bytes = b"") -> None:
        self.send_raw(_compact_json(header).encode("ascii"), payload)

    def send_raw(self, h: bytes, payload: bytes = b"") -> None:
        frame = len(h).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + h + payload
        try:
            n = self.sock.send(frame)  # the usual case: all of it, one syscall
        except (BlockingIOError, socket.timeout):
            n = 0
        except OSError as e:
            raise self.fail(self._dead_reason("cannot send to the REPL (%s)" % os_reason(e))) from None
        if n != len(frame):
            self._send_rest(memoryview(frame)[n:])

    def _send_rest(self, view: memoryview) -> None:
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
                raise self.fail(self._dead_reason("cannot send to the REPL (%s)" % os_reason(e))) from None
            view = view[n:]
            last_progress = time.monotonic()

    def _dead_reason(self, what: str) -> str:
        why = self.alive()
        return why if why is not None else "layover: %s; the sandbox was stopped" % what

    def _fill(self, n: int, deadline: Optional[float]) -> None:
        while len(self.buf) < n:
            if deadline is not None:
                # Within a POLL of the deadline: wait for exactly what is left
                # (the socket's own timeout is a whole POLL). Past it, what is
                # waiting already is still read, for one POLL at most: a REPL
                # that keeps the socket full must not hold a call past its
                # timeout (found by the attack pass of 27 Nov).
                left = deadline - time.monotonic()
                if left < POLL and (left <= -POLL or not _readable(self.replies, left)):
                    raise _Deadline()
            try:
                got = self.replies.recv_into(self.chunk)
            except (BlockingIOError, socket.timeout):
                why = self.alive()
                if why is not None:
                    raise self.fail(why) from None
                if deadline is not None and time.monotonic() >= deadline:
                    raise _Deadline() from None
                continue
            except OSError as e:
                raise self.fail(self._dead_reason("reading from the REPL failed (%s)" % os_reason(e))) from None
            if not got:
                # Give the helper a moment to exit so its message can be shown.
                for _ in range(20):
                    if self.alive() is not None:
                        break
                    time.sleep(0.025)
                raise self.fail(self._dead_reason("the REPL inside the sandbox closed its socket"))
            self.buf += memoryview(self.chunk)[:got]

    def recv(self, deadline: Optional[float]) -> Frame:
        buf = self.buf
        if len(buf) < 8:
            self._fill(8, deadline)
        hlen = int.from_bytes(buf[0:4], "big")
        plen = int.from_bytes(buf[4:8], "big")
        if not 0 < hlen <= MAX_HEADER or plen > MAX_PAYLOAD:
            raise self.fail("layover: the REPL sent a malformed frame (lengths %d/%d); the sandbox was "
                            "stopped and its session kept" % (hlen, plen))
        end = 8 + hlen + plen
        if len(buf) < end:
            self._fill(end, deadline)
        raw = bytes(buf[8:8 + hlen])
        payload = bytes(buf[8 + hlen:end])
        del buf[:end]
        self.frame_len = end
        header = _fast_header(raw)
        if header is not None:
            return header, payload
        try:
            header = strict_json(raw.decode("utf-8"))  # no NaN, no Infinity (_client_frames.py)
        except (ValueError, RecursionError) as e:
            raise self.fail("layover: the REPL sent a frame with a bad header (%s); the sandbox was "
                            "stopped and its session kept" % (e if isinstance(e, NotJson) else type(e).__name__)
                            ) from None
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
        return self._finish(rid, reply, deadline, timeout)

    def _finish(self, rid: int, reply: Reply, deadline: Optional[float], timeout: Optional[float]) -> Reply:
        """Collect the reply to the request rid, sent already."""
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

    def _run_general(self, data: bytes, timeout: Optional[float]) -> RunResult:
        with self.lock:
            return self._run_locked(data, timeout)

    def _run_locked(self, data: bytes, timeout: Optional[float], header: Optional[Dict[str, Any]] = None) -> RunResult:
        self.current = self.next_id
        try:
            return _run_result(self.request, header or _RUN, data, timeout=timeout)
        finally:
            self.current = None

    def _collect(self, rid: int, reply: Reply, deadline: Optional[float], timeout: Optional[float]) -> None:
        try:
            self._read_until_done(rid, reply, deadline)
        except _Deadline:
            self._escalate(rid, reply, timeout)
            # The fix, as exec()'s timeout names it (it said only "ran past its 1.0s timeout").
            raise TimeoutError("layover: the code in the sandbox ran past its timeout of %g s and was interrupted "
                               "(a KeyboardInterrupt; the REPL and its names live on); pass a larger timeout= "
                               "(seconds; None for no limit) if it needs longer" % timeout, timeout=timeout,
                               stdout=reply.data("stdout"), stderr=reply.data("stderr")) from None

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
        while True:
            header, payload = self.recv(deadline)
            t = header["t"]
            fid = header.get("id")
            # The whole frame counts: frames with a header and no payload
            # never reached max_output, and were read for ever (attack pass
            # of 27 Nov).
            reply.total += self.frame_len
            if reply.total > self.max_output:
                raise self.fail("layover: the sandbox sent more than max_output=%d bytes for one call; "
                                "the sandbox was stopped and its session kept (raise max_output if this "
                                "is expected)" % self.max_output)
            if t == "out":
                stream = header.get("s")
                if stream not in STREAMS:
                    raise self.fail("layover: the REPL sent output for an unknown stream; the sandbox "
                                    "was stopped and its session kept")
                if fid == rid:
                    parts = reply.streams.get(stream)
                    if parts is None:
                        reply.streams[stream] = [payload]
                    else:
                        parts.append(payload)
                # Output of an earlier request (background threads): dropped.
                continue
            if t == "done" and fid == rid:
                reply.done = header
                reply.texts = self._split_done(header, payload, reply)
                return
            raise self.fail("layover: the REPL sent an unexpected %r frame; the sandbox was stopped and "
                            "its session kept" % t[:40])

    def _split_done(self, header: Dict[str, Any], payload: bytes, reply: Reply) -> List[Optional[str]]:
        """The texts of a done payload (lengths in "lens", -1 for none); the
        stdout and stderr bytes after them ("tail") join the reply's streams."""
        lens = header.get("lens", [])
        tail = header.get("tail", [0, 0])
        if not isinstance(lens, list) or len(lens) > 8 or not all([
                type(n) is int and n >= -1 for n in lens]) or not isinstance(tail, list) or len(tail) != 2 or \
                not all([type(n) is int and n >= 0 for n in tail]):
            raise self.fail("layover: the REPL sent a malformed reply; the sandbox was stopped and its "
                            "session kept")
        if sum(max(n, 0) for n in lens) + tail[0] + tail[1] != len(payload):
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
        for stream, n in zip(("stdout", "stderr"), tail):
            if n:
                reply.streams.setdefault(stream, []).append(payload[pos:pos + n])
                pos += n
        return out
