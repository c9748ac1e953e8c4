"""Host side of `layover mcp`'s sandbox: one `layover run` whose command is
the tools' agent (_mcp_agent.py, sent as source over the IPC socket and
exec'd by the bindings' bootstrap), and a multiplexed channel to it.

Unlike the REPL channel (one request at a time), requests here carry ids and
run concurrently inside.  Everything read from the socket is untrusted:
frames are capped, must be JSON objects, and a violation stops the sandbox
(its session is kept) and fails every call in flight.
"""
from __future__ import annotations

import json
import os
import pkgutil
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional

from ._boot import BOOT
from ._helper import Helper
from ._mcp_json import MAX_REPLY, TooBig, loads_reply
from .errors import SandboxError

MAX_FRAME = 64 * 1024 * 1024  # a request (write_file's content); a reply has MAX_REPLY
START_TIMEOUT = 60.0


def agent_frame() -> bytes:
    """The boot frame the bootstrap reads: no marshalled code (a magic that
    never matches), so the agent's source is compiled inside."""
    # The file tools come first: their functions exist by the time the
    # agent's OPS table names them (_mcp_agent_files.py says why two files).
    parts = [pkgutil.get_data("layover", name) for name in ("_mcp_agent_files.py", "_mcp_agent.py")]
    if None in parts:
        raise SandboxError("layover: the package is missing _mcp_agent.py or _mcp_agent_files.py; reinstall it")
    src = b"\n".join(p for p in parts if p is not None)
    payload = b"\0\0\0\0" + (0).to_bytes(4, "big") + src
    header = b'{"t":"boot"}'
    return len(header).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + header + payload


class _Call:
    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.reply: Optional[Dict[str, Any]] = None


class AgentSandbox:
    """The sandbox of one `layover mcp` server: started once, used by many
    threads; `call()` is thread-safe."""

    def __init__(self, helper: Helper, target: str, name: str, run_args: List[str], on_exit: str,
                 log: Callable[[str], None], quiet: bool = False) -> None:
        self.helper = helper
        self.target = target
        self.name = name
        self.run_args = run_args
        self.on_exit = on_exit
        self.log = log
        self.quiet = quiet
        self.proc: Optional[subprocess.Popen] = None
        self.sock: Optional[socket.socket] = None
        self.lock = threading.Lock()  # start/stop
        self.wlock = threading.Lock()  # frames out
        self.calls: Dict[int, _Call] = {}
        self.next_id = 1
        self.broken: Optional[str] = None
        self.lines: Deque[str] = deque(maxlen=20)  # the helper's last stderr lines
        self.relay: Optional[threading.Thread] = None
        self.started = False
        self.closed = False
        # The helper's end said the session holds no changes, only steps
        # (helper/sandbox/supervisor/finish.cc): nothing to apply.
        self.history_only = False

    # --- life cycle ---

    def ensure(self) -> None:
        """Start the sandbox unless it runs; a stopped one (a limit, a crash)
        is started again over the same session."""
        with self.lock:
            if self.closed:
                raise SandboxError("layover: the server is shutting down")
            if self.proc is not None and self.proc.poll() is None and self.broken is None:
                return
            if self.proc is not None:
                self._reap()
            self._start()

    def _start(self) -> None:
        host, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # `layover sessions` shows the label, never the bootstrap command.
        home = os.path.expanduser("~")
        shown = "~" + self.target[len(home):] if home not in ("", "/") and (
            self.target == home or self.target.startswith(home + "/")) else self.target
        argv = self.helper.argv("run", "--target", self.target, "--session", self.name, "--on-exit",
                                self.on_exit, "--ipc-fd", str(child.fileno()),
                                "--label", ("mcp: %s" % shown)[:200], *self.run_args, "--",
                                "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable,
                                "-I", "-S", "-c", BOOT)
        self.broken = None
        self.history_only = False
        try:
            # stdout too goes to the pipe read below, never to the protocol's.
            self.proc = subprocess.Popen(argv, pass_fds=[child.fileno()], env=self.helper.env, cwd=self.target,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            host.close()
            raise SandboxError("layover: cannot start the sandbox: %s" % e) from None
        finally:
            child.close()
        self.relay = threading.Thread(target=self._relay, args=(self.proc,), daemon=True)
        self.relay.start()
        self.sock = host
        try:
            host.sendall(agent_frame())
        except OSError:
            pass  # it died before reading: the hello below says why
        hello = _Call()
        self.calls = {0: hello}
        threading.Thread(target=self._reader, args=(host,), daemon=True).start()
        if not hello.event.wait(START_TIMEOUT) or hello.reply is None or not hello.reply.get("hello"):
            why = self.broken or "the sandbox did not start within %.0f s" % START_TIMEOUT
            self._reap()
            raise SandboxError(why)
        self.started = True
        if not self.quiet:
            self.log("layover mcp: sandbox started over %s (session %s)" % (self.target, self.name))

    def _relay(self, proc: subprocess.Popen) -> None:
        """The helper's output (its notes, errors, the review hint at exit)
        goes to our stderr, and its last lines are kept for messages."""
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw[:4000].decode("utf-8", "replace").rstrip("\n")
            line = "".join(c if c.isprintable() or c == "\t" else "?" for c in line)
            self.lines.append(line)
            # run's own review hint at exit: the server prints its own, which says
            # the same for an agent's session (`_mcp_server.py`); one is enough.
            if line.startswith("layover: session '%s' kept: 'layover status " % self.name):
                continue
            # Its history-only line (no changes, only steps): the server says no more.
            if line.startswith("layover: session '%s' kept: no changes against the real tree" % self.name):
                self.history_only = True
            self.log(line)

    def helper_message(self) -> str:
        for line in reversed(self.lines):
            if line.startswith("layover"):
                return line
        return self.lines[-1] if self.lines else ""

    def _reader(self, sock: socket.socket) -> None:
        # One buffer, filled in place: the frames come from inside, in pieces
        # of any size, so each byte is copied once (a bytes object grown per
        # piece made a 32 MiB frame in 4 KiB pieces cost seconds of CPU).
        buf = bytearray(1 << 20)
        have = 0
        why = "the sandbox exited"
        try:
            while True:
                while have < 4:
                    got = sock.recv_into(memoryview(buf)[have:])
                    if not got:
                        raise EOFError
                    have += got
                n = int.from_bytes(buf[:4], "big")
                if n > MAX_REPLY:  # refused before it is read (_mcp_json.py says why)
                    why = ("the sandbox sent a reply of %d bytes, over the limit of %d MiB for one reply (a frame "
                           "forged inside, on the agent's channel); the sandbox was stopped" % (n, MAX_REPLY >> 20))
                    raise ValueError
                if len(buf) < 4 + n:
                    buf.extend(bytes(4 + n - len(buf)))
                while have < 4 + n:
                    got = sock.recv_into(memoryview(buf)[have:])
                    if not got:
                        raise EOFError
                    have += got
                with memoryview(buf) as view:  # one copy, as text: latin-1 keeps each byte (_mcp_json.py)
                    text = str(view[4:4 + n], "latin-1")
                rest = have - 4 - n
                buf[:rest] = buf[4 + n:have]
                have = rest
                if len(buf) > 1 << 20 and have <= 1 << 20:
                    del buf[1 << 20:]  # a big frame's room is not kept
                msg = loads_reply(text)  # NaN, Infinity, 1e400, not ASCII: malformed (_mcp_json.py)
                text = ""  # not held while the next frame is awaited
                if not isinstance(msg, dict) or type(msg.get("id")) is not int:
                    why = "the sandbox sent a malformed reply; the sandbox was stopped"
                    raise ValueError
                call = self.calls.pop(msg["id"], None)
                if call is not None:
                    call.reply = msg
                    call.event.set()
                msg = call = None
        except (OSError, EOFError):
            pass
        except TooBig as e:
            why = str(e)
            self._stop_process()
        except (ValueError, RecursionError):
            if why == "the sandbox exited":
                why = "the sandbox sent a malformed reply; the sandbox was stopped"
            self._stop_process()
        proc = self.proc
        if proc is not None:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        msg = self.helper_message()
        if proc is not None and proc.returncode == 125 and not self.started:
            # run's own refusal (an option's value, the target, the session):
            # it made no session, so none "is kept" (found by the attack pass
            # of 27 Nov: `--timeout forever` said "session mcp-... is kept").
            self.broken = "layover: the sandbox could not start (%s); fix that in the server's options and start " \
                          "it again" % (msg or "layover run exited with status 125")
        else:
            self.broken = "layover: %s%s; session %s is kept" % (why, " (%s)" % msg if msg else "", self.name)
        for call in list(self.calls.values()):
            call.event.set()
        self.calls.clear()

    def _stop_process(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                proc.send_signal(signal.SIGTERM)
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
            except OSError:
                pass

    def _reap(self) -> None:
        self._stop_process()
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def close(self, timeout: float = 30.0) -> Optional[int]:
        """Kill every command inside, let the agent exit and the helper finish
        (the --on-exit action); returns the helper's exit status."""
        with self.lock:
            self.closed = True
            if self.proc is None:
                return None
            try:
                self._send({"op": "exit"})
            except OSError:
                pass
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._stop_process()
            rc = self.proc.returncode
            if self.sock is not None:
                self.sock.close()
                self.sock = None
            if self.relay is not None:
                self.relay.join(5)  # the helper's last lines (the session kept or removed)
            return rc

    def stop(self) -> None:
        """Stop the sandbox (every command killed, the session kept: a
        rollback needs it stopped); the next call starts it again."""
        self.close()
        with self.lock:
            self.closed = False

    # --- calls ---

    def _send(self, msg: Dict[str, Any]) -> None:
        data = json.dumps(msg).encode("utf-8", "surrogatepass")
        if len(data) > MAX_FRAME:
            raise SandboxError("layover: request too large (%d bytes)" % len(data))
        sock = self.sock
        if sock is None:
            raise OSError("not running")
        with self.wlock:
            sock.sendall(len(data).to_bytes(4, "big") + data)

    def call(self, op: str, args: Dict[str, Any], on_sent: Optional[Callable[[int], None]] = None
             ) -> Dict[str, Any]:
        """Run one op inside and return its reply ({"ok": ..., ...}).  on_sent
        gets the request's id once it is sent (for cancel()).  Raises
        SandboxError when the sandbox is gone."""
        self.ensure()
        call = _Call()
        with self.wlock:
            rid = self.next_id
            self.next_id += 1
        self.calls[rid] = call
        try:
            self._send(dict(args, op=op, id=rid))
        except OSError:
            self.calls.pop(rid, None)
            raise SandboxError(self.broken or "layover: the sandbox is not running") from None
        if on_sent is not None:
            on_sent(rid)
        while not call.event.wait(0.5):
            if self.broken is not None:  # the reader ended before this call was registered
                break
        if call.reply is None:
            raise SandboxError(self.broken or "layover: the sandbox stopped")
        return call.reply

    def cancel(self, rid: int) -> None:
        """Kill the process group of request rid inside (no reply comes for
        the cancel itself; the request answers as cancelled)."""
        try:
            self._send({"op": "cancel", "target": rid})
        except (OSError, SandboxError):
            pass
