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

import time
from typing import Dict, List, Optional

from ._client_base import ClientBase
from ._client_frames import (EXEC_SLACK, MAX_HEADER, MAX_PAYLOAD, POLL, Reply, _EXEC_DONE_RE, _HOT_MATCH, _IRUN,
                             _LENS, _OUT_RE, _exec_done, _run_result, seconds, socketpair)
from .errors import SandboxError, TimeoutError
from .model import RunResult

__all__ = ["EXEC_SLACK", "MAX_HEADER", "MAX_PAYLOAD", "Reply", "ReplClient", "seconds", "socketpair"]


class ReplClient(ClientBase):
    """The host's client of the REPL: ClientBase's general path, and here
    the hot paths of run() and exec() (docs/protocol.md, "Hot path")."""

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
                        total += end - pos  # whole frames count, as in the general path
                        out += chunk[hend:end]
                        pos = end
                        continue
                    m = _HOT_MATCH(chunk, pos + 8, hend)
                    if m is None:
                        break
                    total += end - pos
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
            total += end - pos  # whole frames count, as in the general path
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
