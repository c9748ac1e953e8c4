"""The bootstrap given to the sandboxed interpreter with ``-c``.

It reads one frame from the IPC socket (fd ``$LAYOVER_IPC_FD``) whose payload
is the REPL server's source, and exec()s it.  The server's code so reaches
the sandbox over the socket, never by a path the sandbox might hide.
"""
from __future__ import annotations

import importlib.util
import marshal
import pkgutil
from typing import Dict

# The payload is MAGIC(4) LEN(4) CODE(LEN) SOURCE: CODE is the server
# compiled and marshalled by the host, used when the inner interpreter has the
# same bytecode magic (compiling the source would cost ~4 ms of start-up);
# otherwise the source is compiled.  Data flows host -> sandbox only: the
# host never unmarshals anything.
BOOT = (
    "import os,marshal,_frozen_importlib_external as e\n"
    "fd=int(os.environ['LAYOVER_IPC_FD'])\n"
    "def r(n):\n"
    " b=b''\n"
    " while len(b)<n:\n"
    "  c=os.read(fd,n-len(b))\n"
    "  if not c:raise SystemExit(70)\n"
    "  b+=c\n"
    " return b\n"
    "h=int.from_bytes(r(4),'big');p=int.from_bytes(r(4),'big');r(h);d=r(p)\n"
    "n=int.from_bytes(d[4:8],'big')\n"
    "c=marshal.loads(d[8:8+n]) if d[:4]==e.MAGIC_NUMBER else compile(d[8+n:],'<layover-repl>','exec')\n"
    "del d\n"
    "exec(c,{'__name__':'__layover_repl__','__builtins__':__builtins__,'_LAYOVER_FD':fd})\n"
)

_source_cache: Dict[str, bytes] = {}


SERVER_PARTS = ("_repl_io.py", "_repl_out.py", "_repl_exec.py", "_repl_result.py", "_repl_help.py", "_server.py")


def server_source() -> bytes:
    """The REPL server's source: its parts, read from the package (works
    from a zip too), joined into one text executed in one namespace."""
    src = _source_cache.get("s")
    if src is None:
        parts = []
        for name in SERVER_PARTS:
            data = pkgutil.get_data("layover", name)
            if data is None:
                raise RuntimeError("layover package is missing %s; reinstall it" % name)
            parts.append(data)
        src = _source_cache["s"] = b"\n".join(parts)
    return src


def boot_frame() -> bytes:
    """The first frame on the socket: header {"t":"boot"}, payload as above."""
    frame = _source_cache.get("f")
    if frame is None:
        src = server_source()
        code = marshal.dumps(compile(src, "<layover-repl>", "exec", dont_inherit=True))
        payload = importlib.util.MAGIC_NUMBER + len(code).to_bytes(4, "big") + code + src
        header = b'{"t":"boot"}'
        frame = _source_cache["f"] = (len(header).to_bytes(4, "big") + len(payload).to_bytes(4, "big")
                                      + header + payload)
    return frame
