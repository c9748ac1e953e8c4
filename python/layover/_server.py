"""The REPL server that runs *inside* the sandbox (see docs/protocol.md).

The host never imports this file: it reads its text and sends it over the
IPC socket, where the bootstrap (layover._boot) exec()s it with
``__name__ == "__layover_repl__"``, after _repl_io.py, _repl_out.py, _repl_exec.py,
_repl_result.py and _repl_help.py (one text, one namespace).  Together they must be self-contained, run on
Python >= 3.8, and import only C modules at start-up (json, signal, ast and
threading pull in enum/re and cost milliseconds; their C cores do not).

Threads:
- main: reads requests from the IPC socket, runs them one at a time.  User
  code runs here, so SIGINT (KeyboardInterrupt) interrupts it as in a REPL.
- watcher: blocks on the control socket the host passed over SCM_RIGHTS and,
  on an interrupt record for the request being run, sends SIGINT to main.
- pump: forwards what reaches fds 1 and 2 (subprocesses, os.write) to the
  host, tagged with the request being run.
"""
# Executed after _repl_io.py, _repl_out.py, _repl_exec.py, _repl_result.py and
# _repl_help.py in one namespace (see _boot.server_source): the names used here without import come from there.
# flake8: noqa: F821
import _ast
import builtins
import os
import sys


# sys.path as the interpreter set it up (-I -S: the standard library only),
# before main() puts the user's "" first.
_OWN_PATH = list(sys.path)


def _own_import(name):
    """A standard module for the REPL's own use: looked up on the library's
    path only (never a same-named file in the target, such as a project's
    types.py), and written no bytecode for (a target holding Python's
    library gets no __pycache__ from us).  User code imports as Python does."""
    mod = sys.modules.get(name)
    if mod is not None:
        return mod
    saved_path, saved_flag = sys.path[:], sys.dont_write_bytecode
    sys.path[:] = _OWN_PATH
    sys.dont_write_bytecode = True
    try:
        return __import__(name)
    finally:
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_flag


class _Quitter:
    """exit() and quit(), which site.py gives a REPL (python -S imports no
    site: they were a NameError): they end the code run as sys.exit() does,
    and say that the REPL lives on."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return ("%s() ends the code it is called in, as sys.exit() does; the sandbox's REPL and its names live on "
                "(Sandbox.close() on the host stops it)" % self.name)

    def __call__(self, code=None):
        sys.stderr.write("layover: %s() ended this code; the sandbox's REPL and its names live on "
                         "(Sandbox.close() on the host stops it)\n" % self.name)
        raise SystemExit(code)


class _NotSent(Exception):
    """A tool's value that cannot go to the host as its result."""


class Server(ExecMixin):
    def __init__(self, chan):
        self.chan = chan
        self.user_ns = {"__name__": "__main__", "__builtins__": builtins}
        self.sources = {}  # filename -> code, for tracebacks (see _traceback)
        self.codes = {}  # (source, future flags) -> (filename, code objects)
        self.newest = None  # the newest file name in self.sources
        self.counter = 0
        self.future_flags = 0
        self.pump = None
        # sys.stdout and sys.stderr as main() installs them.
        self.outs = (Out(chan, "stdout", 1), Out(chan, "stderr", 2))

    # --- output ---

    def take_outputs(self):
        """Send the fd-level output; return what sys.stdout and sys.stderr
        buffered, as (stdout bytes, stderr bytes), for the done frame's tail.
        Our own Out objects are taken even when user code has replaced
        sys.stdout since, so nothing it printed before is lost."""
        pump = self.pump
        if pump is not None and (pump.check(0) or pump.lock.locked()):  # see FdPump.check
            pump.drain()
        out, err = self.outs
        return out.take() if out.size else b"", err.take() if err.size else b""

    def _tails(self, room):
        """(frames, stdout tail, stderr tail): the buffered output, as the
        tail of a done frame with `room` bytes left, or ahead of it as out
        frames when it does not fit."""
        o, e = self.take_outputs()
        if len(o) + len(e) <= room:
            return b"", o, e
        out, err = self.outs
        return out.encode(o) + err.encode(e), b"", b""

    def done(self, rid, fields, texts=()):
        """Finish request rid: one "done" frame whose payload holds `texts`
        (utf-8; lengths in "lens", -1 for None), then the request's buffered
        stdout and stderr (lengths in "tail")."""
        payload = []
        lens = []
        for t in texts:
            b = (_clip(t) or "").encode("utf-8", "backslashreplace")
            payload.append(b)
            lens.append(len(b) if t is not None else -1)
        body = b"".join(payload)
        pending, o, e = self._tails(MAX_PAYLOAD - len(body))
        header = {"t": "done", "id": rid, "lens": lens, "tail": [len(o), len(e)]}
        header.update(fields)
        self.chan.write_main(pending + encode_frame(header, b"".join((body, o, e))))

    def done_run(self, rid, error, value, interrupted):
        """done() for run, with the header formatted directly (the hot path)."""
        if error is not None or (value is not None and len(value) > MAX_TEXT):
            self.done(rid, {"interrupted": interrupted}, (error, value))
            return
        v = b"" if value is None else value.encode("utf-8", "backslashreplace")
        out, err = self.outs
        pump = self.pump
        if err.size or pump is None or pump.check(0) or pump.lock.locked():
            pending, o, e = self._tails(MAX_PAYLOAD - len(v))
        else:  # the usual case, _tails() inlined: some stdout, nothing else
            pending = e = b""
            o = out.take() if out.size else b""
            if len(o) + len(v) > MAX_PAYLOAD:
                pending, o = out.encode(o), b""
        h = (b'{"t":"done","id":%d,"lens":[-1,%d],"tail":[%d,%d],"interrupted":%s}'
             % (rid, -1 if value is None else len(v), len(o), len(e), b"true" if interrupted else b"false"))
        self.chan.write_main(b"".join((pending, pack_lens(len(h), len(v) + len(o) + len(e)), h, v, o, e)))

    def _traceback(self, exc, skip_frames):
        linecache = _own_import("linecache")
        traceback = _own_import("traceback")
        for name, src in self.sources.items():
            linecache.cache[name] = (len(src), None, src.splitlines(True), name)
        tb = exc.__traceback__
        for _ in range(skip_frames):
            if tb is not None:
                tb = tb.tb_next
        while tb is not None and tb.tb_frame.f_code.co_filename == "<layover-repl>":
            tb = tb.tb_next  # the server's own frames (compiling the code): not the user's
        if isinstance(exc, SyntaxError) and tb is None:
            lines = traceback.format_exception_only(type(exc), exc)
        else:
            lines = traceback.format_exception(type(exc), exc, tb)
        return "".join(lines)

    # --- run: a script whose final expression is the value; irun: echoed as in the REPL ---

    def _compile(self, src, fname, interactive):
        """(code, is_eval) pairs.  Interactive: one per top-level statement,
        in "single" mode, so expression statements are echoed (a later
        syntax error does not hide behind earlier statements having run).
        Otherwise the code runs as a script, and a final expression is
        evaluated apart: its repr() is the result's value, never printed."""
        flags = self.future_flags
        one_line = "\n" not in src.strip()
        if interactive:
            if one_line:
                try:
                    return [(compile(src, fname, "single", flags, True), False)]
                except SyntaxError:
                    pass  # e.g. "a = 1; b = 2" is fine, but report errors via the AST path
            tree = compile(src, fname, "exec", 0x400 | flags, True)  # PyCF_ONLY_AST
            return [(compile(_ast.Interactive(body=[stmt]), fname, "single", flags, True), False)
                    for stmt in tree.body]
        if one_line:
            try:
                return [(compile(src, fname, "eval", flags, True), True)]
            except SyntaxError:
                pass  # a statement: compiled below
        tree = compile(src, fname, "exec", 0x400 | flags, True)
        body = tree.body
        if not body or type(body[-1]) is not _ast.Expr:
            return [(compile(tree, fname, "exec", flags, True), False)]
        last = body.pop()
        codes = [(compile(tree, fname, "exec", flags, True), False)] if body else []
        codes.append((compile(_ast.Expression(body=last.value), fname, "eval", flags, True), True))
        return codes

    def _codes(self, src, interactive):
        """The code objects for src, compiled once: an agent repeats small
        snippets, and compile() is the largest cost of a short call.  A
        repeated source keeps its first file name, its text stays in
        self.sources (moved to the newest end) for tracebacks."""
        key = (src, self.future_flags, interactive)
        hit = self.codes.get(key)
        if hit is not None:
            fname, codes = hit
            if fname is not self.newest:  # else the same snippet again: already newest
                if self.sources.pop(fname, None) is None and len(self.sources) >= 200:
                    self.sources.pop(next(iter(self.sources)))
                self.sources[fname] = src
                self.newest = fname
            return codes
        self.counter += 1
        fname = self.newest = "<sandbox-%d>" % self.counter
        self.sources[fname] = src
        if len(self.sources) > 200:
            self.sources.pop(next(iter(self.sources)))
        codes = self._compile(src, fname, interactive)
        if len(src) <= 4096:
            if len(self.codes) >= 256:
                self.codes.pop(next(iter(self.codes)))
            self.codes[key] = (fname, codes)
        return codes

    def do_run(self, rid, src, interactive=False):
        State.value = None
        error = None
        interrupted = False
        try:
            for code, is_eval in self._codes(src, interactive):
                self.future_flags |= code.co_flags & _FUTURE_MASK
                State.in_user = True
                try:
                    if is_eval:
                        value = eval(code, self.user_ns)
                        if value is not None:
                            builtins._ = value
                            State.value = repr(value)
                    else:
                        exec(code, self.user_ns)
                finally:
                    State.in_user = False
        except KeyboardInterrupt as e:
            State.in_user = False
            interrupted = True
            error = self._traceback(e, 1)
        except SystemExit as e:  # exit(), sys.exit(): the code ends there, the REPL lives on
            State.in_user = False
            if e.code is not None and e.code != 0:  # as a script's exit status: 0 and None are success
                error = self._traceback(e, 1)
        except BaseException as e:  # noqa: B902 - everything goes back to the host
            State.in_user = False
            error = self._traceback(e, 1)
        self.done_run(rid, error, State.value, interrupted)

    # --- call: a self-contained function shipped as source (mixin tools) ---

    def do_call(self, rid, payload):
        error = None
        result = None
        interrupted = False
        sent = self.chan.sent
        try:
            req = json_loads(payload.decode("utf-8"))
            ns = {"__name__": "__layover_tool__", "__builtins__": builtins}
            code = compile(req["source"], "<tool %s>" % req["name"], "exec", _ANNOTATIONS, True)
            exec(code, ns)
            fn = ns.get(req["name"])
            if not callable(fn):
                raise NameError("the tool's source defines no function %r" % (req["name"],))
            args = list(req.get("args") or [])
            if "self" in req:
                types = _own_import("types")
                args.insert(0, types.SimpleNamespace(**req["self"]))
            State.in_user = True
            try:
                value = fn(*args, **(req.get("kwargs") or {}))
                # The value's JSON too: a large one takes long, and a timeout's interrupt was dropped
                # while it was made (the sandbox was then stopped, 5 s later).
                # What it printed counts against max_output too, on the host (attack33).
                result = self._result(req, value, self.chan.sent - sent + self.outs[0].size + self.outs[1].size)
            finally:
                State.in_user = False
        except _NotSent as e:
            error = "layover: %s\n" % e
        except KeyboardInterrupt as e:
            State.in_user = False
            interrupted = True
            error = self._traceback(e, 1)
        except BaseException as e:  # noqa: B902
            State.in_user = False
            error = self._traceback(e, 1)
        if result is not None:
            for i in range(0, len(result), MAX_PAYLOAD):
                self.chan.send({"t": "out", "id": rid, "s": "result"}, result[i:i + MAX_PAYLOAD])
        self.done(rid, {"interrupted": interrupted, "ok": result is not None}, (error,))

    @staticmethod
    def _result(req, value, printed):
        """A tool's value as JSON bytes, within the bounds the host reads it
        with (req["values"], req["max"] less the `printed` bytes of output
        the call sent or holds), or _NotSent saying why not
        (_repl_result.py)."""
        most, limit = req.get("values"), req.get("max")
        return result_text(req["name"], value, most if isinstance(most, int) else 1 << 62,
                           limit if isinstance(limit, int) else 1 << 62, printed).encode("ascii")

    # --- the loop ---

    def serve(self):
        chan = self.chan
        while True:
            frame = chan.recv_raw()
            if frame is None:
                return
            raw, payload = frame
            rid = run_id(raw)  # the hot path: {"t":"run","id":N} without JSON
            if rid:
                t, h = "run", None
            else:
                h = parse_header(raw)
                t = h["t"]
                rid = h.get("id")
                if t == "exit":
                    return
                if not isinstance(rid, int) or isinstance(rid, bool) or rid <= 0:
                    raise ValueError("request without a valid id")
            with State.lock:
                State.busy = rid
            if self.parked:
                self.enter_cwd()
            try:
                if t == "run" or t == "irun":
                    self.user_ran = True  # it may open fds, set signals (ExecMixin.child_setup)
                    self.do_run(rid, payload.decode("utf-8", "surrogateescape"), t == "irun")
                elif t == "exec":
                    self.do_exec(rid, h)
                elif t == "call":
                    self.user_ran = True
                    self.do_call(rid, payload)
                elif t == "park":  # the host checkpoints next (Sandbox.checkpoint)
                    self.park()
                    self.done(rid, {})
                else:
                    self.done(rid, {"unknown": t}, ("unknown request type %r" % t,))
            finally:
                with State.lock:
                    State.busy = 0

    # A checkpoint of the running session (docs/history.md) mounts the next
    # overlay over the target, and refuses while a process has its working
    # directory on the old one. So the server waits in / once idle for
    # IDLE_PARK_US, or at once when the host asks (a "park" request, before
    # Sandbox.checkpoint), and enters its working directory by path for the
    # next request: that is always the current overlay. Requests in a row
    # stay where they are (no chdir or getcwd per call).
    cwd = None
    parked = False

    def enter_cwd(self):
        self.parked = False
        if self.cwd is not None:
            try:
                os.chdir(self.cwd)
            except OSError:
                pass
        self.chan.set_idle(True)

    def park(self):
        if self.parked:
            return
        try:
            self.cwd = os.getcwd()
        except OSError:
            pass  # deleted meanwhile: keep the last one
        os.chdir("/")
        self.parked = True
        self.chan.set_idle(False)  # then wait for the next request as long as it takes

    def idle(self):
        # A read timed out. Between requests: park. Within one (an exec's
        # stdin frames coming slowly) the cwd stays: the command starts in it.
        if not State.busy:
            self.park()


# CO_FUTURE_* compiler flags (stable CPython values 3.8+; __future__ itself
# would cost an import): a `from __future__ import x` in one run() call holds
# for the later ones, as in the interactive REPL.
_ANNOTATIONS = 0x1000000
_FUTURE_MASK = 0x1FE0000


def receive_sockets(fd):
    """The host sends the control and reply sockets right after the server
    source, as one byte carrying both as SCM_RIGHTS."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, fd)
    try:
        _msg, anc, _flags, _addr = sock.recvmsg(1, _socket.CMSG_SPACE(8))
    finally:
        sock.detach()
    fds = []
    for level, kind, data in anc:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i:i + 4], sys.byteorder) for i in range(0, len(data) - 3, 4)]
    if len(fds) != 2:
        raise ValueError("expected the control and reply sockets, got %d fds" % len(fds))
    return fds


def main(fd):
    os.set_inheritable(fd, False)  # never leak the socket into subprocesses
    ctl, replies = receive_sockets(fd)
    os.set_inheritable(ctl, False)
    os.set_inheritable(replies, False)
    chan = Channel(fd, replies)
    State.main_ident = _thread.get_ident()
    _signal.signal(_signal.SIGINT, _on_sigint)
    server = Server(chan)
    server.pump = FdPump(chan)
    sys.stdout, sys.stderr = server.outs
    sys.displayhook = _displayhook
    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, _Quitter(name))
    if not hasattr(builtins, "help"):  # site.py's, which -S leaves out (_repl_help.py)
        builtins.help = _Help()
    sys.argv = [""]
    if "" not in sys.path:
        sys.path.insert(0, "")
    _thread.start_new_thread(watcher, (ctl,))
    _thread.start_new_thread(server.pump.loop, ())
    chan.send({"t": "hello", "version": VERSION, "pid": os.getpid(),
               "python": "%d.%d.%d" % sys.version_info[:3]})
    chan.on_idle = server.idle
    server.park()
    try:
        server.serve()
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
        os.write(2, ("layover repl: protocol error: %s\n" % e).encode())
        os._exit(70)
    os._exit(0)


if __name__ == "__layover_repl__":
    main(_LAYOVER_FD)  # noqa: F821 - set by the bootstrap
