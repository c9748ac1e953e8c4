"""A gate between calls that write in a running session and the checkpoints
that freeze it (`layover mcp`'s steps, a steps=True Sandbox)."""
from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator


@contextlib.contextmanager
def nothing() -> Iterator[None]:
    yield


class Cancelled(Exception):
    """frozen() gave up waiting: its call was cancelled."""


class WriteGate:
    """Calls run concurrently (MCP tool calls, threads of a Sandbox), and a
    checkpoint freezes the session's overlay: it is read-only for a moment,
    so a write made by another call just then failed with EROFS (found by
    the attack pass of 27 Nov: 27 of 80 concurrent write_file and
    run_command calls of `layover mcp` said "Read-only file system", and
    run()s of a steps=True Sandbox in threads did). Writing calls hold the
    gate shared while they run; a step's checkpoint takes it alone only
    when no call holds it, else the step is deferred (merged into the next);
    an explicit checkpoint or rollback waits for it, and a writing call that
    starts while it waits or runs waits for its end, as the client ordered
    them (a write sent after a rollback never runs before it, to be set
    aside by it)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.writers = 0
        self.freezing = False
        self.waiting = 0  # frozen() callers waiting for the writers to end

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self.cond:
            # A waiting freeze goes first: calls that overlap without end
            # never let the count reach 0, and the checkpoint or rollback
            # waited for good (found by the attack pass of 27 Nov, attack19).
            while self.freezing or self.waiting:
                self.cond.wait()
            self.writers += 1
        try:
            yield
        finally:
            with self.cond:
                self.writers -= 1
                self.cond.notify_all()

    @contextlib.contextmanager
    def frozen(self, cancelled: Callable[[], bool] = lambda: False) -> Iterator[None]:
        """Alone, waiting for the writing calls to end (the checkpoint and
        rollback tools). Raises Cancelled, having done nothing, once
        cancelled() holds while it waits: a call the client gave up on must
        not run minutes later, when the last writer ends (a rollback then
        set aside what the agent wrote since: attack19)."""
        with self.cond:
            self.waiting += 1
            try:
                while self.freezing or self.writers:
                    if cancelled():
                        raise Cancelled()
                    self.cond.wait(0.2)
                if cancelled():
                    raise Cancelled()
                self.freezing = True
            finally:
                self.waiting -= 1
                self.cond.notify_all()
        try:
            yield
        finally:
            self.thaw()

    def try_freeze(self) -> bool:
        with self.cond:
            if self.freezing or self.writers:
                return False
            self.freezing = True
            return True

    def thaw(self) -> None:
        with self.cond:
            self.freezing = False
            self.cond.notify_all()
