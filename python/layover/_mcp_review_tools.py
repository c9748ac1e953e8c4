"""The review tools `layover mcp` serves (docs/mcp.md): changes, diff and
review_feedback, through the helper's verbs (status, diff, rejections), with
the hint that names the person's review.  The argument checks and caps are
_mcp_tools.py's.
"""
from __future__ import annotations

import fcntl
import json
import os
from typing import Any, Dict, List

from ._helper import SESSION_CWD, one_line
from ._mcp_fold import fold
from ._mcp_tools import TEXT_CAP, BadArgs, Result, _arg, _inert, clip


def review_hint(name: str) -> str:
    return ("Nothing is applied to the real tree until a person reviews it: layover status %s; "
            "layover diff %s; layover apply %s" % (name, name, name))


_LETTER = {"added": "A", "modified": "M", "deleted": "D", "type_changed": "T", "metadata": "m", "opaque_dir": "O"}


def _changes_text(out: List[Dict[str, Any]], rejected: List[Dict[str, Any]]) -> str:
    """The text of `changes`, made from the same snapshot as its structured
    content (two `status` calls could differ while a command writes)."""
    lines, i = [], 0
    while i < len(out):  # a new dir's subtree on its one line, as status folds it (_mcp_fold.py)
        c = out[i]
        i, note = fold(out, i)
        # A name's controls as escapes: "x\nD  README.md" forged a deletion's line (attack35).
        line = "%s  %s%s" % (_LETTER.get(c["kind"], "?"), _inert(c["path"], keep=""),
                             "/" if c["type"] == "dir" else "")
        line += "  (%s)" % note if note else ""
        lines.append(line + ("  ! " + ", ".join(c["risks"]) if c["risks"] else ""))  # as status spaces them
    n = {k: sum(1 for c in out if c["kind"] == k) for k in ("added", "modified", "deleted")}
    if out:
        parts = ["%d %s" % (n[k], k) for k in ("added", "modified", "deleted") if n[k]]
        other = len(out) - sum(n.values())
        parts += ["%d other" % other] if other else []
        listed = " (listed on %d line%s: a new dir's line stands for what it holds)" % (
            len(lines), "" if len(lines) == 1 else "s") if len(lines) < len(out) else ""
        lines.append("%d change%s: %s%s" % (len(out), "" if len(out) == 1 else "s", ", ".join(parts), listed))
    lines += ["R  " + _rejection_line(r) for r in rejected]
    return "\n".join(lines) or "no changes"


def changes(ctx: Any, a: Dict[str, Any]) -> Result:
    ctx.sandbox.ensure()  # the session exists once the sandbox started
    name = ctx.sandbox.name
    r = ctx.helper.run(["status", name, "--json"])
    data = json.loads(r.stdout.decode("utf-8", "replace"))
    # The text form's notes (ignored caches, hidden paths, writes outside the
    # target), which `status --json` prints on stderr, from the same snapshot.
    notes = [ln for ln in (r.stderr or b"").decode("utf-8", "replace").splitlines() if ln.strip()]
    items = data if isinstance(data, list) else data.get("changes", []) if isinstance(data, dict) else []
    out = [{"kind": str(c.get("kind")), "path": str(c.get("path")),
            "type": c.get("type") if isinstance(c.get("type"), str) else None,
            "size": c.get("size") if type(c.get("size")) is int else None,
            "risks": [str(r) for r in c.get("risks", []) if isinstance(r, str)]
            if isinstance(c.get("risks"), list) else []} for c in items if isinstance(c, dict)]
    rejected = _rejections(ctx)
    text, _ = clip("\n".join([_changes_text(out, rejected)] + notes), 20000)
    hint = review_hint(name)
    ctx.last_review = hint
    return (text + "\n" + hint, {"session": name, "changes": out[:500], "count": len(out),
                                 "truncated": len(out) > 500, "review": hint,
                                 "rejected": rejected[:500], "notes": notes[:100]}, False)


def _rejections(ctx: Any) -> List[Dict[str, Any]]:
    """`layover rejections --json`, each record reduced to checked plain fields."""
    data = json.loads(ctx.helper.run(["rejections", ctx.sandbox.name, "--json"]).stdout.decode("utf-8", "replace"))
    items = data.get("rejections") if isinstance(data, dict) else None
    out = []
    for r in items if isinstance(items, list) else []:
        if not isinstance(r, dict) or type(r.get("seq")) is not int or not isinstance(r.get("path"), str):
            continue
        out.append({"seq": r["seq"], "path": r["path"], "hunk": r.get("hunk") if type(r.get("hunk")) is int else 0,
                    "reason": str(r.get("reason") or ""), "state": str(r.get("state") or ""),
                    "time": str(r.get("time") or "")})
    return out


def _rejection_line(r: Dict[str, Any]) -> str:
    what = _inert(r["path"], keep="") + (" [hunk %d]" % r["hunk"] if r["hunk"] else "")
    return "%s %s%s" % (what, r["state"], ": " + r["reason"] if r["reason"] else "")


FEEDBACK_FILE = "mcp-feedback-seq"  # in the session's dir: review_feedback's cursor, by seq


def _feedback_fd(ctx: Any) -> int:
    """The session's cursor file, open and locked (flock: one server at a
    time moves it), so that a restarted server goes on where the last left."""
    env = getattr(ctx.helper, "env", None) or os.environ
    state = env.get("LAYOVER_STATE_DIR") or "/var/tmp/layover-%d" % os.getuid()
    path = os.path.join(state, "sessions", ctx.sandbox.name, FEEDBACK_FILE)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _read_seq(fd: int) -> int:
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() and len(text) < 20 else 0


def review_feedback(ctx: Any, a: Dict[str, Any]) -> Result:
    ctx.sandbox.ensure()
    with ctx.server.feedback_lock:  # one call at a time moves the cursor
        try:
            fd = _feedback_fd(ctx)
        except OSError:
            fd = -1  # no session dir to keep it in: this server's cursor only
        try:
            seen = _read_seq(fd) if fd >= 0 else ctx.server.feedback_seq
            new = [r for r in _rejections(ctx) if r["seq"] > seen]
            if new:
                ctx.server.feedback_seq = max(r["seq"] for r in new)
                if fd >= 0:
                    data = b"%d\n" % ctx.server.feedback_seq
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, data, 0)
        finally:
            if fd >= 0:
                os.close(fd)
    text = "\n".join(_rejection_line(r) for r in new) or "no new rejections"
    return text, {"session": ctx.sandbox.name, "rejections": new}, False


def diff(ctx: Any, a: Dict[str, Any]) -> Result:
    paths = _arg(a, "paths", list, [])
    if not all(isinstance(p, str) for p in paths):
        raise BadArgs("argument 'paths' must be an array of strings")
    if any("\0" in p for p in paths):
        raise BadArgs("argument 'paths' holds a NUL byte (\\u0000), which no path can hold")
    if "" in paths:  # '' is the target itself: every change, never the one path meant
        raise BadArgs("argument 'paths' holds an empty path (\"\"), which would select every change; name paths "
                      "relative to the target, or leave out 'paths' for the whole diff")
    ctx.sandbox.ensure()
    # Secrets cut to their prefix: the transcript must not carry them further (docs/review.md).
    args = ["diff", ctx.sandbox.name, "--color=never", "--mask-secrets"] + (["--"] + paths if paths else [])
    # Read with a cap: the agent chooses how big the diff is, and this server runs on the host.
    head, tail, total, err = ctx.helper.run_clipped(args, TEXT_CAP * 4, ok=(0, 1), cwd=SESSION_CWD)
    if tail:  # past what clip() would keep anyway: its head and tail, the middle counted in bytes
        first = head.decode("utf-8", "replace")[:TEXT_CAP * 2 // 3]
        last = tail.decode("utf-8", "replace")
        last = last[len(last) - TEXT_CAP // 3:]
        omitted = total - len(first.encode("utf-8", "replace")) - len(last.encode("utf-8", "replace"))
        text, clipped = first + "\n[... layover: %d bytes omitted ...]\n" % max(omitted, 0) + last, True
    else:
        text, clipped = clip(head.decode("utf-8", "replace"))
    # A path that selects no change (a typo): the helper's line, which was
    # dropped, the tool saying "no changes" as if the edit were lost (newuser15).
    notes = [one_line(ln.encode(), "")[:500] for ln in err.decode("utf-8", "replace").splitlines()
             if " matches no change" in ln][:20]
    shown = "\n".join(([text.rstrip("\n")] if text else []) + notes) if notes else text
    return shown or "no changes", {"diff": text, "truncated": clipped, "notes": notes}, False
