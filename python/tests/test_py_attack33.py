"""Hostile agents and hosts of the Python bindings (attack33). Each test
fails before its fix."""
from __future__ import annotations

import re
import sys
import threading
import time

import pytest

from layover._client_frames import LongNumber, strict_json
from layover._helper import Helper
from layover.errors import SandboxError

needs_int_limit = pytest.mark.skipif(not hasattr(sys, "set_int_max_str_digits"),
                                     reason="this Python has no int_max_str_digits")


@pytest.fixture
def low_int_limit():
    """The host program lowers Python's integer digit limit to its least, 640."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    yield
    sys.set_int_max_str_digits(old)


@needs_int_limit
def test_a_number_past_the_hosts_own_lower_digit_limit_is_a_long_number(low_int_limit):
    # Before: int() of 700 digits raised the plain ValueError of Python's
    # limit, which call() took for a malformed result and stopped the sandbox.
    for text in ("[" + "1" * 700 + "]", "[" + "1" * 700 + "," + " " * 5000 + "0]"):
        with pytest.raises(LongNumber) as e:
            strict_json(text)
        assert e.value.args == (700, 640)
    assert strict_json("[" + "1" * 640 + "]") == [int("1" * 640)]


@needs_int_limit
def test_a_call_result_past_the_hosts_lower_digit_limit_is_a_sandbox_error_and_the_repl_goes_on(repl, low_int_limit):
    with pytest.raises(SandboxError) as e:
        repl.call("def f(): return [10 ** 700]", "f")
    assert str(e.value) == "layover: tool f's result holds a number of 701 digits, more than 640; return it as a str"
    assert repl.call("def f(): return [10 ** 600, 1]", "f") == [10 ** 600, 1]


class _Stop(Exception):
    pass


def test_an_exception_while_a_verb_streams_leaves_no_thread_behind(tmp_path):
    # Before: an exception in the middle of run_clipped/run_capped (Ctrl+C
    # during sb.diff(), a MemoryError) left the timeout's threading.Timer
    # running: a thread that is no daemon, so the program waited up to the
    # verb's timeout (600 s) at its exit; and `with p` closed the helper's
    # stderr under its reader ("Exception in thread ... I/O operation on
    # closed file").
    fake = tmp_path / "layover"
    fake.write_text("#!/bin/sh\necho warn >&2\nwhile :; do echo line; done\n")
    fake.chmod(0o755)
    helper = Helper(binary=str(fake), state_dir=tmp_path)
    before = set(threading.enumerate())
    raised = []
    old, threading.excepthook = threading.excepthook, lambda a: raised.append(a.exc_value)

    def take(chunk):
        raise _Stop()

    try:
        for _ in range(20):
            with pytest.raises(_Stop):
                helper._stream(["diff", "s"], 600, take)
    finally:
        threading.excepthook = old
    left = [t for t in threading.enumerate() if t not in before]
    end = time.monotonic() + 30
    for t in left:  # a cancelled Timer ends a moment later; one left running waits 600 s
        t.join(max(0.0, end - time.monotonic()))
    assert [t for t in left if t.is_alive()] == []
    assert raised == []


def test_a_verb_whose_arguments_are_too_long_says_so_not_reinstall(tmp_path):
    # Before: "cannot run the helper .../layover: Argument list too long
    # (E2BIG); set LAYOVER_BIN or reinstall" (the MCP diff tool given a path
    # of 200,000 characters, or 100,000 paths): the wrong fix.
    helper = Helper(binary="/bin/true", state_dir=tmp_path)
    for paths in (["x" * 200000], ["p%08d" % i for i in range(400000)]):
        with pytest.raises(SandboxError) as e:
            helper.run_clipped(["diff", "s", "--"] + paths, 1000)
        assert str(e.value).startswith("layover: the arguments of 'layover diff' are too long for the kernel "), e.value
        assert "reinstall" not in str(e.value)


# A float whose comparisons lie: float.__repr__ of it is 'nan' or 'inf'.
LYING_FLOAT = (
    "class F(float):\n"
    "    def __eq__(self, other):\n"
    "        return False\n"
    "    def __ne__(self, other):\n"
    "        return False\n"
    "    __hash__ = float.__hash__\n"
    "def f(what):\n"
    "    return [F(what)]\n"
)


@pytest.mark.parametrize("what", ["nan", "inf", "-inf"])
def test_a_float_whose_comparisons_lie_is_refused_inside_not_sent_as_malformed_json(repl, what):
    # Before: json_dumps checked `obj != obj or obj in (inf, -inf)`, which a
    # float subclass answers as it likes: the REPL sent `[nan]`, which the
    # host took for a forged result and stopped the sandbox.
    from layover import ToolError
    with pytest.raises(ToolError) as e:
        repl.call(LYING_FLOAT, "f", [what])
    assert "returned a value JSON cannot carry (list: float %s is not JSON)" % what in str(e.value), e.value
    assert repl.call("def g(): return [1.5]", "g") == [1.5]


def test_a_call_that_printed_and_returns_within_max_output_apart_is_refused_inside_not_stopped():
    # Before: the REPL measured the result against max_output alone, though
    # what the call printed counts against it too on the host: 3 MiB printed
    # and 3 MiB returned under max_output=4 MiB were sent, and the host
    # stopped the sandbox ("sent more than max_output").
    import os
    from layover import ToolError
    from layover.repl import Repl, default_python, python_argv
    r = Repl.spawn(lambda fd: python_argv(default_python()), env=dict(os.environ), set_ipc_env=True,
                   describe="REPL", max_output=4 << 20)
    try:
        with pytest.raises(ToolError) as e:
            r.call("def f():\n    print('x' * (3 << 20))\n    return 'y' * (3 << 20)\n", "f", timeout=60)
        assert "layover: tool f returned more bytes of JSON than call()'s limit of " in str(e.value), e.value
        m = re.search(r"\(max_output, less the ([0-9]+) bytes of output it printed\); return less", str(e.value))
        assert m and 3 << 20 < int(m[1]) < (3 << 20) + 4096, e.value  # its frames' headers count too
        assert r.call("def f():\n    print('x' * (1 << 20))\n    return 'y' * (2 << 20)\n", "f") == "y" * (2 << 20)
    finally:
        r.close(timeout=5)
