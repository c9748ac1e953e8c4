"""Hostile results of Sandbox.call() (attack28): what code inside can send
as a tool's result must not cost the host more memory than max_output says.
Each test fails before its fix."""
from __future__ import annotations

import os

import pytest

from layover.errors import SandboxError, ToolError
from layover.repl import Repl, default_python, python_argv

from .layover_testutil import forged_result_tool

# A tool that forges its own result from inside, `n` bytes of b"[],"... in
# frames of at most 1 MiB, then its done frame, and waits (the REPL's own
# reply would come after the host read the forged one).
FORGED_MANY = forged_result_tool("b'[' + b'[],' * %(n)d + b'[]]'")


def test_a_forged_result_of_millions_of_empty_lists_is_refused_not_built_on_the_host():
    # Before: 3 bytes of "[]," are a Python list on the host (~80 bytes
    # with its pointer): a 256 MiB result, within max_output's default,
    # made ~6 GiB of lists in the caller's process. Now a result holding
    # more values than max_output // 64 (at least 2**20) is refused
    # before it is parsed (a SandboxError; an honest REPL refuses such a
    # result itself, before sending it: a ToolError, since python4; it
    # stays in step and goes on).
    r = Repl.spawn(lambda fd: python_argv(default_python()), env=dict(os.environ), set_ipc_env=True,
                   describe="REPL", max_output=16 << 20)
    try:
        honest = "def f(n): return [[] for _ in range(n)]"
        with pytest.raises(ToolError, match=r"^layover: tool f returned more JSON values \(lists, dicts, keys, "
                                            r"numbers, strings\) than call\(\)'s limit of 1048576 "):
            r.call(honest, "f", [(1 << 20) + 5], timeout=60)
        assert r.alive and len(r.call(honest, "f", [1000])) == 1000  # an honest REPL's reply was whole: it goes on
        n = 3 << 20  # 9 MiB of JSON, 3 Mi values: past the 2**20 floor
        src = FORGED_MANY % {"rid": r.client.next_id, "n": n}
        with pytest.raises(SandboxError) as e:
            r.call(src, "tool", timeout=60)
        assert str(e.value) == (
            "layover: tool tool's result holds more than %d JSON values (max_output / 64), too many to build on "
            "the host; return fewer, or write them to a file and read it with changed_files()" % (1 << 20)), e.value
    finally:
        r.close(timeout=5)


def test_a_result_whose_strings_hold_many_commas_is_not_counted_as_many_values(repl):
    # The count skips what strings hold: one long CSV line is one value.
    text = "a," * (3 << 20)
    assert repl.call("def f(n): return ['a,' * n]", "f", [3 << 20], timeout=60) == [text]
    assert repl.call("def f(): return {'k': [1, 2.5, None, 'x\\\\\",y']}", "f") == {"k": [1, 2.5, None, 'x\\",y']}


def test_counting_a_forged_result_left_open_stays_linear():
    # A string never closed, full of escaped quotes and commas: the count
    # with strings left out rescanned it from each escaped quote (hours for
    # this one). Now it is one string to the end, and the parser refuses it.
    from layover._client_frames import json_values_within
    assert json_values_within(b'"' + b'\\",' * (3 << 20), 1 << 20)
    assert json_values_within(b'["a,b","x\\",y",{"k:":1},"\\\\",",,"]', 8)
    assert not json_values_within(b'["a,b","x\\",y",{"k:":1},"\\\\",",,"]', 7)
