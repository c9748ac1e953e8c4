"""The tools `layover mcp` serves (docs/mcp.md): their schemas, annotations,
and what each does, through the agent inside the sandbox (file and command
tools) or the helper's verbs (the steps here; changes, diff and review_feedback in
_mcp_review_tools.py, every tool by name in _mcp_handlers.py).  No tool writes to
the real tree: applying is the person's, with `layover apply`.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._mcp_json import no_lone_surrogates
from .errors import inert_text


def _inert(text: str, keep: str = "") -> str:
    """A name or line from inside for the text a reader sees: controls as
    escapes (inert_text), a byte that is not UTF-8 as U+FFFD, as the
    structured content has it (wire), not as the escape \\udcff."""
    return inert_text(no_lone_surrogates(text), keep=keep)


OUTPUT_CAP = 30000      # characters per stream (head and tail kept)
TEXT_CAP = 40000        # characters of one result's text: with structuredContent ~20k tokens
MAX_TIMEOUT = 3600.0
DEFAULT_TIMEOUT = 120.0
SEARCH_TIMEOUT = 30.0  # search_files' time limit: the search runs in a process killed then (_mcp_agent_files.py)
MAX_SEARCH_TIMEOUT = 600.0
MARK = "\n[... layover: %d characters omitted ...]\n"
# Characters of list_directory's entries or search_files' matches in one
# structuredContent (each entry's strings and ~40 of JSON around them): 1,000
# entries of long paths, or forged ones (_mcp_reply.py), were 44 MB.
LIST_BUDGET = TEXT_CAP


class ToolFail(Exception):
    """A failure the agent can act on: an isError result."""


class BadArgs(ToolFail):
    pass


def clip(text: str, cap: int = TEXT_CAP) -> Tuple[str, bool]:
    if len(text) <= cap:
        return text, False
    head = text[:cap * 2 // 3]
    tail = text[len(text) - (cap - len(head)):]
    return head + MARK % (len(text) - len(head) - len(tail)) + tail, True


# --- argument checks (the schemas are flat: strings, numbers, booleans) ---

def _arg(args: Dict[str, Any], name: str, kind: type, default: Any = None, required: bool = False,
         nul_ok: bool = False) -> Any:
    """args[name] checked against the flat schema; a string that becomes a
    path, an argv word or a label (every one but a file's content, stdin,
    old/new_string and a pattern: nul_ok) must hold no NUL, which none can
    (found by the attack pass of 27 Nov: diff's paths and checkpoint's label
    failed as "internal error (ValueError)", write_file's path as "bad
    arguments: embedded null byte" and still ended a step)."""
    v = args.get(name)
    if v is None:
        if required:
            raise BadArgs("missing argument %r" % name)
        return default
    if kind is float:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    elif kind is int:
        ok = isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v.is_integer()
    else:
        ok = isinstance(v, kind)
    if not ok:
        raise BadArgs("argument %r must be %s" % (name, {str: "a string", float: "a number", int: "an integer",
                                                          bool: "true or false", list: "an array"}[kind]))
    if kind is str and not nul_ok and "\0" in v:
        raise BadArgs("argument %r holds a NUL byte (\\u0000), which no path, command or label can hold" % name)
    return int(v) if kind is int else v


def _range(name: str, v: float, lo: float, hi: float) -> float:
    if not lo <= v <= hi:
        raise BadArgs("argument %r must be between %g and %g, not %g" % (name, lo, hi, v))
    return v


# --- the tools ---

Result = Tuple[str, Optional[Dict[str, Any]], bool]  # text, structuredContent, isError


def _cmd_text(r: Dict[str, Any]) -> str:
    parts = []
    if r.get("stdout"):
        parts.append(r["stdout"].rstrip("\n"))
    if r.get("stderr"):
        parts.append("[stderr]\n" + r["stderr"].rstrip("\n"))
    return "\n".join(parts)


# Terminal escape sequences (colour, cursor moves, titles: CSI, OSC, and the
# two-byte ESC ones) a command writes when a tool forces colour (pytest
# --color=yes, FORCE_COLOR, CLICOLOR_FORCE): noise and tokens to a model, and
# an ESC the model echoes into a file is a bug it cannot see. Cut from the
# output of run_command, read_output and kill_command (newuser12).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()*+][0-~]|\x1b[ -~]?")


def _cmd(r: Dict[str, Any], keys: Tuple[str, ...]) -> Dict[str, Any]:
    out = {k: r.get(k) for k in keys}
    for k in ("stdout", "stderr"):
        if isinstance(out.get(k), str) and "\x1b" in out[k]:
            out[k] = r[k] = _ESCAPES.sub("", out[k])
    return out


def _signal(r: Dict[str, Any]) -> Optional[str]:
    """The signal that ended the command ("SIGKILL"), as the agent names it;
    None for an exit of its own (a forged value that is no name is dropped)."""
    sig = r.get("signal")
    return sig if isinstance(sig, str) and re.fullmatch(r"SIG[A-Z0-9+-]{1,12}|signal [0-9]{1,3}", sig) else None


def _ended(r: Dict[str, Any]) -> str:
    """How a command ended, for the text: its exit code, and the signal that
    killed it (exit code 137 alone read as a code the command chose)."""
    sig = _signal(r)
    return "exit code %s%s" % (r.get("exit_code"), ": killed by %s" % sig if sig else "")


def run_command(ctx: Any, a: Dict[str, Any]) -> Result:
    timeout = _range("timeout", _arg(a, "timeout", float, DEFAULT_TIMEOUT), 0.001, MAX_TIMEOUT)
    r = ctx.agent("exec", {"command": _arg(a, "command", str, required=True), "cwd": _arg(a, "cwd", str),
                           "stdin": _arg(a, "stdin", str, nul_ok=True), "timeout": timeout, "cap": OUTPUT_CAP})
    r["signal"] = _signal(r)
    s = _cmd(r, ("exit_code", "signal", "stdout", "stderr", "timed_out", "truncated"))
    text = _cmd_text(r)
    if r.get("timed_out"):
        text += ("\n[timed out after %g s: its process group was killed; pass a larger timeout (seconds, at most "
                 "%d), or start_command for a server or a long job]" % (timeout, MAX_TIMEOUT))
    else:
        text += "\n[%s]" % _ended(r)
    return text.lstrip("\n"), s, bool(r.get("timed_out") or r.get("exit_code"))


def start_command(ctx: Any, a: Dict[str, Any]) -> Result:
    r = ctx.agent("start", {"command": _arg(a, "command", str, required=True), "cwd": _arg(a, "cwd", str),
                            "cap": OUTPUT_CAP})
    return "started %s (pid %s inside the sandbox)" % (r["job_id"], r.get("pid")), {"job_id": r["job_id"]}, False


def _job(r: Dict[str, Any], keys: Tuple[str, ...] = ()) -> Result:
    r["signal"] = _signal(r)
    s = _cmd(r, ("job_id", "exit_code", "signal", "stdout", "stderr", "running", "truncated") + keys)
    if r.get("running"):
        state = "running"
    elif r.get("killed") is True and r["signal"]:  # kill_command's own kill, not an exit code it chose
        state = "killed by kill_command (%s, exit code %s)" % (r["signal"], r.get("exit_code"))
    elif r["signal"]:
        state = "killed by %s (exit code %s)" % (r["signal"], r.get("exit_code"))
    else:
        state = "exited with %s" % r.get("exit_code")
    return (_cmd_text(r) + "\n[%s %s]" % (r.get("job_id"), state)).lstrip("\n"), s, False


def read_output(ctx: Any, a: Dict[str, Any]) -> Result:
    wait = _range("wait", _arg(a, "wait", float, 0.0), 0.0, 60.0)
    return _job(ctx.agent("read", {"job_id": _arg(a, "job_id", str, required=True), "wait": wait,
                                   "cap": OUTPUT_CAP}))


def kill_command(ctx: Any, a: Dict[str, Any]) -> Result:
    r = ctx.agent("kill", {"job_id": _arg(a, "job_id", str, required=True)})
    r["killed"] = r.get("killed") is True
    return _job(r, ("killed",))


def _at_least(name: str, v: int, lo: int, what: str) -> int:
    if v < lo:
        raise BadArgs("argument %r must be %d or more (%s), not %d" % (name, lo, what, v))
    return v


def _file_path(a: Dict[str, Any]) -> str:
    """The `path` of read_file, write_file, edit_file: an empty one (a model's
    unfilled template) was taken as the target's root, "write_file: . is a
    directory; use list_directory", which names neither the argument nor the fix."""
    path = _arg(a, "path", str, required=True)
    if not path:
        raise BadArgs("argument 'path' is empty: name a file, relative to the target or absolute")
    return path


def read_file(ctx: Any, a: Dict[str, Any]) -> Result:
    # Refused, not bent to 1 and 2000: a 0 or -5 was a mistake the agent should see.
    offset = _at_least("offset", _arg(a, "offset", int, 1), 1, "the first line to read; lines count from 1")
    limit = _at_least("limit", _arg(a, "limit", int, 2000), 1, "how many lines to read; default 2000")
    r = ctx.agent("read_file", {"path": _file_path(a), "offset": offset, "limit": limit})
    s = _cmd(r, ("path", "content", "start_line", "end_line", "size", "truncated", "next_offset"))
    text = r["content"]
    if not text:
        count = r.get("lines")
        text = "(%s is empty)" % r["path"] if r["size"] == 0 else "(no lines from %d on%s)" % (
            offset, ": %s has %d line%s" % (r["path"], count, "" if count == 1 else "s")
            if isinstance(count, int) else "")
    if r.get("next_offset"):
        text += "\n[... more lines follow: read_file with offset=%d]" % r["next_offset"]
    return text, s, False


def write_file(ctx: Any, a: Dict[str, Any]) -> Result:
    r = ctx.agent("write_file", {"path": _file_path(a),
                                 "content": _arg(a, "content", str, required=True, nul_ok=True)})
    s = _cmd(r, ("path", "bytes_written", "created"))
    return "wrote %d bytes to %s%s" % (r["bytes_written"], r["path"], " (new file)" if r["created"] else ""), s, False


def edit_file(ctx: Any, a: Dict[str, Any]) -> Result:
    r = ctx.agent("edit_file", {"path": _file_path(a),
                                "old_string": _arg(a, "old_string", str, required=True, nul_ok=True),
                                "new_string": _arg(a, "new_string", str, required=True, nul_ok=True),
                                "replace_all": _arg(a, "replace_all", bool, False)})
    n = r["replacements"]
    return "replaced %d occurrence%s in %s" % (n, "" if n == 1 else "s", r["path"]), _cmd(
        r, ("path", "replacements")), False


def _within(items: List[Any], size: Callable[[Any], int]) -> Tuple[List[Any], int]:
    """(the first items whose sizes add up to LIST_BUDGET at most, how many
    were left out)."""
    total = 0
    for i, x in enumerate(items):
        total += size(x)
        if total > LIST_BUDGET:
            return items[:i], len(items) - i
    return items, 0


def _left_out(n: int, what: str, fix: str) -> str:
    return "[... %d more %s left out: the reply passed %d characters; %s]" % (n, what, LIST_BUDGET, fix)


def list_directory(ctx: Any, a: Dict[str, Any]) -> Result:
    depth = int(_range("depth", _arg(a, "depth", int, 1), 1, 5))
    r = ctx.agent("list", {"path": _arg(a, "path", str, "."), "depth": depth, "cap": 1000})
    entries = [{"path": e["path"], "type": e["type"], "size": e["size"]} for e in r["entries"]]
    entries, cut = _within(entries, lambda e: 40 + sum(len(str(v)) for v in e.values()))
    # A name's controls as escapes: "x\nD  README.md" forged an entry's line (attack36).
    lines = [_inert("%-7s %10s  %s%s" % (e["type"], e["size"] if e["type"] != "dir" else "-", e["path"],
                                             "/" if e["type"] == "dir" else ""), keep="") for e in entries]
    if cut:
        lines.append(_left_out(cut, "entries", "list a subdirectory, or lower depth"))
    elif r["truncated"]:
        lines.append("[... capped at 1000 entries: list a subdirectory, or lower depth]")
    text, _ = clip("\n".join(lines) or "(%s is empty)" % _inert(r["path"], keep=""))
    return text, {"path": r["path"], "entries": entries, "truncated": bool(r["truncated"] or cut)}, False


def search_files(ctx: Any, a: Dict[str, Any]) -> Result:
    timeout = _range("timeout", _arg(a, "timeout", float, SEARCH_TIMEOUT), 0.001, MAX_SEARCH_TIMEOUT)
    r = ctx.agent("search", {"pattern": _arg(a, "pattern", str, required=True, nul_ok=True),
                             "path": _arg(a, "path", str), "glob": _arg(a, "glob", str), "cap": 500,
                             "timeout": timeout})
    matches, cut = _within(r["matches"], lambda m: 4 + len(str(m)))
    # Each match's controls (its file's name's, its line's) as escapes, tabs kept (attack36).
    text, clipped = clip("\n".join(_inert(m, keep="\t") for m in matches)
                         or "no matches (%d files searched)" % r["files_searched"])
    if cut:
        text += "\n" + _left_out(cut, "matches", "narrow the pattern, path or glob")
    elif r["truncated"]:
        text += "\n[... capped at 500 matches: narrow the pattern, path or glob]"
    return text, {"matches": matches, "files_searched": r["files_searched"],
                  "truncated": bool(r["truncated"] or clipped or cut)}, False


def checkpoint(ctx: Any, a: Dict[str, Any]) -> Result:
    label = _arg(a, "label", str, "")
    ctx.sandbox.ensure()
    args = ["checkpoint", ctx.sandbox.name, "--json"] + (["-m", label] if label else [])
    r = ctx.helper.run(args, ok=(0, 1))
    if r.returncode != 0:
        msg = r.stderr.decode("utf-8", "replace").strip() or "layover checkpoint failed"
        return msg, None, True
    data = json.loads(r.stdout.decode("utf-8", "replace"))
    step = data.get("step") if isinstance(data, dict) else None
    step = step if type(step) is int else 0
    text = "step %d" % step if step else "no changes since the last step: no step made"
    return text, {"step": step, "label": label}, False


def log_steps(ctx: Any, a: Dict[str, Any]) -> Result:
    ctx.sandbox.ensure()
    name = ctx.sandbox.name
    text = ctx.helper.run(["log", name]).stdout.decode("utf-8", "replace")
    data = json.loads(ctx.helper.run(["log", name, "--json"]).stdout.decode("utf-8", "replace"))
    rows = data.get("steps", []) if isinstance(data, dict) else []
    out = [{"step": r["step"] if type(r.get("step")) is int else 0, "label": str(r.get("label", "")),
            "added": int(r.get("added", 0)), "modified": int(r.get("modified", 0)),
            "deleted": int(r.get("deleted", 0))} for r in rows if isinstance(r, dict)]
    body, _ = clip(text.rstrip("\n"), 20000)
    return body, {"steps": out}, False


def rollback(ctx: Any, a: Dict[str, Any]) -> Result:
    step = _arg(a, "step", int, required=True)
    if step < 0:
        raise BadArgs("argument 'step' must be 0 or a step number (see the log tool)")
    if ctx.sandbox.on_exit != "keep":
        return "rollback needs a kept session (layover mcp --on-exit keep)", None, True
    # In place (the running sandbox's supervisor remounts its view, docs/history.md) unless a
    # command still writes or sits in the target: then every command is stopped first.
    r = ctx.helper.run(["rollback", ctx.sandbox.name, str(step)], ok=(0, 1))
    busy = r.returncode != 0 and any(m in r.stderr for m in (b" writes to it: ", b" would stay on the frozen view: "))
    if busy:
        ctx.sandbox.stop()
        r = ctx.helper.run(["rollback", ctx.sandbox.name, str(step)], ok=(0, 1))
    ctx.sandbox.ensure()
    if r.returncode != 0:
        # The agent's way to list the steps is its log tool, not the CLI the helper names.
        why = r.stderr.decode("utf-8", "replace").strip().replace("see 'layover log'", "see the log tool")
        return why or "layover rollback failed", None, True
    how = "every command was stopped and the sandbox started again" if busy else "the sandbox goes on"
    return "rolled back to step %d; %s" % (step, how), {"step": step}, False
