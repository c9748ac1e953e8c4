"""Exceptions.  Each carries the helper's one-line message where there is one
("layover: <what>: <why>; <fix>")."""
from __future__ import annotations

import builtins
import errno
import subprocess
from typing import Any, Dict, List, Optional, Type

__all__ = [
    "SandboxError",
    "UnsupportedKernelError",
    "ConflictError",
    "PatchError",
    "TimeoutError",
    "ToolError",
    "StepDeferredWarning",
    "os_reason",
]


class SandboxError(Exception):
    """The helper or the REPL failed, or the sandbox is no longer usable."""


class UnsupportedKernelError(SandboxError):
    """The kernel lacks something layover needs (user namespaces, overlayfs
    with userxattr, ...).  `layover doctor` prints what and how to fix it."""


class PatchError(SandboxError):
    """A patch could not be read, saved, shown or applied."""


class ConflictError(PatchError):
    """apply found paths changed on the real filesystem since the sandbox
    read them; nothing was written.  ``conflicts`` lists them."""

    def __init__(self, message: str, conflicts: List[Any]) -> None:  # layover.Conflict items
        super().__init__(message)
        self.conflicts = conflicts


class TimeoutError(SandboxError, builtins.TimeoutError, subprocess.TimeoutExpired):  # noqa: A001
    """A run()/exec()/call timed out and was interrupted (the session lives
    on, unless ``stopped`` is true).  It is a subprocess.TimeoutExpired too,
    so code written for subprocess catches it unchanged: ``cmd`` (the argv
    of exec(), the code of run()), ``timeout``, ``output`` (alias
    ``stdout``) and ``stderr`` hold what was produced until then."""

    def __init__(self, message: str, *, timeout: Optional[float] = None, stdout: object = None,
                 stderr: object = None, stopped: bool = False, cmd: object = None) -> None:
        SandboxError.__init__(self, message)
        self.message = message
        self.cmd = cmd
        self.timeout = timeout  # type: ignore[assignment]
        self.output = stdout
        self.stderr = stderr
        self.stopped = stopped

    def __str__(self) -> str:  # the layover message, not TimeoutExpired's "Command ... timed out"
        return self.message


class ToolError(SandboxError):
    """A sandboxed tool (SandboxMixin) raised inside the sandbox; the message
    is the formatted traceback from inside, made inert (inert_text): a
    traceback is printed on the author's terminal, and code inside chose its
    text.  ``traceback`` holds it as it came."""

    def __init__(self, message: str, traceback: Optional[str] = None) -> None:
        super().__init__(inert_text(message))
        self.traceback = message if traceback is None else traceback


class StepDeferredWarning(UserWarning):
    """A steps=True Sandbox's run() or exec() could not end its step (a file
    still open for writing, a process with its cwd in the target, another
    thread's call running): the step is merged into the next one, whose
    label says so (docs/python.md). ``label`` is the deferred step's."""

    def __init__(self, message: str, label: str = "") -> None:
        super().__init__(message)
        self.label = label


def inert_text(text: str, keep: str = "\n\t") -> str:
    """Text from inside the sandbox, for a message a person reads: lines and
    tabs kept (the characters of `keep`), every other character that is not
    printable (ESC, C1, bidi and zero-width controls) written as its escape
    (\\x1b, \\u202e), so no escape sequence in it reaches the terminal."""
    return "".join(c if c.isprintable() or c in keep else
                   ("\\x%02x" % ord(c) if ord(c) < 0x100 else "\\u%04x" % ord(c) if ord(c) < 0x10000
                    else "\\U%08x" % ord(c)) for c in text)


def os_reason(e: OSError, with_path: bool = True) -> str:
    """An OSError said once: "PATH: STRERROR (ENAME)" (str() of an OSError
    starts with "[Errno N]", and wrapping it in a message that names the
    errno again repeats it)."""
    code = e.errno or 0
    text = "%s (%s)" % (e.strerror or "error", errno.errorcode.get(code, "errno %d" % code))
    if with_path and e.filename is not None:
        return "%s: %s" % (e.filename if isinstance(e.filename, str) else repr(e.filename), text)
    return text


_OS_CLASSES: Dict[Type[OSError], Type[OSError]] = {}

_FIXES = {
    errno.ENOENT: "check the path (the sandbox shows the target, and the host's system read-only)",
    errno.EACCES: "make it executable (chmod +x) or run it through its interpreter",
    errno.ENOEXEC: "it is not a program this system runs; run it through its interpreter",
    errno.ENOTDIR: "a component of the path is not a directory; check the path",
}


def sandbox_os_error(code: int, strerror: str, path: Optional[str], what: str) -> OSError:
    """The OSError of the errno's own class (FileNotFoundError,
    PermissionError...) for a failure inside the sandbox, also a
    SandboxError, whose text reads once: "layover: WHAT: PATH: STRERROR
    (ENAME); FIX"."""
    base = type(OSError(code, strerror))
    cls = _OS_CLASSES.get(base)
    if cls is None:
        cls = _OS_CLASSES[base] = type(base.__name__, (SandboxError, base),
                                       {"__str__": lambda self: self.message, "__module__": __name__})
    e = cls(code, strerror, path)
    fix = _FIXES.get(code, "check the command and its arguments")
    if code == errno.ENOENT and path and " " in path and "/" not in path:  # exec("ls -l"), as subprocess takes it
        fix = "a string is one program's name: pass a list (%r) or shell=True" % (path.split()[:4],)
    # Its text and path came from inside (the REPL's reply, which a process
    # there can forge): one inert line, as ToolError's (attack35).
    e.message = inert_text("layover: %s: %s; %s" % (what, os_reason(e), fix), keep="")  # type: ignore[attr-defined]
    return e
