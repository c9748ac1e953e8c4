"""Helpers shared by the binding tests (a unique module name: the
integration suite has its own conftest on sys.path)."""
from __future__ import annotations

import os
from pathlib import Path


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
