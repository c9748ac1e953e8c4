"""One tools/call in flight of `layover mcp` (python/layover/_mcp_server.py):
its id, progress token and cancellation, and its calls into the sandbox's
agent, each bounded to the tool's limits."""
from __future__ import annotations

import threading
from typing import Any, Dict, Optional

from ._mcp_reply import bounded
from ._mcp_tools import ToolFail


class Ctx:
    """One tools/call in flight."""

    def __init__(self, server: Any, rid: Any, token: Any) -> None:
        self.server = server
        self.rid = rid
        self.token = token
        self.lock = threading.Lock()
        self.cancelled = False
        self.finished = False
        self.agent_rid: Optional[int] = None
        self.helper = server.helper
        self.sandbox = server.sandbox
        self.last_review = None

    def agent(self, op: str, args: Dict[str, Any]) -> Dict[str, Any]:
        if self.cancelled:
            raise ToolFail("cancelled")
        # Bounded to the tool's limits: a reply forged inside may be any size (_mcp_reply.py).
        r = bounded(self.sandbox.call(op, args, on_sent=self._sent))
        if not r.get("ok"):
            raise ToolFail(str(r.get("error") or "%s failed inside the sandbox" % op))
        return r

    def _sent(self, agent_rid: int) -> None:
        with self.lock:
            self.agent_rid = agent_rid
            if self.cancelled:
                self.sandbox.cancel(agent_rid)

    def cancel(self) -> None:
        with self.lock:
            self.cancelled = True
            if self.agent_rid is not None:
                self.sandbox.cancel(self.agent_rid)
