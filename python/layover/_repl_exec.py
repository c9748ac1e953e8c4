"""Part 3 of the REPL server that runs inside the sandbox: exec, a command
run as subprocess.run(argv, capture_output=True, start_new_session=True)
would, its output forwarded as it comes (docs/protocol.md).

Executed after _repl_io.py and _repl_out.py and before _server.py in one namespace (see
layover._boot.server_source); it is never imported on the host.  The names
used here without import come from the other parts.
"""
# flake8: noqa: F821
import _signal
import _thread
import os
import select


class ExecMixin:
    """Server's exec request."""

    def read_input(self, rid):
        parts, size = [], 0
        while True:
            frame = self.chan.recv()
            if frame is None:
                os._exit(0)
            header, payload = frame
            if header.get("t") != "stdin" or header.get("id") != rid:
                raise ValueError("expected stdin frames for request %d" % rid)
            size += len(payload)
            if size > MAX_INPUT:
                raise ValueError("exec input larger than %d bytes" % MAX_INPUT)
            parts.append(payload)
            if not header.get("more"):
                return b"".join(parts)

    def do_exec(self, rid, h):
        data = self.read_input(rid) if h.get("stdin") else None
        out_r = out_w = err_r = err_w = in_r = None
        io = [None]  # the write end of the command's stdin while we feed it
        try:
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            if data is not None:
                in_r, io[0] = os.pipe()
            pid, proc = _spawn(h["argv"], h.get("cwd"), h.get("env"),
                               self.devnull() if in_r is None else in_r, out_w, err_w, self.child_setup)
        except OSError as e:
            _close(out_r, out_w, err_r, err_w, in_r, io[0])
            name = e.filename if isinstance(e.filename, str) else None
            self.done(rid, {"oserror": e.errno or 0, "returncode": None, "filename": name}, (e.strerror or str(e),))
            return
        except (TypeError, ValueError) as e:
            _close(out_r, out_w, err_r, err_w, in_r, io[0])
            self.done(rid, {"oserror": 0, "returncode": None}, ("%s: %s" % (type(e).__name__, e),))
            return
        _close(in_r)
        # Our copies of the write ends stay open until the command has exited
        # (its pidfd says so): its closing stdout, then stderr, then becoming a
        # zombie would each wake us otherwise (docs/performance.md, "Python
        # exec, second pass").  Without pidfd_open, its exit is our EOF.
        held = [_pidfd(pid), out_w, err_w]
        if held[0] is None:
            _close(out_w, err_w)
            held = None
        rc = None
        interrupted = left_open = False
        try:
            State.in_user = True
            try:
                rc = self._pump_process(rid, pid, out_r, err_r, io, data, h.get("timeout"), held)
                # Past the timeout though the command had exited (its pidfd
                # said so): a process it left running held the pipes.
                left_open = rc is None and held is not None and held[1] is None
            finally:
                State.in_user = False
                if held is not None:
                    held[1] = held[2] = _close(held[1], held[2])
        except KeyboardInterrupt:
            interrupted = True
        timed_out = rc is None and not interrupted
        if rc is None:
            try:
                os.killpg(pid, 9)
            except OSError:
                pass
            self._drain_after_kill(rid, out_r, err_r)
            rc = _wait(pid, None)
        if proc is not None:
            proc.returncode = rc  # reaped here: Popen must not wait for the pid again
        pending, o, e = self._tails(MAX_PAYLOAD)
        h = (b'{"t":"done","id":%d,"lens":[],"tail":[%d,%d],"returncode":%d,"timed_out":%s,"interrupted":%s%s}'
             % (rid, len(o), len(e), rc, b"true" if timed_out else b"false", b"true" if interrupted else b"false",
                b',"left_open":true' if left_open else b""))
        try:
            self.chan.write_main(b"".join((pending, pack_lens(len(h), len(o) + len(e)), h, o, e)))
        finally:  # after the reply: the host goes on meanwhile
            _close(out_r, err_r, io[0], held[0] if held is not None else None)

    _devnull = None

    def devnull(self):
        """/dev/null for a command's stdin, opened once (close-on-exec)."""
        if self._devnull is None:
            self._devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        return self._devnull

    # What a command must not inherit (fds to close, signals to reset), as
    # of the last look, and whether user code ran since.
    _closes = ()
    _sigdef = ()
    user_ran = True

    def child_setup(self):
        """(fds to close, signals to reset to SIG_DFL) for posix_spawn, so the
        command starts as under subprocess: no fd above 2 that user code made
        inheritable (close_fds; the REPL's own are all close-on-exec), no
        signal handler, SIGPIPE and SIGXFSZ back at their default
        (restore_signals), other ignored signals still ignored.  Naming every
        other signal also halves glibc's reset loop (one sigaction each, not
        two).  Listing /proc/self/fd costs more than the rest of a spawn's
        Python, so both are kept while no user code ran: no run()/call()
        since (serve() sets user_ran) and no thread of its own alive."""
        if self.user_ran or _thread._count() > 2:  # 2: the watcher and the pump
            fds = []
            try:
                names = os.listdir("/proc/self/fd")
            except OSError:
                names = ()
            for name in names:
                fd = int(name)
                if fd > 2:
                    try:
                        if os.get_inheritable(fd):
                            fds.append(fd)
                    except OSError:
                        pass  # the listing's own fd, closed since
            ign = _signal.SIG_IGN
            self._closes = fds
            self._sigdef = [n for n in _signal.valid_signals()
                            if n in _RESTORED or _signal.getsignal(n) != ign]
            self.user_ran = False
        return self._closes, self._sigdef

    def _pump_process(self, rid, pid, out_r, err_r, io, data, timeout, held):
        """Forward the command's output as it comes and feed its input (io[0],
        closed and set to None once written); then wait for it.  Its exit
        code, or None when the timeout passed first.  held: None, or [the
        command's pidfd, our copies of its stdout and stderr write ends]; the
        write ends are closed (set to None) here once the pidfd says it
        exited."""
        deadline = None
        if timeout is not None:
            deadline = _own_import("time").monotonic() + float(timeout)
        poller = select.poll()
        names = {out_r: "stdout", err_r: "stderr"}
        for fd in names:
            poller.register(fd, select.POLLIN)
        pidfd = None
        if held is not None:
            pidfd = held[0]
            poller.register(pidfd, select.POLLIN)
        win = io[0]
        view = memoryview(data or b"")
        if win is not None:
            os.set_blocking(win, False)
            if view:
                poller.register(win, select.POLLOUT)
            else:
                io[0] = win = _close(win)
        while names or win is not None:
            wait = None
            if deadline is not None:
                wait = deadline - _own_import("time").monotonic()
                if wait <= 0:
                    return None
            # poll() takes at most 2**31-1 ms: a timeout of weeks waits in turns.
            for fd, ev in poller.poll(None if wait is None else max(1, int(min(wait * 1000, 2147483647)))):
                if fd == pidfd:  # exited: its pipes end once no other process holds them
                    poller.unregister(pidfd)
                    pidfd = None
                    held[1] = held[2] = _close(held[1], held[2])
                elif fd == win:
                    try:
                        n = os.write(win, view[:CHUNK])
                        view = view[n:]
                    except BlockingIOError:
                        continue
                    except OSError:  # EPIPE: the command stopped reading
                        view = view[:0]
                    if not view:
                        poller.unregister(win)
                        io[0] = win = _close(win)
                elif fd in names:
                    chunk = os.read(fd, CHUNK)
                    if chunk:
                        self.chan.send({"t": "out", "id": rid, "s": names[fd]}, chunk)
                    else:
                        poller.unregister(fd)
                        del names[fd]
        return _wait(pid, deadline)

    def _drain_after_kill(self, rid, out_r, err_r):
        # The group is dead; what is left in the pipes still belongs to the
        # result.  A process outside the group may hold them: bounded wait.
        for fd, name in ((out_r, "stdout"), (err_r, "stderr")):
            os.set_blocking(fd, False)
            for _ in range(64):
                r, _, _ = select.select([fd], [], [], 0.2)
                if not r:
                    break
                try:
                    chunk = os.read(fd, CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                self.chan.send({"t": "out", "id": rid, "s": name}, chunk)


# --- exec's process: started as subprocess.Popen(argv, cwd=cwd, env=env,
# start_new_session=True) with the given stdin/stdout/stderr would, and
# reaped by us.

# Signals Python ignores at start-up that a command gets back at their
# default, as subprocess's restore_signals does.
_RESTORED = tuple(getattr(_signal, n) for n in ("SIGPIPE", "SIGXFSZ") if hasattr(_signal, n))


def _spawn(argv, cwd, env, stdin, stdout, stderr, child_setup):
    """(pid, Popen or None).  The usual call (no cwd) is one posix_spawn: a
    vfork-like clone and the exec, where Popen adds a pipe for its errors,
    file objects and ~100 us of Python (docs/performance.md, "Python
    exec").  Anything that call does not do exactly as subprocess would (a
    cwd, a PATH of its own in env) or that fails goes to subprocess itself,
    which then starts it, or raises the error it always raised."""
    spawn = getattr(os, "posix_spawn", None)
    if (cwd is None and spawn is not None and (env is None or type(env) is dict) and type(argv) is list
            and argv and type(argv[0]) is str):
        if "/" not in argv[0]:
            # posix_spawnp searches the REPL's own PATH; subprocess, env's.
            path = os.environ.get("PATH")
            spawn = os.posix_spawnp if path is not None and (env is None or env.get("PATH") == path) else None
        if spawn is not None:
            closes, sigdef = child_setup()
            acts = [(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, stdout, 1),
                    (os.POSIX_SPAWN_DUP2, stderr, 2)]
            acts += [(os.POSIX_SPAWN_CLOSE, fd) for fd in closes]
            try:
                return spawn(argv[0], argv, _environ() if env is None else env, file_actions=acts,
                             setsid=True, setsigdef=sigdef), None
            except (OSError, TypeError, ValueError, NotImplementedError):
                pass  # subprocess below: it raises its own error, or copes
    subprocess = _own_import("subprocess")
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
                            start_new_session=True)
    return proc.pid, proc


def _environ():
    """os.environ as posix_spawn takes it: its encoded dict, read by C,
    where os.environ itself decodes and encodes every entry in Python."""
    data = getattr(os.environ, "_data", None)
    return data if type(data) is dict else os.environ


def _wait(pid, deadline):
    """The exit code of pid (negative: killed by that signal) once it ends;
    None if the deadline (time.monotonic()) passes first."""
    if deadline is None:
        status = os.waitpid(pid, 0)[1]
    else:
        time = _own_import("time")
        delay = 0.0005
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _pidfd(pid):
    """A pidfd of our child pid (not reaped yet, so it is that process), or
    None where os.pidfd_open is missing (Python < 3.9, Linux < 5.3)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _close(*fds):
    for fd in fds:
        if fd is not None:
            os.close(fd)
    return None
