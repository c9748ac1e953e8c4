"""The MCP tools' agent: runs *inside* the sandbox (docs/mcp.md, "Design").

The host never imports this file: `layover mcp` sends its text over the IPC
socket, where the bindings' bootstrap (layover._boot.BOOT) exec()s it with
``_LAYOVER_FD`` set.  Self-contained, Python >= 3.8, standard library only.

Frames both ways: 4-byte big-endian length, then a JSON object.  Requests
{"id": N, "op": OP, ...} run each in a thread of their own, so a long command
does not hold up a file read; every reply is {"id": N, "ok": true, ...} or
{"id": N, "ok": false, "error": MESSAGE}.  {"op": "cancel", "target": N}
kills the process group of request N (no reply); {"op": "exit"} kills every
job and exits.  Commands run by /bin/sh -c in a session (process group) of
their own, so a timeout, a cancel or kill_command kills the whole group, and
the descendants that left it.
"""
# flake8: noqa: F821  (_LAYOVER_FD is set by the bootstrap)
import json
import os
import signal
import subprocess
import threading
import time

FD = _LAYOVER_FD  # noqa: F821
MAX_FRAME = 64 * 1024 * 1024
TARGET = os.environ.get("LAYOVER_TARGET") or os.getcwd()
START = os.getcwd()  # the target's root, or `--cwd DIR`: where commands start by default
# Paths are resolved from TARGET and START by name, never through our cwd: a
# checkpoint of the session (docs/history.md) mounts the next overlay over
# the target, and refuses while a process has its working directory on it.
os.chdir("/")
ENV = {k: v for k, v in os.environ.items() if k != "LAYOVER_IPC_FD"}
WLOCK = threading.Lock()
MARK = "\n[... layover: %d bytes omitted ...]\n"
LINE_CAP = 2000
READ_CAP = 40000
BOTH_CAP = 40000  # stdout and stderr together (the text and structuredContent both carry them)
MAX_JOBS = 64


class Fail(Exception):
    """An error the agent can act on: becomes {"ok": false, "error": ...}."""


def send(obj):
    data = json.dumps(obj, ensure_ascii=True).encode("ascii")
    buf = len(data).to_bytes(4, "big") + data
    with WLOCK:
        view = memoryview(buf)
        while view:
            n = os.write(FD, view)
            view = view[n:]


def read_exact(n):
    out = b""
    while len(out) < n:
        chunk = os.read(FD, n - len(out))
        if not chunk:
            return None
        out += chunk
    return out


def resolve(path):
    if not isinstance(path, str) or not path:
        return TARGET
    path = os.path.expanduser(path)
    return os.path.normpath(path if os.path.isabs(path) else os.path.join(TARGET, path))


def shown(path):
    """A path as the agent should see it: relative to the target inside it."""
    rel = os.path.relpath(path, TARGET)
    return path if rel == ".." or rel.startswith("../") else rel


def clip(text, cap):
    """(text, truncated): text of at most ~cap characters, head and tail kept."""
    if len(text) <= cap:
        return text, False
    head = text[:cap * 2 // 3]
    tail = text[len(text) - (cap - len(head)):]
    omitted = len(text.encode("utf-8", "replace")) - len(head.encode("utf-8", "replace")) - \
        len(tail.encode("utf-8", "replace"))
    return head + MARK % omitted + tail, True


class Capture:
    """One output stream: its first and last 2*cap bytes, and a byte count."""

    def __init__(self, cap):
        self.cap = cap
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data):
        with self.lock:
            self.total += len(data)
            room = 2 * self.cap - len(self.head)
            if room > 0:
                self.head += data[:room]
                data = data[room:]
            if data:
                self.tail += data
                if len(self.tail) > 2 * self.cap:
                    del self.tail[:len(self.tail) - 2 * self.cap]

    def take(self):
        """(text, truncated) of what came since the last take()."""
        with self.lock:
            head, tail, total = bytes(self.head), bytes(self.tail), self.total
            self.reset()
        if total == len(head) + len(tail):
            return clip((head + tail).decode("utf-8", "replace"), self.cap)
        h = head.decode("utf-8", "replace")[:self.cap * 2 // 3]
        t = tail.decode("utf-8", "replace")
        t = t[len(t) - (self.cap - len(h)):]
        omitted = total - len(h.encode("utf-8", "replace")) - len(t.encode("utf-8", "replace"))
        return h + MARK % max(omitted, 0) + t, True


def descendants(pid):
    """The pids below pid (by /proc's parent links), the sandbox's /proc only."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                data = f.read()
            ppid = int(data[data.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def kill_tree(proc):
    """SIGKILL the command's process group and every descendant (also those
    that started a session of their own)."""
    try:
        found = descendants(proc.pid)
    except OSError:
        found = []
    for fn, arg in [(os.killpg, proc.pid)] + [(os.kill, p) for p in found]:
        try:
            fn(arg, signal.SIGKILL)
        except OSError:
            pass


class Command:
    """A /bin/sh -c command in a session of its own, its output captured by
    a thread per stream."""

    def __init__(self, command, cwd, cap, stdin=None):
        if not isinstance(command, str) or not command.strip():
            raise Fail("command is empty")
        wd = resolve(cwd) if cwd else START
        if not os.path.lexists(wd):  # "not a directory" before newuser17, for one not there
            raise missing(wd, "cwd ")  # _mcp_agent_files.py
        if not os.path.isdir(wd):
            raise Fail("cwd %s: not a directory" % shown(wd))
        self.out, self.err = Capture(cap), Capture(cap)
        self.killed = False
        self.changed = threading.Condition()
        try:
            self.proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=wd, env=ENV, start_new_session=True,
                                         stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise Fail("cannot run /bin/sh: %s" % e.strerror)
        self.threads = [threading.Thread(target=self._pump, args=(s, c), daemon=True)
                        for s, c in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self.threads:
            t.start()
        if stdin:
            threading.Thread(target=self._feed, args=(stdin,), daemon=True).start()

    def _feed(self, data):
        try:
            self.proc.stdin.write(data.encode("utf-8", "surrogateescape"))
        except (OSError, ValueError):
            pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def _pump(self, stream, cap):
        fd = stream.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            cap.add(data)
            with self.changed:
                self.changed.notify_all()
        stream.close()

    def kill(self):
        self.killed = True
        kill_tree(self.proc)

    def wait(self, seconds, stop=None):
        """Wait up to `seconds` (None: no limit) for the shell to exit, or for
        `stop` (an Event) to be set; then give the pumps a moment to drain."""
        end = None if seconds is None else time.monotonic() + seconds
        while self.proc.poll() is None:
            if stop is not None and stop.is_set():
                return False
            left = 0.1 if end is None else min(0.1, end - time.monotonic())
            if left <= 0:
                return False
            try:
                self.proc.wait(left)
            except subprocess.TimeoutExpired:
                pass
        for t in self.threads:  # background children may hold the pipes open
            t.join(1.0)
        return True

    def status(self):
        rc = self.proc.poll()
        return None if rc is None else (rc if rc >= 0 else 128 - rc)

    def signal_name(self):
        """The signal that ended the shell ("SIGKILL"), or None: its exit
        status alone (137) read as an exit code the command chose."""
        rc = self.proc.poll()
        if rc is None or rc >= 0:
            return None
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return "signal %d" % -rc


RUNNING = {}  # request id -> Command, for cancel
JOBS = {}
JOBS_LOCK = threading.Lock()
NEXT_JOB = [0]


def op_exec(req, rid):
    timeout = float(req.get("timeout") or 120)
    stop = STOPS.setdefault(rid, threading.Event())  # main() made it: a cancel may have come already
    if stop.is_set():
        raise Fail("cancelled")
    cmd = Command(req.get("command"), req.get("cwd"), int(req.get("cap", 30000)), req.get("stdin"))
    RUNNING[rid] = cmd  # a cancel from now on kills it; one before set stop, which cmd.wait sees
    try:
        done = cmd.wait(timeout, stop)
        timed_out = not done and not stop.is_set()
        if not done:
            cmd.kill()
            cmd.wait(5)
    finally:
        RUNNING.pop(rid, None)
        STOPS.pop(rid, None)
    out, t1 = cmd.out.take()
    err, t2 = cmd.err.take()
    out, err, t3 = both(out, err)
    return {"exit_code": cmd.status(), "signal": cmd.signal_name(), "stdout": out, "stderr": err,
            "timed_out": timed_out, "cancelled": stop.is_set(), "truncated": t1 or t2 or t3}


STOPS = {}


def op_start(req, rid):
    with JOBS_LOCK:
        if sum(1 for j in JOBS.values() if j.proc.poll() is None) >= MAX_JOBS:
            raise Fail("%d jobs are running; kill_command some first" % MAX_JOBS)
        NEXT_JOB[0] += 1
        job_id = "job-%d" % NEXT_JOB[0]
        JOBS[job_id] = Command(req.get("command"), req.get("cwd"), int(req.get("cap", 30000)))
    return {"job_id": job_id, "pid": JOBS[job_id].proc.pid}


def job(req):
    j = JOBS.get(req.get("job_id"))
    if j is None:
        raise Fail("no job %r; start_command returns a job_id such as job-1" % (req.get("job_id"),))
    return j


def both(out, err):
    """(stdout, stderr, clipped): together at most BOTH_CAP characters."""
    if len(out) + len(err) <= BOTH_CAP:
        return out, err, False
    half = BOTH_CAP // 2
    if len(out) > half and len(err) > half:
        return clip(out, half)[0], clip(err, half)[0], True
    if len(out) > len(err):
        return clip(out, BOTH_CAP - len(err))[0], err, True
    return out, clip(err, BOTH_CAP - len(out))[0], True


def job_result(job_id, j):
    out, t1 = j.out.take()
    err, t2 = j.err.take()
    out, err, t3 = both(out, err)
    rc = j.status()
    return {"job_id": job_id, "stdout": out, "stderr": err, "running": rc is None, "exit_code": rc,
            "signal": j.signal_name(), "truncated": t1 or t2 or t3}


def op_read(req, rid):
    j = job(req)
    wait = min(max(float(req.get("wait") or 0), 0.0), 60.0)
    end = time.monotonic() + wait
    stop = STOPS.setdefault(rid, threading.Event())
    try:
        with j.changed:
            while (not j.out.total and not j.err.total and j.proc.poll() is None and not stop.is_set()
                   and time.monotonic() < end):
                j.changed.wait(min(0.1, max(end - time.monotonic(), 0.001)))
    finally:
        STOPS.pop(rid, None)
    if j.proc.poll() is not None:
        for t in j.threads:
            t.join(1.0)
    return job_result(req["job_id"], j)


def op_kill(req, rid):
    j = job(req)
    if j.proc.poll() is None:
        j.kill()
    j.wait(5)
    r = job_result(req["job_id"], j)
    r["killed"] = j.killed
    return r


OPS = {"exec": op_exec, "start": op_start, "read": op_read, "kill": op_kill, "read_file": op_read_file,
       "write_file": op_write_file, "edit_file": op_edit_file, "list": op_list, "search": op_search}


def serve(req):
    rid = req.get("id")
    try:
        result = OPS[req["op"]](req, rid)
        result["ok"] = True
    except Fail as e:
        result = {"ok": False, "error": str(e)}
    except (ValueError, TypeError, KeyError) as e:
        result = {"ok": False, "error": "bad arguments: %s" % e}
    except Exception as e:  # an agent bug must not take the sandbox down
        result = {"ok": False, "error": "internal error: %s: %s" % (type(e).__name__, e)}
    finally:
        STOPS.pop(rid, None)
    result["id"] = rid
    try:
        send(result)
    except OSError:
        pass


def cancel(rid):
    stop = STOPS.get(rid)
    if stop is not None:
        stop.set()
    cmd = RUNNING.get(rid)
    if cmd is not None:
        cmd.kill()


def shutdown():
    for j in list(JOBS.values()) + list(RUNNING.values()):
        if j.proc.poll() is None:
            j.kill()
    for pid in list(SEARCHES):  # search_files' children (_mcp_agent_files.py)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main():
    send({"id": 0, "ok": True, "hello": 1, "pid": os.getpid(), "target": TARGET})
    while True:
        head = read_exact(4)
        if head is None:
            break
        n = int.from_bytes(head, "big")
        if n > MAX_FRAME:
            break
        body = read_exact(n)
        if body is None:
            break
        req = json.loads(body.decode("utf-8"))
        op = req.get("op")
        if op == "exit":
            break
        if op == "cancel":
            cancel(req.get("target"))
            continue
        if op not in OPS:
            send({"id": req.get("id"), "ok": False, "error": "unknown op"})
            continue
        # The request's stop event exists before its thread runs: a cancel
        # read right behind it (the client gave up at once, or the thread is
        # slow to start on a loaded machine) sets it, and the op sees it.
        # Made in the op's thread, a cancel before it was lost and the
        # command ran to its time limit.
        STOPS[req.get("id")] = threading.Event()
        threading.Thread(target=serve, args=(req,), daemon=True).start()
    shutdown()
    os._exit(0)


main()
