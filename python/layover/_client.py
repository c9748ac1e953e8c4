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
import re
import select
import socket
import subprocess
import struct
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import SandboxError, TimeoutError, os_reason
from .model import RunResult

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

    __slots__ = ("streams", "total", "done", "texts", "interrupted_by_host")

    def __init__(self) -> None:
        self.streams: Dict[str, List[bytes]] = {}
        self.total = 0  # bytes received for this request, against max_output
        self.done: Dict[str, Any] = {}
        self.texts: List[Optional[str]] = []
        self.interrupted_by_host = False

    def data(self, stream: str) -> bytes:
        parts = self.streams.get(stream)
        if not parts:
            return b""
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def text(self, i: int) -> Optional[str]:
        return self.texts[i] if i < len(self.texts) else None


# The headers the REPL writes on the hot path, in the exact form it formats
# them, parsed without json.loads.  Only what matches exactly takes this
# path (the result equals json.loads'); everything else goes through JSON.
_INT = rb"(0|[1-9][0-9]{0,17})"
_LEN = rb"(-1|0|[1-9][0-9]{0,17})"
_OUT_RE = re.compile(rb'\{"t":"out","id":' + _INT + rb',"s":"(stdout|stderr|result)"\}')
_DONE_FORM = (rb'done","id":' + _INT + rb',"lens":\[' + _LEN + rb"," + _LEN + rb'\],"tail":\[' + _INT + rb","
              + _INT + rb'\],"interrupted":(true|false)')
_DONE_RE = re.compile(rb'\{"t":"' + _DONE_FORM + rb"\}")
# exec's done header as the REPL formats it when the command ran its course.
_EXEC_DONE_RE = re.compile(rb'\{"t":"done","id":' + _INT + rb',"lens":\[\],"tail":\[' + _INT + rb"," + _INT
                           + rb'\],"returncode":(0|-?[1-9][0-9]{0,9}),"timed_out":false,"interrupted":false\}')


# run_code's reply matcher: either form in one pattern; groups 1-2 for "out",
# 3-8 for "done".
_HOT_RE = re.compile(rb'\{"t":"(?:out","id":' + _INT + rb',"s":"(stdout|stderr|result)"|' + _DONE_FORM + rb")\}")
_HOT_MATCH = _HOT_RE.fullmatch
_LENS = struct.Struct(">II")
# json.dumps(obj, separators=(",", ":")), without a new encoder per call.
_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def _fast_header(raw: bytes) -> Optional[Dict[str, Any]]:
    m = _OUT_RE.fullmatch(raw)
    if m is not None:
        return {"t": "out", "id": int(m[1]), "s": m[2].decode("ascii")}
    m = _DONE_RE.fullmatch(raw)
    if m is not None:
        return {"t": "done", "id": int(m[1]), "lens": [int(m[2]), int(m[3])], "tail": [int(m[4]), int(m[5])],
                "interrupted": m[6] == b"true"}
    m = _EXEC_DONE_RE.fullmatch(raw)
    if m is not None:
        return _exec_done(m)
    return None


def _exec_done(m: "re.Match[bytes]") -> Dict[str, Any]:
    return {"t": "done", "id": int(m[1]), "lens": [], "tail": [int(m[2]), int(m[3])], "returncode": int(m[4]),
            "timed_out": False, "interrupted": False}


def _readable(sock: socket.socket, left: float) -> bool:
    p = select.poll()
    p.register(sock, select.POLLIN)
    return bool(p.poll(max(0, int(left * 1000 + 0.999))))


def seconds(timeout: Any) -> Optional[float]:
    """A run/exec/call timeout as float seconds: None or infinity for none;
    zero or less times out at once, as subprocess.run does.  Anything else
    (NaN, a str, a bool) is refused here, before a request is sent: the
    REPL's JSON has no NaN or Infinity, and a bad value once sent would
    stop the sandbox."""
    if isinstance(timeout, (str, bytes, bool)):
        raise TypeError("timeout must be a number of seconds or None, not %r" % (timeout,))
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        raise TypeError("timeout must be a number of seconds or None, not %r" % (timeout,)) from None
    if t != t:
        raise ValueError("timeout must be a number of seconds or None, not nan")
    return None if t == float("inf") else t


class ReplClient:
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
        self.next_id = 1
        self.buf = bytearray()
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
        if self.broken is not None:
            raise SandboxError(self.broken)
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
                # (the socket's own timeout is a whole POLL).
                left = deadline - time.monotonic()
                if left < POLL and not _readable(self.replies, left):
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
        header = _fast_header(raw)
        if header is not None:
            return header, payload
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

    # --- run(), the hot path ---

    def run_code(self, code: str, timeout: Optional[float] = None, interactive: bool = False) -> RunResult:
        if timeout is not None:
            timeout = seconds(timeout)
        try:
            return self._run_code(code, timeout, interactive)
        except TimeoutError as e:
            if e.cmd is None:
                e.cmd = code  # as subprocess.TimeoutExpired names its command
            raise

    def _run_code(self, code: str, timeout: Optional[float], interactive: bool) -> RunResult:
        """Repl.run in one method (docs/protocol.md, "Hot path"): one send of
        the request, one recv_into of the reply, its frames matched in place
        when they have exactly the REPL's own header form, the RunResult built
        from them.  Anything else (a busy or broken client, a dead or exited
        child, buffered bytes, send trouble, a timeout, EOF, another header,
        a partial frame, output over max_output) goes to the general code,
        which re-reads the whole reply and applies every check."""
        try:
            data = code.encode("utf-8", "surrogateescape")
        except AttributeError:  # not a str: say so, as compile() would (free on the hot path)
            raise TypeError("run() takes the code as a str; .decode() bytes first") from None
        plen = len(data)
        if plen > MAX_PAYLOAD:
            raise ValueError("code is larger than %d bytes; exec() a file instead" % MAX_PAYLOAD)
        if interactive:  # echoed as in the REPL: the general path, with its own request type
            with self.lock:
                return self._run_locked(data, timeout, _IRUN)
        if timeout is not None and timeout < POLL:
            # The hot path's first wait is a whole POLL: a shorter deadline
            # is kept by the general path, which waits for it exactly.
            return self._run_general(data, timeout)
        lock = self.lock
        if not lock.acquire(False):
            return self._run_general(data, timeout)  # another thread's request: wait for it there
        try:
            proc = self.proc
            # check_usable() without its waitid(): a child already reaped
            # (returncode set) goes to the general path, which reports it.  One
            # that exited unseen takes the REPL with it (the PID namespace
            # dies with the helper): the recv below then sees EOF, and the
            # general path reports that.
            if self.broken is not None or self.buf or proc is None or proc.returncode is not None:
                return self._run_locked(data, timeout)
            rid = self.next_id
            self.next_id = rid + 1
            self.current = rid
            ridb = b"%d" % rid
            h = b'{"t":"run","id":' + ridb + b"}"
            frame = _LENS.pack(len(h), plen) + h + data
            sock = self.sock
            deadline = None if timeout is None else time.monotonic() + timeout
            try:
                n = sock.send(frame)
            except OSError:
                n = 0  # _send_rest retries and reports (a timeout, or the same error again)
            if n != len(frame):
                self._send_rest(memoryview(frame)[n:])
            chunk = self.chunk
            unpack_from = _LENS.unpack_from
            got = 0
            result: Optional[RunResult] = None
            try:
                try:
                    got = self.replies.recv_into(chunk)
                except OSError:
                    got = 0  # a timeout or an error: the general path retries and reports
                pos = 0
                total = 0
                out = err = b""
                ostd = b'{"t":"out","id":' + ridb + b',"s":"stdout"}'
                len_ostd = len(ostd)
                while got - pos >= 8:
                    hlen, flen = unpack_from(chunk, pos)
                    hend = pos + 8 + hlen
                    end = hend + flen
                    if end > got:
                        break
                    if hlen == len_ostd and chunk.startswith(ostd, pos + 8):  # the usual "out"
                        total += flen
                        out += chunk[hend:end]
                        pos = end
                        continue
                    m = _HOT_MATCH(chunk, pos + 8, hend)
                    if m is None:
                        break
                    total += end - hend
                    if m[3] is None:  # "out"
                        if m[1] == ridb:  # else output of an earlier request: dropped
                            stream = m[2]
                            if stream == b"stdout":
                                out += chunk[hend:end]
                            elif stream == b"stderr":
                                err += chunk[hend:end]
                        pos = end
                        continue
                    if m[3] != ridb or total > self.max_output:
                        break
                    a = int(m[4])
                    b = int(m[5])
                    tail_out = int(m[6])
                    mid = hend + (a if a > 0 else 0)
                    vend = mid + (b if b > 0 else 0)
                    oend = vend + tail_out
                    if oend + int(m[7]) != end:
                        break
                    if tail_out:
                        out += chunk[vend:oend]
                    if oend != end:
                        err += chunk[oend:end]
                    result = RunResult(out.decode("utf-8", "replace"), err.decode("utf-8", "replace") if err else "",
                                       None if a < 0 else chunk[hend:mid].decode("utf-8", "replace"),
                                       None if b < 0 else chunk[mid:vend].decode("utf-8", "replace"),
                                       m[8] == b"true")
                    if end < got:  # more output (of background threads) already: kept for later
                        self.buf += memoryview(chunk)[end:got]
                    return result
                if got:  # left for the general path, which reads the whole reply again
                    rest = bytes(memoryview(chunk)[:got])
                    got = 0
                    self.buf += rest
            except KeyboardInterrupt:
                if result is not None:
                    raise  # the reply was complete: nothing left to interrupt
                self._interrupted(rid, got, timeout)
                raise
            return _run_result(self._finish, rid, Reply(), deadline, timeout)
        finally:
            self.current = None
            lock.release()

    # --- exec(), its usual call ---

    def exec_argv(self, fields: bytes, timeout: Optional[float]) -> Optional[Reply]:
        """Repl.exec's usual call (docs/protocol.md, "Hot path"): the request
        header formatted here from `fields` (its JSON members after the id),
        one send, one recv_into, and a reply of out frames and a done frame
        in exactly the REPL's own form taken in place.  None, with nothing
        sent, when another request is in flight or the client needs the
        general code's checks; anything unusual after the send (a timeout, a
        killed or failed command, a partial frame, another header) is handed
        to the general code, which re-reads the whole reply."""
        lock = self.lock
        if not lock.acquire(False):
            return None
        try:
            proc = self.proc
            if self.broken is not None or self.buf or proc is None or proc.returncode is not None:
                return None
            rid = self.next_id
            self.next_id = rid + 1
            self.current = rid
            h = b'{"t":"exec","id":%d,%s}' % (rid, fields)
            frame = _LENS.pack(len(h), 0) + h
            try:
                n = self.sock.send(frame)
            except OSError:
                n = 0  # _send_rest retries and reports
            if n != len(frame):
                self._send_rest(memoryview(frame)[n:])
            deadline = None if timeout is None else time.monotonic() + timeout + EXEC_SLACK
            got = 0
            reply = None
            try:
                try:
                    got = self.replies.recv_into(self.chunk)
                except OSError:
                    got = 0  # a timeout or an error: the general path retries and reports
                reply = self._exec_reply(rid, got)
                if reply is not None:
                    return reply
            except KeyboardInterrupt:
                if reply is not None:
                    raise  # the reply was complete: nothing left to interrupt
                self._interrupted(rid, got, timeout)
                raise
            if got:
                self.buf += memoryview(self.chunk)[:got]
            return self._finish(rid, Reply(), deadline, timeout)
        finally:
            self.current = None
            lock.release()

    def _interrupted(self, rid: int, got: int, timeout: Optional[float]) -> None:
        """Ctrl+C on the host while a hot path waited for request rid's reply:
        the first `got` bytes of self.chunk, read but not taken, go back for
        the general path, and the request is interrupted (then its processes
        killed) inside, as _finish does."""
        if got:
            self.buf += memoryview(self.chunk)[:got]
        reply = Reply()
        reply.interrupted_by_host = True
        try:
            self._escalate(rid, reply, timeout)
        except (SandboxError, KeyboardInterrupt):
            pass

    def _exec_reply(self, rid: int, got: int) -> Optional[Reply]:
        """The Reply in the first `got` bytes of self.chunk when they hold
        whole frames: out frames, then exec's done frame of request rid in
        the REPL's own form, with the lengths adding up; else None."""
        chunk = self.chunk
        ridb = b"%d" % rid
        pos = total = 0
        streams: Dict[str, List[bytes]] = {}
        while got - pos >= 8:
            hlen, plen = _LENS.unpack_from(chunk, pos)
            hend = pos + 8 + hlen
            end = hend + plen
            total += plen
            if end > got or total > self.max_output:
                return None
            m = _OUT_RE.fullmatch(chunk, pos + 8, hend)
            if m is not None:
                if m[1] == ridb:  # else output of an earlier request: dropped
                    streams.setdefault(m[2].decode("ascii"), []).append(bytes(chunk[hend:end]))
                pos = end
                continue
            m = _EXEC_DONE_RE.fullmatch(chunk, pos + 8, hend)
            if m is None or m[1] != ridb:
                return None
            reply = Reply()
            reply.done = done = _exec_done(m)
            o, e = done["tail"]
            if o + e != plen:
                return None
            if o:
                streams.setdefault("stdout", []).append(bytes(chunk[hend:hend + o]))
            if e:
                streams.setdefault("stderr", []).append(bytes(chunk[hend + o:end]))
            reply.streams = streams
            reply.total = total
            if end < got:  # more output (of background threads) already: kept for later
                self.buf += memoryview(chunk)[end:got]
            return reply
        return None

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
        while True:
            header, payload = self.recv(deadline)
            t = header["t"]
            fid = header.get("id")
            reply.total += len(payload)
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


_RUN = {"t": "run"}
_IRUN = {"t": "irun"}  # run() with interactive=True: expression statements echoed


def _run_result(collect: Callable[..., Reply], *args: Any, **kw: Any) -> RunResult:
    """The RunResult of a run request's Reply, collected by collect(*args)."""
    try:
        reply = collect(*args, **kw)
    except TimeoutError as e:
        e.stdout = _text(e.stdout)  # type: ignore[arg-type]
        e.stderr = _text(e.stderr)  # type: ignore[arg-type]
        raise
    texts = reply.texts
    return RunResult(reply.data("stdout").decode("utf-8", "replace"),
                     reply.data("stderr").decode("utf-8", "replace"),
                     texts[0] if texts else None, texts[1] if len(texts) > 1 else None,
                     bool(reply.done.get("interrupted")))


def _text(data: Any) -> Any:
    if isinstance(data, (bytes, bytearray)):
        return bytes(data).decode("utf-8", "replace")
    return data


def socketpair() -> Tuple[socket.socket, socket.socket]:
    """A CLOEXEC stream socketpair (the child's end is passed explicitly)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    for s in (a, b):
        os.set_inheritable(s.fileno(), False)
    return a, b
