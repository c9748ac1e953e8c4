"""Review without a REPL: apply/show patches, list sessions, the exit prompt.

All of it runs the helper (`layover apply|show|sessions|on-exit`); nothing
here reads patches or upper layers itself.
"""
from __future__ import annotations

import json
import os
import subprocess
import warnings
from typing import Any, Dict, Iterable, List, Optional, Tuple

from ._args import path_arg
from ._helper import SESSION_CWD, Helper, StrPath, error_for, literal_path, one_line
from .errors import ConflictError, PatchError, SandboxError, os_reason
from .model import (ApplyResult, Change, Conflict, SessionInfo, parse_change, parse_conflict, parse_list,
                    parse_session, raw_path)

try:  # typing.Protocol is 3.8+; a plain base class serves where it is missing
    from typing import Protocol
except ImportError:  # pragma: no cover
    Protocol = object  # type: ignore[assignment,misc]


class Stoppable(Protocol):
    """What review_on_exit needs of a sandbox (a Sandbox is one): stop it,
    then name its session and the helper to run.  Typed against this, not
    against Sandbox, so review.py never imports sandbox.py."""

    name: str
    helper: Helper

    def close(self) -> Optional[int]: ...


__all__ = ["apply_patch", "show_patch", "list_sessions", "review_on_exit", "apply_session", "apply_lists"]


def _json(stdout: bytes, what: str) -> Any:
    try:
        return json.loads(stdout.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        raise PatchError("layover: '%s' printed invalid JSON (%s)" % (what, type(e).__name__)) from None


def one_word_refused(name: str, value: Any, what: str = "paths") -> None:
    """paths= and exclude= take lists: a bare str (or Path) was iterated
    character by character, so apply(paths="notes.txt") applied nothing and
    warned that 't', 'o', ... match no change."""
    if isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s takes a list of %s, e.g. %s=[%r]" % (name, what, name, os.fsdecode(value)))
    if value is not None and not isinstance(value, Iterable):  # paths=5: not "'int' object is not iterable"
        raise TypeError("%s takes a list of %s, not %s %r" % (name, what, type(value).__name__, value))


def apply_lists(paths: Optional[Iterable[StrPath]], exclude: Iterable[str]) -> Tuple[Optional[List[str]], List[str]]:
    """apply()'s paths= and exclude=, checked (TypeErrors naming them) and
    made lists: Sandbox.apply() checks them before it stops the sandbox."""
    one_word_refused("paths", paths)
    one_word_refused("exclude", exclude, "globs")
    for g in exclude:
        if not isinstance(g, str):
            raise TypeError("exclude takes globs (str), e.g. exclude=['*.log'], not %s %r" % (type(g).__name__, g))
    return None if paths is None else [path_arg("paths", p) for p in paths], list(exclude)


def apply_session(helper: Helper, what: StrPath, *, paths: Optional[Iterable[StrPath]] = None,
                  force: bool = False, exclude: Iterable[str] = (), target: Optional[StrPath] = None,
                  dry_run: bool = False, undo_to: Optional[StrPath] = None) -> ApplyResult:
    """`layover apply WHAT --yes --json ...` (WHAT: a session name or a patch)."""
    paths, exclude = apply_lists(paths, exclude)
    args: List[StrPath] = ["apply", what, "--yes", "--json"]
    if force:
        args.append("--force")
    for p in paths or ():  # paths, never globs: a name the sandbox chose may look like one
        args += ["--only", literal_path(p)]
    for g in exclude:
        args += ["--exclude", g]
    for flag, value in (("--target", target), ("--undo-to", undo_to)):
        if value is not None:  # "~/project" too
            args += [flag, os.path.abspath(os.path.expanduser(path_arg(flag[2:].replace("-", "_"), value)))]
    if dry_run:
        args.append("--dry-run")
    r = helper.run(args, ok=(0, 1), cwd=SESSION_CWD)  # WHAT: a session's name, or an absolute path
    warn_unmatched(r.stderr or b"")
    message = one_line(r.stderr or b"", "layover apply failed with exit status %d" % r.returncode)
    if not r.stdout.strip():
        if r.returncode == 0:
            return ApplyResult(applied=[], undo_path=None, dry_run=dry_run)
        raise error_for(message, PatchError)
    data = _json(r.stdout, "layover apply --json")
    if not isinstance(data, dict):
        raise PatchError("layover: 'layover apply --json' printed something other than an object")
    conflicts = parse_list(data.get("conflicts") or [], parse_conflict, "conflicts")
    if conflicts:
        listing = "; ".join("%s (%s)" % (_shown(c.path), c.reason) for c in conflicts[:5])
        more = " and %d more" % (len(conflicts) - 5) if len(conflicts) > 5 else ""
        fix = _conflict_fix(conflicts, force)
        raise ConflictError("layover: apply: %d conflicting path(s), nothing written: %s%s; %s"
                            % (len(conflicts), listing, more, fix), conflicts)
    err = data.get("error")
    if err is not None or r.returncode != 0:
        raise PatchError(_python_words(message if message.startswith("layover: ") else
                                       err if isinstance(err, str) and err else message))
    undo = data.get("undo")
    return ApplyResult(applied=_paths(data, "applied"), undo_path=undo if isinstance(undo, str) else None,
                       dry_run=dry_run, skipped=_paths(data, "skipped"), forced=_paths(data, "forced"),
                       running=data.get("running") is True, already=_paths(data, "already"))


def _conflict_fix(conflicts: List[Conflict], force: bool) -> str:
    """The fix a ConflictError names: force=True only when it overrides
    every conflict (the helper's "forceable"); a hunk chosen on a file that
    changed, or a parent directory gone, it never does, and naming it sent
    the caller round in a circle."""
    hard = [c for c in conflicts if force or not c.forceable]
    if not hard:
        return "re-run with force=True to overwrite, or leave them out with paths=/exclude="
    if len(hard) == len(conflicts):
        which, only = "these", ""
    else:  # force=True would override the others, but the apply still fails on these
        which = ", ".join(_shown(c.path) for c in hard[:3])
        which += " and %d more" % (len(hard) - 3) if len(hard) > 3 else ""
        only = ", only the others"
    return ("force=True does not override %s (a parent directory gone or replaced, a hunk chosen on other "
            "content)%s: put back what they need, or leave them out with paths=/exclude=" % (which, only))


def _python_words(message: str) -> str:
    """The helper's apply error as a Python caller reads it: the fix names
    the argument they pass (target=), not the CLI's option."""
    return message.replace("pass --target DIR", "pass target=DIR")


def warn_unmatched(stderr: bytes, stacklevel: int = 4) -> None:
    """A path of paths= that selects no change (a typo, or a path relative to
    the current dir rather than the target) applies nothing: the helper names
    it on stderr (`'note.txt' matches no change ...`), which would otherwise be
    dropped, so apply(paths=["note.txt"]) returned applied=[] without a word.
    Each such line becomes a UserWarning (diff(paths=) too: newuser15)."""
    for line in stderr.decode("utf-8", "replace").splitlines():
        if " matches no change" in line:
            warnings.warn("".join(c if c.isprintable() else repr(c)[1:-1] for c in line), UserWarning,
                          stacklevel=stacklevel)


def _shown(path: str) -> str:
    """A path the sandbox chose, for a message a person reads (a traceback on
    a terminal): as it is when printable, else its repr (`'e\\x1b[2Jx'`),
    so an escape sequence or invisible character in it is never obeyed."""
    return path if path.isprintable() else repr(path)


def _paths(data: Dict[str, Any], key: str) -> List[str]:
    """A list of {"path", "path_b64"?} objects (docs/cli.md), as str paths:
    the exact bytes through os.fsdecode, so os.fsencode gives them back."""
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(p, dict) and isinstance(p.get("path"), str)
                                              for p in value):
        raise PatchError("layover: 'layover apply --json' printed a bad %r list" % key)
    return [os.fsdecode(raw_path(p)) for p in value]


def apply_patch(path: StrPath, target: Optional[StrPath] = None, *, paths: Optional[Iterable[StrPath]] = None,
                force: bool = False, exclude: Iterable[str] = (), dry_run: bool = False,
                undo_to: Optional[StrPath] = None, state_dir: Optional[StrPath] = None,
                binary: Optional[str] = None) -> ApplyResult:
    """Apply a saved patch file to `target` (default: the target recorded in
    the patch).  Raises ConflictError when the real tree changed."""
    paths, exclude = apply_lists(paths, exclude)
    path = os.path.expanduser(path_arg("path", path))
    if not os.path.isfile(path):
        raise PatchError("layover: patch %s: no such file; pass the path Sandbox.save() wrote" % os.fspath(path))
    return apply_session(Helper(binary, state_dir), os.path.abspath(os.fspath(path)), paths=paths, force=force,
                         exclude=exclude, target=target, dry_run=dry_run, undo_to=undo_to)


def show_patch(path: StrPath, *, binary: Optional[str] = None) -> List[Change]:
    """The changes a patch file holds (`layover show FILE --json`)."""
    r = Helper(binary).run(["show", os.path.expanduser(path_arg("path", path)), "--json"])
    return parse_list(_json(r.stdout, "layover show --json"), parse_change, "a patch summary")


def list_sessions(*, state_dir: Optional[StrPath] = None, binary: Optional[str] = None,
                  helper: Optional[Helper] = None) -> List[SessionInfo]:
    """`layover sessions --json`: every session with its status
    (running, kept or crashed)."""
    h = helper or Helper(binary, state_dir)
    r = h.run(["sessions", "--json"], error=SandboxError)
    return parse_list(_json(r.stdout, "layover sessions --json"), parse_session, "a session list")


def review_on_exit(sb: Stoppable) -> int:
    """Stop the sandbox and run the CLI's interactive exit review
    (`layover on-exit prompt SESSION`) on this terminal.  Returns its exit
    status: 0 done, 125 the chosen action failed (the session is kept)."""
    sb.close()
    try:
        r = subprocess.run(sb.helper.argv("on-exit", "prompt", sb.name), env=sb.helper.env)
    except OSError as e:
        raise SandboxError("layover: cannot run the review prompt: %s; set LAYOVER_BIN or reinstall"
                           % os_reason(e)) from None
    return r.returncode
