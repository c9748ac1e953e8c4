"""Strict JSON at both ends of `layover mcp` (docs/mcp.md): the frames read
from the agent inside the sandbox, and the lines written to the client.

json.loads takes NaN, Infinity and numbers past a float's range (1e400 is
inf), and json.dumps writes NaN and Infinity back out: no JSON parser reads
those. A str may hold a lone surrogate (a file name that is not UTF-8, read
inside as surrogateescape), which JSON can write only as the escape \\udcff:
RFC 8259's grammar, but no Unicode string, and strict clients (serde_json,
Go) refuse the whole message. Found by the attack pass of 27 Nov, from a
file name and from a reply forged inside on the agent's channel.
"""
from __future__ import annotations

import json
import re
from typing import Any

from ._client_frames import NotJson, _finite_float, _no_constant

# One frame from the agent: its own replies stay under 1 MB (its caps:
# 40,000 characters of output, 1,000 entries, 500 matches, every string
# \u-escaped), and so far under both limits. Past them a frame was forged
# inside (a command that took the agent's channel): json.loads made each 3
# bytes of `[[],[],...]` a Python object, so a 64 MiB frame (the requests'
# cap, which replies shared) cost the server 1.7 GB of peak RSS (the attack
# pass of 27 Nov, attack23). Under both, a frame's objects hold at most
# about 4 bytes per byte of it (a str holding one astral character is 4
# bytes a character) plus 64 Ki small ones.
MAX_REPLY = 16 * 1024 * 1024  # bytes
MAX_VALUES = 1 << 16          # JSON values: strings, and the , : [ { between them
# Nesting: the agent's replies nest 3 deep (search_files' matches). Under
# MAX_VALUES a frame forged inside could nest ~990 deep: the reader's
# shallow stack parsed it, and json.dumps of the tool's response, deeper in
# another thread's stack, raised RecursionError outside every handler (a
# traceback, and the client's call never answered; attack25).
MAX_DEPTH = 64


class TooBig(ValueError):
    """A frame from the agent past MAX_REPLY or MAX_VALUES; its str is the
    one line said to the client."""


# A string (one running to the end unclosed too: each " then starts a token
# that matches, so a frame of escaped quotes costs linear time; a backslash
# takes any character after it, a newline too, which `.` does not: a string
# holding one failed to match and the scan began again at each escaped quote
# in it, quadratic, attack27), or a character that starts or separates
# values outside strings.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[,:\[{]', re.DOTALL)
_NEST = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)  # a string as _TOKEN's, or a bracket


def _small_int(text: str) -> int:
    if len(text) > 40:  # no reply's number is this long; int() of millions of digits is quadratic before 3.11
        raise NotJson(len(text))  # never shown: the reply is malformed
    return int(text)


_decode = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float, parse_int=_small_int).decode


def loads_reply(text: str) -> Any:
    """A frame from the agent, its bytes as latin-1 text: ASCII JSON (the
    agent writes every other character as its \\u escape) of at most
    MAX_VALUES values, finite numbers only, else ValueError (a malformed
    reply: the agent never sends those); TooBig past MAX_VALUES."""
    if not text.isascii():
        raise ValueError(len(text))  # never shown: the reply is malformed
    # Cheap first: the separators counted inside strings too, which the agent's own replies keep under the limit.
    if sum(map(text.count, ",:[{")) > MAX_VALUES:
        n = 0
        for _ in _TOKEN.finditer(text):
            n += 1
            if n > MAX_VALUES:
                raise TooBig("the sandbox sent a reply of more than %d JSON values, the limit of one reply (a "
                             "frame forged inside, on the agent's channel); the sandbox was stopped" % MAX_VALUES)
    if text.count("[") + text.count("{") > MAX_DEPTH:  # else it cannot nest deeper
        depth = 0
        for m in _NEST.finditer(text):
            c = text[m.start()]
            if c == "[" or c == "{":
                depth += 1
                if depth > MAX_DEPTH:
                    raise TooBig("the sandbox sent a reply nested more than %d deep, the limit of one reply (a "
                                 "frame forged inside, on the agent's channel); the sandbox was stopped" % MAX_DEPTH)
            elif c == "]" or c == "}":
                depth -= 1
    return _decode(text)


def wire(msg: Any) -> bytes:
    """msg as one line of strict JSON (RFC 8259 as I-JSON, RFC 7493, reads
    it): a lone surrogate becomes U+FFFD, as bytes.decode("utf-8",
    "replace") makes of a byte that is not UTF-8, and a number that is not
    finite null."""
    try:
        text = json.dumps(msg, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(msg), ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return no_lone_surrogates(text).encode("utf-8")


def no_lone_surrogates(text: str) -> str:
    """text with each lone surrogate (a name's byte that is not UTF-8, read
    as surrogateescape) as U+FFFD; a pair stays one character."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if obj - obj == 0.0 else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
