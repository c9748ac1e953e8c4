"""layover: run Python code and commands over an overlay of a real tree,
then review, apply or discard what they changed.

    from layover import Sandbox
    with Sandbox(target="~/project") as sb:
        sb.run("open('notes.txt', 'w').write('hi')")
        print(sb.diff())
    sb.apply()

See docs/python.md.  Pure standard library; the work is done by the C++
helper (`layover`), found via $LAYOVER_BIN, `make install`, build/layover
in a source checkout, or $PATH.
"""
from __future__ import annotations

from .errors import (ConflictError, PatchError, SandboxError, StepDeferredWarning, TimeoutError, ToolError,
                     UnsupportedKernelError)
from .mixin import SandboxMixin
from .model import ApplyResult, Change, Conflict, ExecResult, Rejection, RunResult, SessionInfo, Step
from .review import apply_patch, list_sessions, review_on_exit, show_patch
from .sandbox import Sandbox

from ._version import __version__

__all__ = [
    "Sandbox",
    "SandboxMixin",
    "apply_patch",
    "show_patch",
    "list_sessions",
    "review_on_exit",
    "RunResult",
    "ExecResult",
    "Change",
    "Conflict",
    "ApplyResult",
    "SessionInfo",
    "Step",
    "Rejection",
    "SandboxError",
    "UnsupportedKernelError",
    "ConflictError",
    "PatchError",
    "TimeoutError",
    "ToolError",
    "StepDeferredWarning",
]
