"""Helpers shared by the binding tests (a unique module name: the
integration suite has its own conftest on sys.path)."""
from __future__ import annotations

import os
from pathlib import Path

from layover import list_sessions


def tree(root):
    """{relative path: bytes or 'dir' or ('link', target)} of a real tree."""
    out = {}
    root = Path(root)
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = "dir"
        else:
            out[rel] = p.read_bytes()
    return out


def session(state_dir, name):
    """The session `name` of state_dir as list_sessions() shows it, or None."""
    return {s.name: s for s in list_sessions(state_dir=state_dir)}.get(name)


# For code run inside the REPL that plays a hostile program: send(data)
# writes data to every socket it holds.  Only the reply socket takes it; the
# IPC and control sockets refuse writes from inside (EPIPE).
HOSTILE_SEND = (
    "import os, stat\n"
    "def send(data):\n"
    "    for f in sorted(map(int, os.listdir('/proc/self/fd'))):\n"
    "        try:\n"
    "            if f > 2 and stat.S_ISSOCK(os.fstat(f).st_mode):\n"
    "                os.write(f, data)\n"
    "        except OSError:\n"
    "            pass\n"
)


def forged_result_tool(body):
    """A tool that forges its own result from inside: the bytes the Python
    expression `body` makes (it may use %(n)d), in frames of at most 1 MiB,
    then its done frame, and waits (the REPL's own reply would come after
    the host read the forged one). Format it with rid= and n=."""
    return HOSTILE_SEND + (
        "def tool():\n"
        "    import time\n"
        "    h = b'{\"t\":\"out\",\"id\":%(rid)d,\"s\":\"result\"}'\n"
        "    body = " + body + "\n"
        "    for at in range(0, len(body), 1 << 20):\n"
        "        v = body[at:at + (1 << 20)]\n"
        "        send(len(h).to_bytes(4, 'big') + len(v).to_bytes(4, 'big') + h + v)\n"
        "    h = (b'{\"t\":\"done\",\"id\":%(rid)d,\"lens\":[-1],\"tail\":[0,0],'\n"
        "         b'\"interrupted\":false,\"ok\":true}')\n"
        "    send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)\n"
        "    time.sleep(60)\n")


def descendants(pid):
    """Pids (the host's) of every process below pid."""
    kids, found = set(), {pid}
    while found:
        kids |= found
        found = set()
        for p in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/stat" % p) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) in kids and int(p) not in kids:
                        found.add(int(p))
            except (OSError, ValueError, IndexError):
                continue
    return kids - {pid}


def repl_waits_in_root(sb):
    """True once a Sandbox's idle REPL server waits in / (off the overlay)."""
    for pid in descendants(sb._repl.proc.pid):
        try:
            with open("/proc/%d/comm" % pid) as f:
                if f.read().startswith("python") and os.readlink("/proc/%d/cwd" % pid) == "/":
                    return True
        except OSError:
            continue
    return False


def until_no_process_names(text, timeout=60.0):
    """Wait until no live process has `text` in its command line: a command
    that would still act on it (a killed group's background job) is gone,
    killed or finished, so a check after this one is no race with it."""
    import time
    needle = text.encode()
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for p in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open("/proc/%s/cmdline" % p, "rb") as f:
                    if needle in f.read():
                        alive.append(int(p))
            except OSError:
                continue
        if not alive:
            return
        assert time.monotonic() < deadline, "processes naming %r still run: %r" % (text, alive)
        time.sleep(0.01)
