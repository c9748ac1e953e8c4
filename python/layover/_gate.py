"""A gate between calls that write in a running session and the checkpoints
that freeze it (`layover mcp`'s steps, a steps=True Sandbox)."""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator


@contextlib.contextmanager
def nothing() -> Iterator[None]:
    yield


class WriteGate:
    """Calls run concurrently (MCP tool calls, threads of a Sandbox), and a
    checkpoint freezes the session's overlay: it is read-only for a moment,
    so a write made by another call just then failed with EROFS (found by
    the attack pass of 27 Nov: 27 of 80 concurrent write_file and
    run_command calls of `layover mcp` said "Read-only file system", and
    run()s of a steps=True Sandbox in threads did). Writing calls hold the
    gate shared while they run; a step's checkpoint takes it alone only
    when no call holds it, else the step is deferred (merged into the next);
    an explicit checkpoint or rollback waits for it; a writing call that
    starts meanwhile waits for the freeze to end (a few ms)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.writers = 0
        self.freezing = False

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self.cond:
            while self.freezing:
                self.cond.wait()
            self.writers += 1
        try:
            yield
        finally:
            with self.cond:
                self.writers -= 1
                self.cond.notify_all()

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Alone, waiting for the writing calls to end (the checkpoint and rollback tools)."""
        with self.cond:
            while self.freezing or self.writers:
                self.cond.wait()
            self.freezing = True
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
