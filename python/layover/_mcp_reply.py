"""A reply from `layover mcp`'s agent, bounded before a tool uses it
(docs/mcp.md): the agent clips what it sends to each tool's documented
limits, but a command inside can take the agent's channel and forge a reply
with the id of a call in flight (test_attack23.py). Such a reply was passed
on whole, a 16 MB stdout into the client's transcript; now it is clipped as
the agent clips its own (found by the attack pass of 27 Nov, attack23).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ._mcp_tools import OUTPUT_CAP, clip

BOTH_CAP = 40000  # stdout and stderr together, as _mcp_agent.BOTH_CAP
OUT_MARK = "\n[... layover: %d bytes omitted ...]\n"  # the agent's own marker (_mcp_agent.MARK)
SLACK = 64        # room for a marker the agent added: what it clipped is not clipped again
STR_CAP = 44000   # any other string: read_file's page (40,000 characters and its last line of 2,000) fits
LIST_CAPS = {"entries": 1000, "matches": 500}  # list_directory's and search_files' documented caps
LIST_CAP = 1000   # any other list (no reply of the agent's has one)


def _utf8_len(s: str, start: int, end: int) -> int:
    """The UTF-8 size of s[start:end], a megabyte at a time (no copy of a
    forged 16 MB str at once), as the agent counts it ("replace")."""
    if s.isascii():
        return end - start
    return sum(len(s[i:min(end, i + (1 << 20))].encode("utf-8", "replace")) for i in range(start, end, 1 << 20))


def clip_output(text: str, cap: int) -> Tuple[str, bool]:
    """_mcp_agent.clip: at most ~cap characters, head and tail kept, the
    middle counted in bytes."""
    if len(text) <= cap:
        return text, False
    head = text[:cap * 2 // 3]
    tail = text[len(text) - (cap - len(head)):]
    return head + OUT_MARK % _utf8_len(text, len(head), len(text) - len(tail)) + tail, True


def _both(out: str, err: str) -> Tuple[str, str]:
    """_mcp_agent.both: stdout and stderr together at most BOTH_CAP."""
    half = BOTH_CAP // 2
    if len(out) > half and len(err) > half:
        return clip_output(out, half)[0], clip_output(err, half)[0]
    if len(out) > len(err):
        return clip_output(out, BOTH_CAP - len(err))[0], err
    return out, clip_output(err, BOTH_CAP - len(out))[0]


def _bound(v: Any, cap: int) -> Tuple[Any, bool]:
    if isinstance(v, str):
        return clip(v, cap) if len(v) > cap + SLACK else (v, False)
    if isinstance(v, dict):
        clipped = False
        out: Dict[Any, Any] = {}
        for k, x in v.items():
            out[k], c = _bound(x, STR_CAP)
            clipped |= c
        return out, clipped
    if isinstance(v, list):
        items: List[Any] = []
        clipped = len(v) > cap
        for x in v[:cap]:
            y, c = _bound(x, STR_CAP)
            items.append(y)
            clipped |= c
        return items, clipped
    return v, False


def bounded(r: Dict[str, Any]) -> Dict[str, Any]:
    """r with every string and list within its tool's limit; "truncated"
    true when something was cut. The agent's own replies come out as they
    went in."""
    out = dict(r)
    cut = False
    streams = [k for k in ("stdout", "stderr") if isinstance(out.get(k), str)]
    for k in streams:
        if len(out[k]) > OUTPUT_CAP + SLACK:
            out[k] = clip_output(out[k], OUTPUT_CAP)[0]
            cut = True
    if len(streams) == 2 and len(out["stdout"]) + len(out["stderr"]) > BOTH_CAP + 2 * SLACK:
        out["stdout"], out["stderr"] = _both(out["stdout"], out["stderr"])
        cut = True
    for k, v in out.items():
        if k in streams:
            continue
        out[k], c = _bound(v, LIST_CAPS.get(k, LIST_CAP) if isinstance(v, list) else STR_CAP)
        cut |= c
    if cut:
        out["truncated"] = True
    return out
