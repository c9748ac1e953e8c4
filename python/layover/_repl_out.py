"""Part 2 of the REPL server that runs inside the sandbox: output capture.
The pipes at fds 1 and 2 pumped to the host (FdPump), sys.stdout and
sys.stderr as frames of the request being run (Out), the displayhook and
the clipping of error/value texts.

Executed after _repl_io.py and before _repl_exec.py and _server.py in one
namespace (see layover._boot.server_source); it is never imported on the
host.  The names used here without import (os, _thread, _signal, State,
CHUNK, MAX_TEXT, ...) come from _repl_io.py.
"""
# flake8: noqa: F821
import builtins
import select
import sys


class FdPump:
    """Owns the read ends of the pipes now at fds 1 and 2."""

    def __init__(self, chan):
        self.chan = chan
        self.lock = _thread.allocate_lock()
        self.fds = {}
        for fd, name in ((1, "stdout"), (2, "stderr")):
            r, w = os.pipe()
            os.dup2(w, fd)
            os.close(w)
            os.set_blocking(r, False)
            self.fds[r] = name
        self.ready = select.poll()  # used under self.lock only
        checker = select.poll()  # used by the main thread only
        for r in self.fds:
            self.ready.register(r, select.POLLIN)
            checker.register(r, select.POLLIN)
        # check(0): anything to drain? (one poll(), no lock). Empty pipes are
        # not enough to skip drain(): the pump thread may have read the last
        # bytes and still be sending them. It reads and sends under
        # self.lock, so "empty, then not locked" means everything is out.
        self.check = checker.poll

    def drain(self):
        """Forward everything buffered now; returns when all pipes are empty.
        One poll() syscall when there is nothing (the usual case)."""
        with self.lock:
            for r, ev in self.ready.poll(0):
                if ev & select.POLLNVAL:
                    continue  # user code closed it: the pump is gone too
                name = self.fds[r]
                while True:
                    try:
                        data = os.read(r, CHUNK)
                    except BlockingIOError:
                        break
                    if not data:
                        break
                    self.chan.send({"t": "out", "id": State.busy, "s": name}, data)

    def loop(self):
        _signal.pthread_sigmask(_signal.SIG_BLOCK, [_signal.SIGINT])
        # Its own poll object: one may not be polled from two threads at once.
        waiter = select.poll()
        for r in self.fds:
            waiter.register(r, select.POLLIN)
        while True:
            try:
                events = waiter.poll()
            except OSError:
                return
            for r, ev in events:
                if ev & select.POLLNVAL:
                    return
                if ev & select.POLLHUP and not ev & select.POLLIN:
                    waiter.unregister(r)  # every write end closed: stop spinning on it
            self.drain()


class Out:
    """sys.stdout/sys.stderr: buffered, sent as "out" frames of the current
    request, at CHUNK size and at the end of each request."""

    encoding = "utf-8"
    errors = "surrogateescape"
    newlines = None
    line_buffering = False

    def __init__(self, chan, name, fd):
        self.chan, self.name, self.fd = chan, name, fd
        self.parts = []
        self.size = 0
        self.lock = _thread.allocate_lock()
        self.buffer = _OutBuffer(self)
        # The "out" header, formatted directly (the hot path skips json_dumps).
        self.head = b'{"t":"out","id":%d,"s":"' + name.encode("ascii") + b'"}'

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        try:
            data = s.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            data = s.encode("utf-8", "backslashreplace")
        self.write_bytes(data)
        return len(s)

    def write_bytes(self, data):
        with self.lock:
            self.parts.append(bytes(data))
            self.size += len(data)
            full = self.size >= CHUNK
        if full:
            self.flush_frames()
        return len(data)

    def take(self):
        """What is buffered, emptying the buffer."""
        with self.lock:
            data = b"".join(self.parts)
            self.parts = []
            self.size = 0
        return data

    def encode(self, data):
        """data as "out" frames of this stream for the current request."""
        if not data:
            return b""
        head = self.head % State.busy
        if len(data) <= MAX_PAYLOAD:
            return b"".join((pack_lens(len(head), len(data)), head, data))
        return b"".join(b"".join((pack_lens(len(head), len(c)), head, c))
                        for c in (data[i:i + MAX_PAYLOAD] for i in range(0, len(data), MAX_PAYLOAD)))

    def flush_frames(self):
        # Taken and sent under the lock: the done frame takes what is left
        # under the same lock, so it can never overtake a full buffer that
        # another thread (user code's own threads print too) is sending.
        with self.lock:
            if not self.size:
                return
            data = b"".join(self.parts)
            self.parts = []
            self.size = 0
            self.chan.write(self.encode(data))

    def flush(self):
        pass

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def fileno(self):
        return self.fd

    def isatty(self):
        return False

    def readable(self):
        return False

    def writable(self):
        return True

    def seekable(self):
        return False

    @property
    def closed(self):
        return False

    def close(self):
        pass


class _OutBuffer:
    def __init__(self, out):
        self.out = out

    def write(self, data):
        return self.out.write_bytes(data)

    def flush(self):
        pass


def _displayhook(value):
    if value is None:
        return
    builtins._ = None
    text = repr(value)
    State.value = text
    out = sys.stdout
    if type(out) is Out:
        try:
            out.write_bytes((text + "\n").encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:
            out.write(text + "\n")
    else:
        out.write(text + "\n")
    builtins._ = value


def _clip(text):
    if text is None or len(text) <= MAX_TEXT:
        return text
    return text[:MAX_TEXT] + "\n[... %d characters cut]\n" % (len(text) - MAX_TEXT)


