"""Exceptions.  Each carries the helper's one-line message where there is one
("layover: <what>: <why>; <fix>")."""
from __future__ import annotations

import builtins
from typing import Any, List, Optional

__all__ = [
    "SandboxError",
    "UnsupportedKernelError",
    "ConflictError",
    "PatchError",
    "TimeoutError",
    "ToolError",
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


class TimeoutError(SandboxError, builtins.TimeoutError):  # noqa: A001 - deliberate shadow
    """A run()/exec()/call timed out and was interrupted (the session lives
    on, unless ``stopped`` is true).  Like subprocess.TimeoutExpired, it
    carries what was produced until then."""

    def __init__(self, message: str, *, timeout: Optional[float] = None, stdout: object = None,
                 stderr: object = None, stopped: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout
        self.stdout = stdout
        self.stderr = stderr
        self.stopped = stopped


class ToolError(SandboxError):
    """A sandboxed tool (SandboxMixin) raised inside the sandbox; the message
    is the formatted traceback from inside."""
