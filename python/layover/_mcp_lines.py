"""`layover mcp`'s input: newline-delimited messages read from stdin
(docs/mcp.md), each line at most MAX_LINE bytes.

A line comes in pipe-sized reads (64 KiB): the reader grew a bytes object by
each and searched all of it for the newline again, so a 24 MiB line (a
write_file of a 24 MiB file) cost ~50 s of CPU before it was handled,
quadratic in its length, every other message waiting (attack35). Here the
buffer grows in place and only what a read added is searched.
"""
from __future__ import annotations

import os
from typing import Callable

MAX_LINE = 32 * 1024 * 1024
# One message's JSON values and, of them, arrays and objects, counted
# before it is parsed (_client_frames.json_values_within): a 30 MiB line of
# `[],` made 10 million lists, 850 MB and ~1 min of the server's CPU on its
# reader thread (attack35). A request holds a handful of objects; diff's
# paths may be many strings (300,000 of them reach E2BIG, test_attack33.py).
MAX_VALUES = 1 << 20
MAX_CONTAINERS = 1 << 16
# Digits of an integer: Python's int() is quadratic in them, so 7,000 of
# 4,300 digits (3.11's own limit) in a 30 MB line cost ~1.5 s of the
# reader's CPU, and one of 30 MB digits under 3.8 to 3.10 hours (attack36).
# No request holds more than a 64-bit id's 20.
MAX_DIGITS = 40


class LongNumber(ValueError):
    """An integer of more than MAX_DIGITS digits in a message."""


def small_int(text: str) -> int:
    """json.loads's parse_int: the line refused at its first long integer."""
    if len(text) > MAX_DIGITS + text.startswith("-"):
        raise LongNumber(text[:20])
    return int(text)


def read_lines(fd: int, handle: Callable[[bytes], None], too_long: Callable[[], None]) -> None:
    """Call handle(line) for each line read from fd until EOF (a last line
    without its newline too); a line past MAX_LINE is dropped unread, with
    one call of too_long()."""
    buf = bytearray()
    skipping = False
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        start = len(buf)  # what buf held had no newline
        buf += chunk
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                if len(buf) > MAX_LINE:
                    if not skipping:
                        too_long()
                    buf, skipping = bytearray(), True
                break
            line = bytes(buf[:nl])
            del buf[:nl + 1]  # from the front: no copy of the rest (bytearray keeps an offset)
            start = 0
            if skipping:
                skipping = False
                continue
            handle(line)
    if buf.strip() and not skipping:
        handle(bytes(buf))
