"""The REPL protocol's frames as the host reads them (docs/protocol.md): the
limits, one request's Reply, the REPL's own header forms matched without
json.loads, a timeout as seconds, a run reply as a RunResult.  Used by
ReplClient (_client.py, its hot paths; _client_base.py, the general path).
"""
from __future__ import annotations

import json
import os
import re
import select
import socket
import struct
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from .errors import TimeoutError
from .model import RunResult

MAX_HEADER = 64 * 1024          # must match _server.py
MAX_PAYLOAD = 1024 * 1024       # must match _server.py
POLL = 0.25                     # seconds between liveness checks while waiting
INTERRUPT_GRACE = 2.0           # after an interrupt, before killing descendants
KILL_GRACE = 3.0                # after that, before stopping the sandbox
SEND_STALL = 30.0               # a REPL that reads nothing for this long is stuck
EXEC_SLACK = 5.0                # exec timeouts are enforced inside; this is the backstop
CTL_INTERRUPT = 1
CTL_KILL = 2
STREAMS = ("stdout", "stderr", "result")

Frame = Tuple[Dict[str, Any], bytes]


class _Deadline(Exception):
    pass


class Reply:
    """Collected answer to one request."""

    __slots__ = ("streams", "total", "done", "texts", "interrupted_by_host")

    def __init__(self) -> None:
        self.streams: Dict[str, List[bytes]] = {}
        self.total = 0  # bytes received for this request, against max_output
        self.done: Dict[str, Any] = {}
        self.texts: List[Optional[str]] = []
        self.interrupted_by_host = False

    def data(self, stream: str) -> bytes:
        parts = self.streams.get(stream)
        if not parts:
            return b""
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def text(self, i: int) -> Optional[str]:
        return self.texts[i] if i < len(self.texts) else None


# The headers the REPL writes on the hot path, in the exact form it formats
# them, parsed without json.loads.  Only what matches exactly takes this
# path (the result equals json.loads'); everything else goes through JSON.
_INT = rb"(0|[1-9][0-9]{0,17})"
_LEN = rb"(-1|0|[1-9][0-9]{0,17})"
_OUT_RE = re.compile(rb'\{"t":"out","id":' + _INT + rb',"s":"(stdout|stderr|result)"\}')
_DONE_FORM = (rb'done","id":' + _INT + rb',"lens":\[' + _LEN + rb"," + _LEN + rb'\],"tail":\[' + _INT + rb","
              + _INT + rb'\],"interrupted":(true|false)')
_DONE_RE = re.compile(rb'\{"t":"' + _DONE_FORM + rb"\}")
# exec's done header as the REPL formats it when the command ran its course.
_EXEC_DONE_RE = re.compile(rb'\{"t":"done","id":' + _INT + rb',"lens":\[\],"tail":\[' + _INT + rb"," + _INT
                           + rb'\],"returncode":(0|-?[1-9][0-9]{0,9}),"timed_out":false,"interrupted":false\}')


# run_code's reply matcher: either form in one pattern; groups 1-2 for "out",
# 3-8 for "done".
_HOT_RE = re.compile(rb'\{"t":"(?:out","id":' + _INT + rb',"s":"(stdout|stderr|result)"|' + _DONE_FORM + rb")\}")
_HOT_MATCH = _HOT_RE.fullmatch
_LENS = struct.Struct(">II")
# json.dumps(obj, separators=(",", ":")), without a new encoder per call.
_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def _fast_header(raw: bytes) -> Optional[Dict[str, Any]]:
    m = _OUT_RE.fullmatch(raw)
    if m is not None:
        return {"t": "out", "id": int(m[1]), "s": m[2].decode("ascii")}
    m = _DONE_RE.fullmatch(raw)
    if m is not None:
        return {"t": "done", "id": int(m[1]), "lens": [int(m[2]), int(m[3])], "tail": [int(m[4]), int(m[5])],
                "interrupted": m[6] == b"true"}
    m = _EXEC_DONE_RE.fullmatch(raw)
    if m is not None:
        return _exec_done(m)
    return None


def _exec_done(m: "re.Match[bytes]") -> Dict[str, Any]:
    return {"t": "done", "id": int(m[1]), "lens": [], "tail": [int(m[2]), int(m[3])], "returncode": int(m[4]),
            "timed_out": False, "interrupted": False}


class NotJson(ValueError):
    """A number JSON has not (NaN, Infinity, -Infinity, or one past a
    float's range: 1e400) in what came from inside. json.loads takes them;
    the REPL's own JSON never holds one (its json_dumps refuses them), so
    one came from code that forged a frame, and a caller given a NaN for a
    number would go on with it."""


def _no_constant(name: str) -> Any:
    raise NotJson("%s, which JSON has not" % name)


def _finite_float(text: str) -> float:
    v = float(text)
    if v - v != 0.0:  # inf - inf and nan - nan are nan
        raise NotJson("%s, a number past a float's range" % text[:40])
    return v


class LongNumber(ValueError):
    """An integer of more digits than int_digits() in what came from
    inside; its arguments: the count of digits, and that limit."""


# Python's own default int_max_str_digits: int() of a longer text is
# quadratic in its digits (on 3.8-3.10 always, on 3.11+ wherever the limit
# was lifted), and one value to json_values_within: 256 MiB of '7' took
# days (attack30).
MAX_INT_DIGITS = 4300


def int_digits() -> int:
    """The most digits of an integer read from inside: MAX_INT_DIGITS, or
    the host program's own lower int_max_str_digits (640 at least), past
    which int() raises the ValueError a malformed result raises."""
    n = _get_int_digits() if _get_int_digits is not None else 0
    return n if 0 < n < MAX_INT_DIGITS else MAX_INT_DIGITS


_get_int_digits = getattr(sys, "get_int_max_str_digits", None)  # Python 3.11, 3.10.7, 3.9.14, 3.8.14


def _bounded_int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > MAX_INT_DIGITS:
        raise LongNumber(digits, MAX_INT_DIGITS)
    try:
        return int(text)
    except ValueError:  # past the host's own int_max_str_digits
        raise LongNumber(digits, int_digits()) from None


# JSON as the host reads it from inside (the REPL's headers and tool
# results): finite numbers only, integers of at most MAX_INT_DIGITS digits
# (`layover mcp`'s agent frames have a tighter reader, _mcp_json.py). A lone
# surrogate escape (\udcff: a name that is not UTF-8, which the REPL reads
# as surrogateescape) is kept, as os.listdir gives it; `layover mcp` turns
# it into U+FFFD on the way to its client (_mcp_json.wire).
_strict_short = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float).decode
_strict_long = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float,
                                parse_int=_bounded_int).decode


def strict_json(text: str):
    """A text no longer than int_digits() holds no integer past it: such a
    text (every REPL header) is parsed by C alone, the digits' check (a
    Python call per integer, ~1 us a header) only where one could be long."""
    return (_strict_long if len(text) > int_digits() else _strict_short)(text)


# A JSON string, its escapes whole, or one left open to the end (malformed:
# the parser says so): what json_values_within() leaves out. Each match
# succeeds at its first try, so the scan is linear; one that had to end
# at a '"' rescanned to the end from every escaped quote of an open string
# (quadratic: '"' + '\\",' * 3M took hours).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)


def json_values_within(raw: bytes, limit: int, containers: Optional[int] = None) -> bool:
    """Whether the JSON text `raw` holds at most `limit` values and keys
    (and, given `containers`, at most that many arrays and objects).
    Each but the first follows a '[', '{', ',' or ':', so their count
    bounds it: counted over the whole text first (C, no copy), then, only
    when past `limit`, again with the strings left out (a long string full
    of commas is one value). Parsed, each value is a Python object on the
    host, up to ~80 bytes for 3 bytes of "[]," (attack28); an array or
    object is also one more for the cyclic GC to walk (~5 us each)."""
    boxes = raw.count(b"[") + raw.count(b"{")
    if 1 + raw.count(b",") + raw.count(b":") + boxes <= limit and (containers is None or boxes <= containers):
        return True
    bare = _JSON_STRING.sub(b"0", raw)
    boxes = bare.count(b"[") + bare.count(b"{")
    return 1 + bare.count(b",") + bare.count(b":") + boxes <= limit and (containers is None or boxes <= containers)


def _readable(sock: socket.socket, left: float) -> bool:
    p = select.poll()
    p.register(sock, select.POLLIN)
    return bool(p.poll(max(0, int(left * 1000 + 0.999))))


def seconds(timeout: Any) -> Optional[float]:
    """A run/exec/call timeout as float seconds: None or infinity for none;
    zero or less times out at once, as subprocess.run does.  Anything else
    (NaN, a str, a bool) is refused here, before a request is sent: the
    REPL's JSON has no NaN or Infinity, and a bad value once sent would
    stop the sandbox."""
    if isinstance(timeout, (str, bytes, bool)):
        raise TypeError("timeout must be a number of seconds or None, not %r" % (timeout,))
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        raise TypeError("timeout must be a number of seconds or None, not %r" % (timeout,)) from None
    if t != t:
        raise ValueError("timeout must be a number of seconds or None, not nan")
    return None if t == float("inf") else t


_RUN = {"t": "run"}
_IRUN = {"t": "irun"}  # run() with interactive=True: expression statements echoed


def _run_result(collect: Callable[..., Reply], *args: Any, **kw: Any) -> RunResult:
    """The RunResult of a run request's Reply, collected by collect(*args)."""
    try:
        reply = collect(*args, **kw)
    except TimeoutError as e:
        e.stdout = _text(e.stdout)  # type: ignore[arg-type]
        e.stderr = _text(e.stderr)  # type: ignore[arg-type]
        raise
    texts = reply.texts
    return RunResult(reply.data("stdout").decode("utf-8", "replace"),
                     reply.data("stderr").decode("utf-8", "replace"),
                     texts[0] if texts else None, texts[1] if len(texts) > 1 else None,
                     bool(reply.done.get("interrupted")))


def _text(data: Any) -> Any:
    if isinstance(data, (bytes, bytearray)):
        return bytes(data).decode("utf-8", "replace")
    return data


def socketpair() -> Tuple[socket.socket, socket.socket]:
    """A CLOEXEC stream socketpair (the child's end is passed explicitly)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    for s in (a, b):
        os.set_inheritable(s.fileno(), False)
    return a, b
