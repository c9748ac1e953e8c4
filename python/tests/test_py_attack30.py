"""Hostile results of Sandbox.call() (attack30): a result cheap to send but
expensive to parse. Each test fails before its fix."""
from __future__ import annotations

import os
import sys

import pytest

from layover.errors import SandboxError
from layover.repl import Repl, default_python, python_argv

from .layover_testutil import forged_result_tool

# A tool that forges its own result from inside: one integer of `n` digits.
FORGED_LONG_INT = forged_result_tool("b'7' * %(n)d")


def test_a_forged_result_of_one_integer_of_a_million_digits_is_refused_not_parsed():
    # Before: a call() result is one value to json_values_within, and
    # json.loads turned its digits into an int: quadratic in the digits on
    # Python 3.8-3.10 (requires-python is >= 3.8), and on 3.11+ wherever
    # the caller lifted int_max_str_digits (PYTHONINTMAXSTRDIGITS=0): 256
    # MiB of '7' is one value within every count, and days of CPU. Now a
    # number of more than 4300 digits (Python's own default limit) is
    # refused before int() sees it: a SandboxError, the REPL in step.
    old = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    if old is not None:
        sys.set_int_max_str_digits(0)  # as a caller may: the limit off, as on Python 3.8-3.10
    r = Repl.spawn(lambda fd: python_argv(default_python()), env=dict(os.environ), set_ipc_env=True,
                   describe="REPL", max_output=16 << 20)
    try:
        src = FORGED_LONG_INT % {"rid": r.client.next_id, "n": 1 << 20}
        with pytest.raises(SandboxError) as e:
            r.call(src, "tool", timeout=60)
        assert str(e.value) == (
            "layover: tool tool's result holds a number of 1048576 digits, more than 4300; return it as a str"), \
            e.value
    finally:
        if old is not None:
            sys.set_int_max_str_digits(old)
        r.close(timeout=5)


def test_a_result_of_long_but_allowed_numbers_is_read(repl):
    # 4300 digits, Python's default limit, pass; and floats of many digits too.
    n = 10 ** 4299
    assert repl.call("def f(): return [10 ** 4299, -5, 2.5]", "f") == [n, -5, 2.5]
