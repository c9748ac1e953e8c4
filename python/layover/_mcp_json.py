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
from typing import Any


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # never shown: the reply is malformed


def _finite_float(text: str) -> float:
    v = float(text)
    if v - v != 0.0:  # inf - inf and nan - nan are nan
        raise ValueError(text[:40])  # never shown: the reply is malformed
    return v


def loads_reply(body: bytes) -> Any:
    """A frame from the agent: UTF-8 JSON with finite numbers only, else
    ValueError (a malformed reply: the agent never sends those)."""
    return json.loads(body.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite_float)


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
    except UnicodeEncodeError:  # a pair stays one character; a lone surrogate is U+FFFD
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")


def _finite(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if obj - obj == 0.0 else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj
