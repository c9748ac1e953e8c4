"""Part 1 of the REPL server that runs inside the sandbox: JSON through the C
accelerator, framing, the shared state, interrupts (output capture is in
_repl_out.py).

The host sends this file followed by _repl_out.py, _repl_exec.py and
_server.py as ONE source (see layover._boot.server_source), executed inside with
``__name__ == "__layover_repl__"``; it is never imported on the host.
Overall design: see _server.py and docs/protocol.md.
"""
import _json
import _signal
import _socket
import _struct
import _thread
import os

MAX_HEADER = 64 * 1024
MAX_PAYLOAD = 1024 * 1024
MAX_INPUT = 1024 * 1024 * 1024
CHUNK = 256 * 1024
MAX_TEXT = 256 * 1024  # error/value texts in a done frame
VERSION = 1
# Idle this long after a request, the server waits in / (Server.park): a
# checkpoint of the session then finds no process on the old overlay.
IDLE_PARK_US = 20000
# Records on the control socket: 8-byte request id + 1 byte kind.
CTL_INTERRUPT = 1
CTL_KILL = 2  # also kill the REPL's descendants (os.system, pipes...)


# --- JSON through the C accelerator only (the json package imports re). ---

class _ScanCtx:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo = {}  # type: dict

    @staticmethod
    def parse_constant(name):
        raise ValueError("JSON constant %s not allowed" % name)


_scan = _json.make_scanner(_ScanCtx())
_quote = _json.encode_basestring_ascii


def json_loads(text):
    try:
        obj, end = _scan(text, 0)
    except StopIteration as e:  # the C scanner's "no JSON value here" (json.loads wraps it too)
        raise ValueError("not a JSON value at offset %s" % e.value) from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    if text[end:].strip():
        raise ValueError("trailing data after JSON value")
    return obj


MAX_DEPTH = 500  # nesting of a value json_dumps writes: a cycle ends here too, and the host reads it back


def json_dumps(obj, depth=0):
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    if isinstance(obj, str):
        return _quote(obj)
    if isinstance(obj, int):
        return int.__repr__(obj)
    if isinstance(obj, float):
        # float's own arithmetic: a subclass's == and != may say anything, and
        # its 'nan' once reached the host, which stopped the sandbox (attack33).
        if float.__sub__(obj, obj) != 0.0:  # nan - nan and inf - inf are nan
            raise ValueError("float %s is not JSON" % float.__repr__(obj))
        return float.__repr__(obj)
    if depth >= MAX_DEPTH and isinstance(obj, (list, tuple, dict)):
        raise ValueError("it is nested deeper than %d lists and dicts, or holds itself" % MAX_DEPTH)
    if isinstance(obj, (list, tuple)):
        parts = []
        for v in obj:  # a loop, not a comprehension: one frame a level (3.11's comprehensions take two)
            parts.append(json_dumps(v, depth + 1))
        return "[" + ",".join(parts) + "]"
    if isinstance(obj, dict):
        parts = []
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError("JSON object keys must be str, not %s" % type(k).__name__)
            parts.append(_quote(k) + ":" + json_dumps(v, depth + 1))
        return "{" + ",".join(parts) + "}"
    raise TypeError("object of type %s is not JSON serializable" % type(obj).__name__)


# --- Framing ---

pack_lens = _struct.Struct(">II").pack  # a frame's two big-endian lengths


def encode_frame(header, payload=b""):
    h = json_dumps(header).encode("ascii")
    return b"".join((pack_lens(len(h), len(payload)), h, payload))


class Channel:
    """Frames: requests read from the IPC socket (main thread only), replies
    written to the reply socket (from any thread, under a lock)."""

    def __init__(self, fd, out_fd, on_idle=None):
        self.fd = fd  # requests from the host (read)
        self.out_fd = out_fd  # the reply socket (write)
        self.wlock = _thread.allocate_lock()
        self.rbuf = bytearray()
        # Called when no request came for IDLE_PARK_US (set_idle(True)): a
        # read then fails with EAGAIN (SO_RCVTIMEO), and is retried after it.
        self.on_idle = on_idle
        self.sock = None  # for setsockopt, made on first use (owns nothing: detached at exit)
        self.sent = 0  # bytes written: a call's output so far counts against max_output with its result

    def set_idle(self, on):
        """Reads time out after IDLE_PARK_US (on), or block (off)."""
        if self.sock is None:
            self.sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, self.fd)
        self.sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_RCVTIMEO,
                             _struct.pack("ll", 0, IDLE_PARK_US if on else 0))

    def _read(self, n):
        while True:
            try:
                return os.read(self.fd, n)
            except BlockingIOError:
                if self.on_idle is None:
                    raise
                self.on_idle()

    def write(self, data):
        """Write whole frames, from any thread."""
        if _thread.get_ident() == State.main_ident:
            self.write_main(data)
            return
        with self.wlock:
            self.sent += len(data)
            n = os.write(self.out_fd, data)  # the usual case: all of it at once
            if n != len(data):
                self._write_rest(data, n)

    def write_main(self, data):
        """write() from the main thread, where user code runs: an interrupt
        arriving meanwhile waits until the frame is whole (State.defer), then
        is raised here if user code is still running."""
        state = State
        with self.wlock:
            self.sent += len(data)
            state.defer = True
            try:
                n = os.write(self.out_fd, data)
                if n != len(data):
                    self._write_rest(data, n)
            finally:
                state.defer = False
        if state.pending:
            state.pending = False
            if state.in_user:
                raise KeyboardInterrupt

    def _write_rest(self, data, n):
        view = memoryview(data)[n:]
        while view:
            n = os.write(self.out_fd, view)
            view = view[n:]

    def send(self, header, payload=b""):
        self.write(encode_frame(header, payload))

    def _fill(self, n):
        while len(self.rbuf) < n:
            data = self._read(max(n - len(self.rbuf), 65536))
            if not data:
                return False
            self.rbuf += data
        return True

    def recv_raw(self):
        """The next (raw header bytes, payload), or None at EOF.  The usual
        request arrives whole in one read and is sliced without copies
        into the buffer."""
        if not self.rbuf:
            data = self._read(65536)
            if not data:
                return None
            if len(data) >= 8:
                hlen = int.from_bytes(data[0:4], "big")
                plen = int.from_bytes(data[4:8], "big")
                end = 8 + hlen + plen
                if 0 < hlen <= MAX_HEADER and plen <= MAX_PAYLOAD and len(data) >= end:
                    if len(data) > end:
                        self.rbuf += data[end:]
                    return data[8:8 + hlen], data[8 + hlen:end]
            self.rbuf += data
        if not self._fill(8):
            return None
        hlen = int.from_bytes(self.rbuf[0:4], "big")
        plen = int.from_bytes(self.rbuf[4:8], "big")
        if not 0 < hlen <= MAX_HEADER or plen > MAX_PAYLOAD:
            raise ValueError("bad frame lengths %d/%d" % (hlen, plen))
        if not self._fill(8 + hlen + plen):
            return None
        raw = bytes(self.rbuf[8:8 + hlen])
        payload = bytes(self.rbuf[8 + hlen:8 + hlen + plen])
        del self.rbuf[:8 + hlen + plen]
        return raw, payload

    def recv(self):
        """The next (header, payload), or None at EOF."""
        frame = self.recv_raw()
        if frame is None:
            return None
        return parse_header(frame[0]), frame[1]


_RUN_PREFIX = b'{"t":"run","id":'


def run_id(raw):
    """The id of a header that is exactly {"t":"run","id":N} as the host
    writes it (the hot path: no JSON), else 0."""
    if raw[:16] == _RUN_PREFIX and raw[-1:] == b"}":
        digits = raw[16:-1]
        if 0 < len(digits) <= 18 and digits.isdigit() and digits[:1] != b"0":
            return int(digits)
    return 0


def parse_header(raw):
    header = json_loads(raw.decode("utf-8"))
    if not isinstance(header, dict) or not isinstance(header.get("t"), str):
        raise ValueError("frame header is not an object with a type")
    return header


# --- Per-request state, shared with the watcher and the pump ---

class _State:
    # An instance, not class attributes: assigning to a class invalidates
    # the type's attribute cache, and these change several times per call.
    __slots__ = ("busy", "in_user", "defer", "pending", "lock", "main_ident", "value")

    def __init__(self):
        self.busy = 0          # id of the request being handled (0: idle)
        self.in_user = False   # True while user code (or a subprocess wait) runs
        self.defer = False     # main thread is writing a frame: hold interrupts
        self.pending = False   # an interrupt arrived while deferred
        self.lock = _thread.allocate_lock()
        self.main_ident = 0
        self.value = None      # repr of the last echoed expression


State = _State()


def _on_sigint(signum, frame):
    # Stray interrupts (arriving just after a request ended) are dropped, so
    # they can never break the server loop; one arriving mid-frame waits for
    # the frame to be complete (see Channel.write).
    if not State.in_user:
        return
    if State.defer:
        State.pending = True
        return
    raise KeyboardInterrupt


def kill_descendants():
    """SIGKILL every process below the REPL: what user code started and
    still waits for (os.system, a pipe).  Walks /proc; never kill(-1), which
    outside a PID namespace would hit all of the user's processes."""
    me = os.getpid()
    children = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    todo = list(children.get(me, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def watcher(ctl_fd):
    _signal.pthread_sigmask(_signal.SIG_BLOCK, [_signal.SIGINT])
    buf = b""
    while True:
        try:
            data = os.read(ctl_fd, 64)
        except OSError:
            data = b""
        if not data:
            # The host is gone: nothing may outlive it.
            os._exit(0)
        buf += data
        while len(buf) >= 9:
            rid, kind, buf = int.from_bytes(buf[:8], "big"), buf[8], buf[9:]
            with State.lock:
                if rid == State.busy and rid:
                    if kind == CTL_KILL:
                        kill_descendants()
                    _signal.pthread_kill(State.main_ident, _signal.SIGINT)
