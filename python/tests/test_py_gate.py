"""The gate between writing calls and freezes (layover/_gate.py), alone:
found by the attack pass of 27 Nov (attack19)."""
from __future__ import annotations

import threading
import time

import pytest

from layover._gate import Cancelled, WriteGate


def _overlapping_writers(gate: WriteGate, stop: threading.Event, log: list) -> list:
    """Two threads whose writing calls overlap without end: the count of
    writers never reaches 0 while they run."""
    def writer(offset: float) -> None:
        time.sleep(offset)
        while not stop.is_set():
            with gate.writing():
                log.append(("w", time.monotonic()))
                time.sleep(0.1)
    ts = [threading.Thread(target=writer, args=(o,), daemon=True) for o in (0, 0.05)]
    for t in ts:
        t.start()
    return ts


def _until(pred, what: str) -> None:
    """Wait for pred() to hold: a condition, never a sleep's guess."""
    deadline = time.monotonic() + 60
    while not pred():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.01)


def test_a_freeze_waits_for_overlapping_writers_never_for_good():
    gate, stop, log = WriteGate(), threading.Event(), []
    ts = _overlapping_writers(gate, stop, log)
    _until(lambda: len(log) >= 2, "both writers writing")
    got = threading.Event()

    def freeze() -> None:
        with gate.frozen():
            assert gate.writers == 0
            log.append(("f", time.monotonic()))
            got.set()
    f = threading.Thread(target=freeze, daemon=True)
    f.start()
    frozen_in_time = got.wait(60)  # at once when the freeze goes first; a loaded machine is slow
    stop.set()
    for t in ts + [f]:
        t.join(60)
    assert frozen_in_time, "the freeze waited for writers that overlapped without end"
    at = [i for i, (k, _) in enumerate(log) if k == "f"][0]
    assert any(k == "w" for k, _ in log[at + 1:]), "the writers went on after the freeze"


def test_a_cancelled_freeze_gives_up_waiting_and_lets_the_writers_on():
    gate = WriteGate()
    cancelled = threading.Event()
    outcome = []
    with gate.writing():
        def freeze() -> None:
            try:
                with gate.frozen(cancelled.is_set):
                    outcome.append("ran")
            except Cancelled:
                outcome.append("cancelled")
        f = threading.Thread(target=freeze, daemon=True)
        f.start()
        _until(lambda: gate.waiting == 1, "the freeze waiting for the writer")
        cancelled.set()
        f.join(60)
        assert outcome == ["cancelled"], outcome
        # no freeze waits any more: another writer is not held up
        entered = threading.Event()

        def write() -> None:
            with gate.writing():
                entered.set()
        threading.Thread(target=write, daemon=True).start()
        assert entered.wait(60)
    assert gate.waiting == 0 and not gate.freezing


def test_a_step_s_try_freeze_is_unchanged_it_defers_while_anyone_writes():
    gate = WriteGate()
    with gate.writing():
        assert not gate.try_freeze()
    assert gate.try_freeze()
    gate.thaw()
    with pytest.raises(Cancelled):
        with gate.writing():
            with gate.frozen(lambda: True):
                pass
