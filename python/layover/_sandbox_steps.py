"""steps=True: a Sandbox ends a step of its session after each run() and
exec() (docs/python.md, docs/history.md). A step that cannot be made at
once is deferred, merged into the next one; when the checkpoint refused
(not when another thread's call was running), a StepDeferredWarning says
so to the caller (it was silent: only `layover log`, later, showed it)."""
from __future__ import annotations

import warnings
from typing import Any

from .errors import SandboxError, StepDeferredWarning

# The warning points at the caller's run()/exec(): it -> Sandbox.run -> Sandbox._step -> end_step -> _warn.
STACKLEVEL = 5


def end_step(sb: Any, label: str) -> None:
    """End a step of `sb` labelled `label`, or defer it: while another
    thread's run()/exec() writes (a checkpoint shows the overlay read-only
    for a moment), or while the checkpoint refuses (a file still open for
    writing, a process with its cwd in the target)."""
    # A NUL (in the code, or an argv word exec() refused) can reach no
    # argv: written as its escape, so the step is made and run()/exec()
    # return or raise what they did (a ValueError here had replaced it). A
    # lone surrogate (exec(["echo", "\ud800"])) neither: written as its
    # escape (its UnicodeEncodeError had replaced exec()'s error; attack35).
    label = " ".join(label.replace("\0", "\\0").encode("utf-8", "backslashreplace").decode("utf-8").split())[:120]
    if not sb._gate.try_freeze():
        # Another thread's run()/exec() writes now: merged into the step that
        # call ends when it returns, by design, so no warning (one per
        # overlapping call was noise: 31 in test_attack18's threads).
        sb._deferred.append(label)
        return
    full = label
    if sb._deferred:
        full += " (merged, deferred while busy: %s)" % "; ".join(sb._deferred)
    try:
        sb.checkpoint(full[:200])
        sb._deferred = []
        return
    except SandboxError as e:
        sb._deferred.append(label)
        why = " ".join(str(e).split())
    finally:
        sb._gate.thaw()
    _warn(label, why[len("layover: "):] if why.startswith("layover: ") else why)


def _warn(label: str, why: str) -> None:
    warnings.warn(StepDeferredWarning("layover: the step after %s was deferred, to be merged into the next step: %s"
                                      % (label, why), label), stacklevel=STACKLEVEL)
