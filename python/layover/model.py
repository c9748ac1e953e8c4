"""Result and record types, and their defensive parsers.

The helper's JSON describes paths a sandboxed program chose, so every field
is type-checked here; a malformed record raises PatchError/SandboxError
instead of leaking odd types into callers.
"""
from __future__ import annotations

import base64
import binascii
import math
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type, TypeVar, Union

from .errors import PatchError, SandboxError

__all__ = ["RunResult", "ExecResult", "Change", "Conflict", "ApplyResult", "SessionInfo", "Step", "Rejection"]

KINDS = ("added", "modified", "deleted", "type_changed", "metadata", "opaque_dir")
TYPES = ("file", "dir", "symlink", "fifo", "socket", "whiteout", "opaque_dir", "hardlink", "none", "other")


@dataclass
class RunResult:
    """What one ``Sandbox.run(code)`` produced."""

    stdout: str
    stderr: str
    error: Optional[str]          # formatted traceback, or None
    value: Optional[str] = None   # repr() of the final expression (interactive: the last echoed one)
    interrupted: bool = False     # stopped by interrupt()/Ctrl+C

    @property
    def ok(self) -> bool:
        return self.error is None

    def check(self) -> "RunResult":
        """Raise SandboxError with the traceback when the code raised."""
        if self.error is not None:
            raise SandboxError("code in the sandbox raised:\n" + self.error)
        return self


class ExecResult(subprocess.CompletedProcess):  # type: ignore[type-arg]
    """``Sandbox.exec`` result: a subprocess.CompletedProcess (args,
    returncode, stdout, stderr; check_returncode())."""


@dataclass(frozen=True)
class Change:
    """One entry of ``layover status --json`` / ``layover show --json``."""

    path: str                      # relative to the target: os.fsdecode of the exact bytes
    kind: str                      # added|modified|deleted|type_changed|metadata|opaque_dir
    type: Optional[str] = None     # file|dir|symlink|fifo|socket; None when deleted
    size: int = 0
    mode: Optional[int] = None
    old_type: Optional[str] = None
    old_mode: Optional[int] = None
    link_target: Optional[str] = None  # os.fsdecode of the exact bytes
    captured: bool = True          # False for sockets (tar cannot hold them)
    raw_path: bytes = b""          # exact bytes of the path (os.fsencode(path) gives them too)
    raw_link_target: Optional[bytes] = None
    ignored: bool = False          # matched an ignore rule (listed with include_ignored)
    risks: Tuple[str, ...] = ()    # why a person should look twice (docs/review.md); () when none

    @property
    def fspath(self) -> str:
        """The path as the os module wants it: the same as ``path``."""
        return os.fsdecode(self.raw_path) if self.raw_path else self.path


@dataclass(frozen=True)
class Conflict:
    path: str
    reason: str
    forceable: bool = True  # force=True overrides it (not a parent dir gone, nor a file taken by hunk that changed)


@dataclass(frozen=True)
class ApplyResult:
    applied: List[str]
    undo_path: Optional[str]       # the undo record (`layover undo` restores the prior state)
    dry_run: bool = False
    skipped: List[str] = field(default_factory=list)   # left out by paths=/exclude=
    forced: List[str] = field(default_factory=list)    # conflicts overwritten with force=True
    running: bool = False          # a dry run of a session still running: its changes so far
    already: List[str] = field(default_factory=list)   # already on the target as the patch makes them: left as they are


@dataclass(frozen=True)
class SessionInfo:
    """One entry of ``layover sessions --json``."""

    name: str
    target: str
    status: str                    # the state below, or "trash" for `sessions --trash`
    created: str = ""
    # The live upper layer's disk use only: 0 once a checkpoint, a steps=True call or a resume (start()
    # after close()) froze the changes as steps, though the session has files; `bytes` counts them all.
    upper_bytes: int = 0
    command: List[str] = field(default_factory=list)
    pid: Optional[int] = None
    age_days: int = 0
    state: str = ""                # running|kept|crashed|applied|saved|empty (also for trash entries)
    label: Optional[str] = None    # what was started, when not the command ("python: Sandbox('~/proj')")
    changes: int = -1              # -1: unknown
    applied: Optional[str] = None  # when the whole session was applied (UTC), with its undo record
    undo: Optional[str] = None
    saved: Optional[str] = None    # the file a save wrote
    # False: `changes` is not the recorded count but the live layer's entries
    # (a running or crashed session: `layover sessions` shows it as ~N).
    changes_exact: bool = False
    bytes: int = 0                 # all of the session's layers: the live upper, its steps, what a rollback set aside
    steps: int = 0                 # frozen steps (log()); -1 when its steps dir holds what layover did not write

    def __repr__(self) -> str:
        # A Python or MCP session's command is its whole bootstrap program:
        # its label says what was started, so the repr leaves the program out.
        shown = ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__dataclass_fields__
                          if not (k == "command" and self.label))
        return "SessionInfo(%s)" % shown


@dataclass(frozen=True)
class Step:
    """One entry of ``layover log --json`` (docs/history.md): a frozen step of
    the session, or its live changes (``step`` None)."""

    step: Optional[int]
    label: str = ""
    start: str = ""
    end: str = ""
    live: bool = False
    added: int = 0
    modified: int = 0
    deleted: int = 0
    bytes: int = 0
    paths: List[Tuple[str, str]] = field(default_factory=list)  # (path, kind: A|M|D|T|mode)


@dataclass(frozen=True)
class Rejection:
    """One entry of ``layover rejections --json`` (docs/review.md,
    "Rejections"): a change, or one hunk of it, a person rejected."""

    seq: int                       # 1, 2, ...: increases with every rejection of the session
    path: str                      # relative to the target: os.fsdecode of the exact bytes
    hunk: int = 0                  # 0: the whole change; else its hunk number when rejected
    reason: str = ""               # one line, possibly empty
    time: str = ""                 # UTC, RFC 3339
    state: str = "rejected"        # rejected (apply skips it) | superseded (changed since: reviewed anew)
    hunk_now: int = 0              # a hunk in force: its number in today's diff
    why: str = ""                  # superseded: why


# --- parsing ---

T = TypeVar("T")
_MISSING = object()


def _get(obj: Dict[str, Any], key: str, kinds: Union[Type[Any], Sequence[Type[Any]]], default: Any = _MISSING,
         what: str = "record") -> Any:
    value = obj.get(key, _MISSING)
    if value is _MISSING or value is None:
        if default is _MISSING:
            raise PatchError("layover: helper returned a %s without %r; is the helper the same version?"
                             % (what, key))
        return default
    kinds_t = tuple(kinds) if isinstance(kinds, (list, tuple)) else (kinds,)
    if isinstance(value, bool) and bool not in kinds_t:
        raise PatchError("layover: helper returned a %s with a bad %r" % (what, key))
    if not isinstance(value, kinds_t) or isinstance(value, float) and not math.isfinite(value):
        # NaN and 1e400 (inf) parse as floats: int() of one raised OverflowError or ValueError
        raise PatchError("layover: helper returned a %s with a bad %r" % (what, key))
    return value


def _b64(obj: Dict[str, Any], key: str) -> Optional[bytes]:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise PatchError("layover: helper returned a bad %r" % key)
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as e:
        raise PatchError("layover: helper returned a bad %r: %s" % (key, e)) from None


def raw_path(obj: Dict[str, Any]) -> bytes:
    """The exact bytes of an object's "path" (its "path_b64" when not UTF-8)."""
    raw = _b64(obj, "path_b64")
    return raw if raw is not None else obj["path"].encode("utf-8", "surrogateescape")


def _risks(obj: Dict[str, Any]) -> Tuple[str, ...]:
    value = _get(obj, "risks", list, [], "change")
    if not all(isinstance(r, str) for r in value):
        raise PatchError("layover: helper returned a change with a bad 'risks'")
    return tuple(value)


def parse_change(obj: Any) -> Change:
    if not isinstance(obj, dict):
        raise PatchError("layover: helper returned a change that is not an object")
    # Names as str via os.fsdecode (surrogateescape), as os.listdir gives
    # them: a name that is not UTF-8 round-trips through os.fsencode, never
    # the display form with its escapes.
    _get(obj, "path", str, what="change")
    raw = raw_path(obj)
    shown_link = _get(obj, "link_target", str, None, "change")
    raw_link = _b64(obj, "link_target_b64")
    if raw_link is None and shown_link is not None:
        raw_link = shown_link.encode("utf-8", "surrogateescape")
    return Change(
        path=os.fsdecode(raw),
        kind=_get(obj, "kind", str, what="change"),
        type=_get(obj, "type", str, None, "change"),
        size=_get(obj, "size", int, 0, "change"),
        mode=_get(obj, "mode", int, None, "change"),
        old_type=_get(obj, "old_type", str, None, "change"),
        old_mode=_get(obj, "old_mode", int, None, "change"),
        link_target=os.fsdecode(raw_link) if raw_link is not None else None,
        captured=_get(obj, "captured", bool, True, "change"),
        ignored=_get(obj, "ignored", bool, False, "change"),
        risks=_risks(obj),
        raw_path=raw,
        raw_link_target=raw_link,
    )


def parse_list(obj: Any, parse: Callable[[Any], T], what: str) -> List[T]:
    if not isinstance(obj, list):
        raise PatchError("layover: helper returned %s that is not a JSON array" % what)
    return [parse(x) for x in obj]


def parse_conflict(obj: Any) -> Conflict:
    if not isinstance(obj, dict):
        raise PatchError("layover: helper returned a conflict that is not an object")
    _get(obj, "path", str, what="conflict")
    return Conflict(path=os.fsdecode(raw_path(obj)),
                    reason=_get(obj, "reason", str, "", "conflict"),
                    forceable=obj.get("forceable") is not False)


def parse_session(obj: Any) -> SessionInfo:
    if not isinstance(obj, dict):
        raise SandboxError("layover: helper returned a session that is not an object")
    cmd = obj.get("command")
    if isinstance(cmd, str):
        cmd = [cmd]
    if not isinstance(cmd, list) or not all(isinstance(c, str) for c in cmd):
        cmd = []
    pid = obj.get("pid")
    return SessionInfo(
        name=_get(obj, "name", str, what="session"),
        target=_get(obj, "target", str, "", "session"),
        status=_get(obj, "status", str, "", "session"),
        created=_get(obj, "created", (str, int, float), "", "session").__str__(),
        upper_bytes=_get(obj, "upper_bytes", int, 0, "session"),
        command=cmd,
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None,
        age_days=_get(obj, "age_days", (int, float), 0, "session").__int__(),
        state=_get(obj, "state", str, "", "session"),
        label=_opt_str(obj, "label"),
        changes=_get(obj, "changes", int, -1, "session"),
        applied=_opt_str(obj, "applied"),
        undo=_opt_str(obj, "undo"),
        saved=_opt_str(obj, "saved"),
        changes_exact=obj.get("changes_exact") is True,
        bytes=_get(obj, "bytes", int, 0, "session"),
        steps=_get(obj, "steps", int, 0, "session"),
    )


def _opt_str(obj: Dict[str, Any], key: str) -> Optional[str]:
    v = obj.get(key)
    return v if isinstance(v, str) else None


def parse_rejection(obj: Any) -> Rejection:
    if not isinstance(obj, dict):
        raise PatchError("layover: helper returned a rejection that is not an object")
    _get(obj, "path", str, what="rejection")
    state = _get(obj, "state", str, what="rejection")
    if state not in ("rejected", "superseded"):
        raise PatchError("layover: helper returned a rejection with a bad 'state'")
    return Rejection(seq=_get(obj, "seq", int, what="rejection"), path=os.fsdecode(raw_path(obj)),
                     hunk=_get(obj, "hunk", int, 0, "rejection"), reason=_get(obj, "reason", str, "", "rejection"),
                     time=_get(obj, "time", str, "", "rejection"), state=state,
                     hunk_now=_get(obj, "hunk_now", int, 0, "rejection"), why=_get(obj, "why", str, "", "rejection"))


def parse_step(obj: Any) -> Step:
    if not isinstance(obj, dict):
        raise PatchError("layover: helper returned a step that is not an object")
    paths = _get(obj, "paths", list, [], "step")
    out: List[Tuple[str, str]] = []
    for p in paths:
        if not isinstance(p, dict):
            raise PatchError("layover: helper returned a step path that is not an object")
        _get(p, "path", str, what="step path")
        out.append((os.fsdecode(raw_path(p)), _get(p, "kind", str, what="step path")))
    return Step(step=_get(obj, "step", int, None, "step"), label=_get(obj, "label", str, "", "step"),
                start=_get(obj, "start", str, "", "step"), end=_get(obj, "end", str, "", "step"),
                live=_get(obj, "live", bool, False, "step"), added=_get(obj, "added", int, 0, "step"),
                modified=_get(obj, "modified", int, 0, "step"), deleted=_get(obj, "deleted", int, 0, "step"),
                bytes=_get(obj, "bytes", int, 0, "step"), paths=out)
