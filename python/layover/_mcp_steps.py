"""Each mutating MCP tool call ends a step of the session (docs/history.md):
after `run_command`, `write_file` and `edit_file` the server runs `layover
checkpoint` with the call as the step's label. When the sandbox is busy (a
command still writes, or runs with its cwd in the target) the checkpoint
refuses and changes nothing: that step is deferred, and merged into the next
one, whose label says so (`layover log`)."""
from __future__ import annotations

import json
import threading
from typing import Any, Callable, Dict, List, Optional

from ._gate import WriteGate
from ._helper import Helper

MUTATING = ("run_command", "write_file", "edit_file")
WRITERS = MUTATING + ("start_command",)  # calls that may write in the target while they run
FREEZERS = ("checkpoint", "rollback")  # tools that freeze the overlay themselves


def describe(name: str, args: Dict[str, Any]) -> str:
    """The step's label: the tool and its main argument, on one line, shortened."""
    main = args.get("command") if name == "run_command" else args.get("path")
    text = "%s %s" % (name, main if isinstance(main, str) else "")
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


class Steps:
    def __init__(self, log: Callable[[str], None]) -> None:
        self.lock = threading.Lock()  # one checkpoint at a time
        self.deferred: List[str] = []
        self.log = log
        self.gate = WriteGate()

    def after(self, ctx: Any, name: str, args: Dict[str, Any]) -> Optional[str]:
        """End the step of this call, or defer it. Returns the line the
        tool's result ends with when the checkpoint refused (the agent is
        told, as Python's StepDeferredWarning tells its caller), else None:
        a step merged into the one another writing call ends is no news."""
        sb = ctx.sandbox
        if name not in MUTATING or sb.proc is None or sb.proc.poll() is not None or sb.broken is not None:
            return None
        label = describe(name, args)
        with self.lock:
            if not self.gate.try_freeze():  # another call writes now: merged into a later step
                self.deferred.append(label)
                return None
            full = label
            if self.deferred:
                full += " (merged, deferred while busy: %s)" % "; ".join(self.deferred)
            if len(full) > 200:
                full = full[:197] + "..."
            try:
                r = ctx.helper.run(["checkpoint", ctx.sandbox.name, "--json", "-m", full], ok=(0, 1))
            except Exception as e:  # a step boundary never fails the tool call
                self.log("layover mcp: the step after %s was not made: %s" % (label, e))
                return None
            finally:
                self.gate.thaw()
            if r.returncode == 0:
                self.deferred = []
                return None
            self.deferred.append(label)
            why = r.stderr.decode("utf-8", "replace").strip().splitlines()
            # Without the helper's own advice ("...; nothing changed: close it, then checkpoint
            # again"): the server takes the step itself, with the next call's.
            why_ = (why[-1] if why else "busy").split("; nothing changed:")[0]
            note = ("the step after %s is deferred (merged into the next): %s; nothing to do: the server makes it "
                    "with the next run_command, write_file or edit_file" % (label, why_))
            self.log("layover mcp: " + note)
            return "layover: " + " ".join(note.split())  # one line, whatever the refusal held


# The end of a server: is its kept session there, and does it hold changes or only steps?

def session_exists_via(helper: Helper, name: str) -> bool:
    try:
        listed = json.loads(helper.run(["sessions", "--json"], timeout=60).stdout)
        return any(isinstance(s, dict) and s.get("name") == name for s in listed)
    except Exception:  # noqa: BLE001 - a failed probe must not hide the "kept" hint
        return True


def changed_via(helper: Helper, name: str) -> bool:
    """Whether `status` shows a change (True when it cannot say): found by
    the attack pass of 27 Nov, a forged history-only line hid the hint."""
    try:
        data = json.loads(helper.run(["status", name, "--json"], timeout=60).stdout)
        items = data if isinstance(data, list) else data.get("changes") if isinstance(data, dict) else None
        return not isinstance(items, list) or bool(items)
    except Exception:  # noqa: BLE001 - as above
        return True
