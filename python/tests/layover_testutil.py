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
