"""The schemas of the tools `layover mcp` serves (docs/mcp.md): their
input and output shapes, annotations and descriptions, and the check that
refuses an argument a tool does not take. What each tool does is in
_mcp_tools.py.
"""
from __future__ import annotations

import difflib
from typing import Any, Dict, List, Tuple

from ._mcp_tools import OUTPUT_CAP, BadArgs


# --- schemas ---

def _obj(props: Dict[str, Any], required: List[str] = ()) -> Dict[str, Any]:  # type: ignore[assignment]
    return {"type": "object", "properties": props, "required": list(required)}


S = {"type": "string"}
I = {"type": "integer"}
B = {"type": "boolean"}
NI = {"type": ["integer", "null"]}
NS = {"type": ["string", "null"]}
CMD_OUT = {"exit_code": NI, "signal": NS, "stdout": S, "stderr": S, "timed_out": B, "truncated": B}
CHANGE = _obj({"kind": S, "path": S, "type": {"type": ["string", "null"]}, "size": NI,
               "risks": {"type": "array", "items": S}})
REJECTION = _obj({"seq": I, "path": S, "hunk": I, "reason": S, "state": S, "time": S},
                 ["seq", "path", "hunk", "reason", "state"])


def _ann(title: str, read_only: bool, destructive: bool = False, idempotent: bool = False,
         open_world: bool = False) -> Dict[str, Any]:
    a: Dict[str, Any] = {"title": title, "readOnlyHint": read_only, "openWorldHint": open_world}
    if not read_only:
        a["destructiveHint"] = destructive
        a["idempotentHint"] = idempotent
    return a


def tool_list(network: str) -> List[Dict[str, Any]]:
    """The tools, with annotations true for this server's options. Each
    inputSchema says "additionalProperties": false, as check_known_args
    enforces (a mistyped argument is refused, never ignored)."""
    tools = _tools(network)
    for t in tools:
        t["inputSchema"]["additionalProperties"] = False
    return tools


def _tools(network: str) -> List[Dict[str, Any]]:
    net = network == "host"  # only then can a command reach the outside world
    where = ("Runs inside the layover sandbox over the target tree: writes land in the sandbox's session, "
             "never in the real tree, until a person applies them.")
    # Without --network host a download fails as "Could not resolve host" or a
    # timeout the model retried or worked around (newuser12): say so up front.
    offline = "" if net else (" No network beyond the sandbox's own loopback (the server's --network %s): "
                              "downloads (pip, npm, git clone, curl) fail; localhost works." % network)
    # An agent wrote a file, then called checkpoint to label it, and got "no
    # step made" (newuser15): say that these calls end a step themselves.
    step = " The call ends a step of the session (the log tool lists them; rollback returns to one)."
    # Each argument says what it is (newuser15): only a type left the model to guess a default or a base.
    cmd, cwd = dict(S, description="shell command line"), dict(
        S, description="working directory (default: the target's root, or the server's --cwd)")
    path = dict(S, description="a path relative to the target, or absolute inside the sandbox")
    job = dict(S, description="the job_id start_command returned (job-1, ...)")
    return [
        {"name": "run_command", "title": "Run a shell command",
         "description": "Run a command with /bin/sh -c in the sandbox and wait for it (timeout in seconds, "
                        "default 120, max 3600; on timeout its process group is killed). Files persist "
                        "between calls. stdout and stderr are capped at %d characters each, 40000 together "
                        "(head and tail kept). %s%s%s" % (OUTPUT_CAP, where, step, offline),
         "inputSchema": _obj({"command": cmd, "cwd": cwd,
                              "timeout": {"type": "number", "description": "seconds (default 120, max 3600)"},
                              "stdin": dict(S, description="text given on standard input")}, ["command"]),
         "outputSchema": _obj(CMD_OUT, ["exit_code", "stdout", "stderr", "timed_out", "truncated"]),
         "annotations": _ann("Run a shell command", False, True, False, net)},
        {"name": "start_command", "title": "Start a background command",
         "description": "Start a command with /bin/sh -c in the sandbox and return a job_id at once: for "
                        "servers, watchers and long builds. Read its output with read_output, stop it with "
                        "kill_command. " + where + offline,
         "inputSchema": _obj({"command": cmd, "cwd": cwd}, ["command"]),
         "outputSchema": _obj({"job_id": S}, ["job_id"]),
         "annotations": _ann("Start a background command", False, True, False, net)},
        {"name": "read_output", "title": "Read a job's output",
         "description": "New stdout/stderr of a start_command job since the last read (capped), whether it "
                        "still runs, and its exit code. wait: seconds to wait for new output (max 60).",
         "inputSchema": _obj({"job_id": job, "wait": {"type": "number", "description": "seconds to wait for new "
                                                                       "output (default 0, max 60)"}}, ["job_id"]),
         "outputSchema": _obj(dict(CMD_OUT, job_id=S, running=B),
                              ["job_id", "exit_code", "stdout", "stderr", "running", "truncated"]),
         "annotations": _ann("Read a job's output", True)},
        {"name": "kill_command", "title": "Kill a job",
         "description": "Kill a start_command job's whole process group; returns its last output and exit "
                        "code.",
         "inputSchema": _obj({"job_id": job}, ["job_id"]),
         "outputSchema": _obj(dict(CMD_OUT, job_id=S, running=B, killed=B),
                              ["job_id", "exit_code", "stdout", "stderr", "running", "truncated"]),
         "annotations": _ann("Kill a job", False, True, True)},
        {"name": "read_file", "title": "Read a file",
         "description": "Read a text file with line numbers. Paths are relative to the target, or absolute "
                        "inside the sandbox. offset: first line (1-based), limit: lines (default 2000). Large "
                        "files come in pages (next_offset).",
         "inputSchema": _obj({"path": path, "offset": dict(I, description="first line, 1-based (default 1)"),
                              "limit": dict(I, description="lines to read (default 2000)")}, ["path"]),
         "outputSchema": _obj({"path": S, "content": S, "start_line": I, "end_line": I, "size": I,
                               "truncated": B, "next_offset": NI},
                              ["path", "content", "start_line", "end_line", "truncated"]),
         "annotations": _ann("Read a file", True)},
        {"name": "write_file", "title": "Write a file",
         "description": "Create or overwrite a file with the given content (parent dirs are created). " + where + step,
         "inputSchema": _obj({"path": path, "content": dict(S, description="the whole new content of the file")},
                             ["path", "content"]),
         "outputSchema": _obj({"path": S, "bytes_written": I, "created": B}, ["path", "bytes_written"]),
         "annotations": _ann("Write a file", False, True, True)},
        {"name": "edit_file", "title": "Edit a file",
         "description": "Replace old_string by new_string in a file. old_string must occur exactly once "
                        "unless replace_all is true; otherwise the error says how often it was found. " + where
                        + step,
         "inputSchema": _obj({"path": path, "old_string": dict(S, description="the exact text to replace"),
                              "new_string": dict(S, description="the text to put in its place"),
                              "replace_all": dict(B, description="replace every occurrence (default false)")},
                             ["path", "old_string", "new_string"]),
         "outputSchema": _obj({"path": S, "replacements": I}, ["path", "replacements"]),
         "annotations": _ann("Edit a file", False, True, False)},
        {"name": "list_directory", "title": "List a directory",
         "description": "Entries of a directory with type and size, depth levels down (default 1, max 5), "
                        "capped at 1000 entries.",
         "inputSchema": _obj({"path": dict(path, description="the directory (default: the target's root)"),
                              "depth": dict(I, description="levels to descend (default 1, max 5)")}),
         "outputSchema": _obj({"path": S, "entries": {"type": "array", "items": _obj(
             {"path": S, "type": S, "size": I})}, "truncated": B}, ["path", "entries", "truncated"]),
         "annotations": _ann("List a directory", True)},
        {"name": "search_files", "title": "Search file contents",
         "description": "Lines matching a regular expression (Python syntax) under path (default: the "
                        "target), as path:line:text; glob filters file names (e.g. *.py). Skips .git and "
                        "binary files; capped at 500 matches. timeout: seconds (default 30, max 600); a "
                        "search still running then is stopped, with an error.",
         "inputSchema": _obj({"pattern": dict(S, description="a Python regular expression"),
                              "path": dict(path, description="where to search (default: the target's root)"),
                              "glob": dict(S, description="file names to search, e.g. *.py (default: all)"),
                              "timeout": {"type": "number", "description": "seconds (default 30, max 600)"}},
                             ["pattern"]),
         "outputSchema": _obj({"matches": {"type": "array", "items": S}, "files_searched": I, "truncated": B},
                              ["matches", "truncated"]),
         "annotations": _ann("Search file contents", True)},
        {"name": "changes", "title": "Changes so far",
         "description": "What the session changed so far, as `layover status` shows it (kind, path, size), "
                        "how a person reviews and applies it, and the changes a person rejected, with why "
                        "(rejected: later applies skip them; superseded: you changed them since).",
         "inputSchema": _obj({}),
         "outputSchema": _obj({"session": S, "changes": {"type": "array", "items": CHANGE}, "count": I,
                               "truncated": B, "review": S, "rejected": {"type": "array", "items": REJECTION},
                               "notes": {"type": "array", "items": S}},
                              ["session", "changes", "count", "review"]),
         "annotations": _ann("Changes so far", True)},
        {"name": "checkpoint", "title": "End a step",
         "description": "Freeze the changes made since the last step as a numbered step of the session "
                        "(`layover log` lists them; a person can roll back to one); step 0: nothing to freeze. "
                        "run_command, write_file and edit_file each end a step of their own: this is for what a "
                        "start_command job wrote since, or a step deferred while a command was busy. Refused, "
                        "changing nothing, while a command still runs with a file open for writing or its cwd in "
                        "the target.",
         "inputSchema": _obj({"label": dict(S, description="what the step did, for `layover log`")}),
         "outputSchema": _obj({"step": I, "label": S}, ["step"]),
         "annotations": _ann("End a step", False)},
        {"name": "log", "title": "The session's steps",
         "description": "The session's steps, newest first (`layover log`): each step's number, label (the tool "
                        "call that made it) and counts of paths added, changed and deleted.",
         "inputSchema": _obj({}),
         "outputSchema": _obj({"steps": {"type": "array", "items": _obj(
             {"step": I, "label": S, "added": I, "modified": I, "deleted": I}, ["step", "label"])}}, ["steps"]),
         "annotations": _ann("The session's steps", True)},
        {"name": "rollback", "title": "Roll back to a step",
         "description": "Make the session's files what they were at the end of `step` (0: the real tree "
                        "alone); the later steps are set aside (a person can bring them back with "
                        "`layover rollback SESSION --undo`). In place when no command is busy; while one "
                        "still writes or runs in the target, every command is stopped first and the sandbox "
                        "starts fresh. Processes and their memory are never rolled back.",
         "inputSchema": _obj({"step": dict(I, description="the step to return to, as the log tool numbers them "
                                                          "(0: the real tree alone)")}, ["step"]),
         "outputSchema": _obj({"step": I}, ["step"]),
         "annotations": _ann("Roll back to a step", False, destructive=True)},
        {"name": "diff", "title": "Diff so far",
         "description": "The session's changes so far as a git-style diff (optionally only some paths), "
                        "capped.",
         "inputSchema": _obj({"paths": {"type": "array", "items": S, "description": "only these paths, relative "
                                        "to the target (default: every change)"}}),
         "outputSchema": _obj({"diff": S, "truncated": B, "notes": {"type": "array", "items": S}},
                              ["diff", "truncated"]),
         "annotations": _ann("Diff so far", True)},
        {"name": "review_feedback", "title": "Review feedback",
         "description": "The changes a person rejected since this tool's last call (all of them at the first "
                        "call), each with the path, the hunk (0: the whole change) and the reason: take the "
                        "change back or redo it another way.",
         "inputSchema": _obj({}),
         "outputSchema": _obj({"session": S, "rejections": {"type": "array", "items": REJECTION}},
                              ["session", "rejections"]),
         "annotations": _ann("Review feedback", True)},
    ]


_ARGS: Dict[str, Tuple[str, ...]] = {}


def check_known_args(name: str, args: Dict[str, Any]) -> None:
    """An argument the tool does not take is refused, naming it, the one it
    was likely meant to be, and the ones the tool takes: a mistyped optional
    one (`timout`) was ignored, the call run with its default, and a
    mistyped required one was reported as missing."""
    if not _ARGS:
        _ARGS.update((t["name"], tuple(t["inputSchema"]["properties"])) for t in tool_list("none"))
    takes = _ARGS.get(name, ())
    unknown = [k for k in args if k not in takes]
    if not unknown:
        return
    word = str(unknown[0])[:100]
    near = difflib.get_close_matches(word, takes, n=1, cutoff=0.6)
    raise BadArgs("unknown argument %r%s; %s takes %s" % (
        word, " (did you mean %r?)" % near[0] if near else "", name,
        ", ".join(takes) if takes else "no arguments"))
