"""Python bindings items (python4): a steps=True step that is deferred says
so, a call() result past the host's bounds is refused inside before it is
sent, help() works in the REPL. Each test fails before its fix."""
from __future__ import annotations

import warnings

import pytest

from layover import StepDeferredWarning, ToolError


def _deferred(got):
    return [str(w.message) for w in got if issubclass(w.category, StepDeferredWarning)]


def test_a_deferred_step_is_a_warning_naming_the_call_and_why(make_sandbox, target):
    # Before: the step was deferred silently; only `layover log` showed it,
    # later, in the next step's label.
    sb = make_sandbox(steps=True)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        sb.run("open('a.txt', 'w').write('a')")
        assert _deferred(got) == []
        sb.run("f = open('held.txt', 'w')\nf.write('h')")  # still open for writing
        msgs = _deferred(got)
        assert len(msgs) == 1, msgs
        assert msgs[0].startswith("layover: the step after run: f = open('held.txt', 'w') was deferred, to be "
                                  "merged into the next step: "), msgs[0]
        assert "held.txt" in msgs[0], msgs[0]  # the checkpoint's reason, naming the file held
        assert got[-1].filename == __file__  # points at the caller's run()
        assert sb.deferred_steps == ("run: f = open('held.txt', 'w')",)
        sb.run("f.close()\nopen('c.txt', 'w').write('c')")
        assert len(_deferred(got)) == 1
    assert sb.deferred_steps == ()
    log = sb.log()
    assert log[0].label == "run: f.close() (merged, deferred while busy: run: f = open('held.txt', 'w'))"
    assert {p for p, _ in log[0].paths} == {"held.txt", "c.txt"}
    assert (target / "held.txt").exists() is False


def test_a_step_deferred_by_another_threads_call_merges_without_a_warning(make_sandbox):
    sb = make_sandbox(steps=True)
    sb.run("open('t.txt', 'w').write('t')")
    # Another thread's run() or exec() holds the gate while it runs (as here):
    # the step defers into the one that call ends, by design: no warning.
    with sb._gate.writing():
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            sb._step("run: by hand")
    assert _deferred(got) == []
    assert sb.deferred_steps == ("run: by hand",)
    sb.exec(["sh", "-c", "echo u > u.txt"])
    assert sb.deferred_steps == ()
    assert sb.log()[0].label == "exec: sh -c echo u > u.txt (merged, deferred while busy: run: by hand)"


def test_a_deferred_step_can_be_made_an_error(make_sandbox):
    sb = make_sandbox(steps=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", StepDeferredWarning)
        with pytest.raises(StepDeferredWarning, match="was deferred"):
            sb.run("g = open('held2.txt', 'w')")
    assert sb.run("g.close()\n1").value == "1"  # the REPL and the sandbox go on
    assert sb.deferred_steps == ()


# --- call() results past the host's bounds, refused inside before they are sent ---

MANY = "def f(n):\n    return [0] * n\n"


def test_a_call_result_with_too_many_values_is_refused_inside(make_sandbox):
    # Before: 2**20+1 zeros (2 MiB of JSON) went over the socket, then the
    # host refused them with a SandboxError; 100 M of them (200 MB) did too.
    sb = make_sandbox(max_output=1 << 24)  # 16 MiB: the value bound is its floor, 2**20
    assert len(sb.call(MANY, "f", [(1 << 20) - 1])) == (1 << 20) - 1  # the host counts the list too: 2**20
    with pytest.raises(ToolError, match=r"^layover: tool f returned more JSON values \(lists, dicts, keys, numbers, "
                                        r"strings\) than call\(\)'s limit of 1048576 \(max_output / 64, at least "
                                        r"2\*\*20\); return fewer, or write them to a file and read it with "
                                        r"changed_files\(\)\n$"):
        sb.call(MANY, "f", [1 << 20])
    with pytest.raises(ToolError, match=r"returned more JSON values .* than call\(\)'s limit of 1048576 "):
        sb.call(MANY, "f", [100 * 1000 * 1000])  # 100 M: refused at the 2**20th, never dumped whole
    assert sb.call("def g(): return {'a': [1, 2]}", "g") == {"a": [1, 2]}  # the REPL in step


def test_a_call_result_values_are_counted_as_the_host_counts_them(make_sandbox):
    sb = make_sandbox(max_output=1 << 24)
    # A dict of n items is 2n values (keys and values); strings full of commas are one each.
    src = "def f(n, s):\n    return {str(i): s for i in range(n)}\n"
    assert len(sb.call(src, "f", [(1 << 19) - 1, ",:[{"])) == (1 << 19) - 1
    with pytest.raises(ToolError, match=r"returned more JSON values .* than call\(\)'s limit of 1048576 "):
        sb.call(src, "f", [(1 << 19), ","])


def test_a_call_result_past_max_output_is_refused_before_it_is_made_whole(make_sandbox):
    sb = make_sandbox(max_output=1 << 24)
    src = "def f(n):\n    return ['x' * 1000] * n\n"
    most = (1 << 24) - 65536 - 128 * 17  # max_output less its frames' headers, as repl.py says
    with pytest.raises(ToolError, match=r"^layover: tool f returned more bytes of JSON than call\(\)'s limit of %d "
                                        r"\(max_output\); return less, or write it to a file and read it with "
                                        r"changed_files\(\)\n$" % most):
        sb.call(src, "f", [100 * 1000])  # 100 MB of JSON: stopped at the limit, never made whole (it was)
    assert sb.run("1").value == "1"


def test_a_call_result_number_past_4300_digits_is_refused_inside(make_sandbox):
    # Before: on Python < 3.11 its digits were made (quadratic) and sent, and
    # the host refused them; on 3.11+ the error named int_max_str_digits only.
    sb = make_sandbox()
    assert sb.call("def f(): return 10 ** 4300 - 1", "f") == 10 ** 4300 - 1
    with pytest.raises(ToolError, match=r"^layover: tool f returned a number of more than 4300 digits, past what "
                                        r"the host reads \(Python's int_max_str_digits\); return it as a str\n$"):
        sb.call("def f(): return -10 ** 4300", "f")
    with pytest.raises(ToolError, match=r"more than 4300 digits"):
        sb.call("def f(): return [1, {'a': 7 ** 10 ** 6}]", "f")


# --- help() ---

def test_help_prints_plain_text_into_the_output(sb):
    # Before: NameError: name 'help' is not defined (python -S: no site.py).
    r = sb.run("def frob(x):\n    'Frobnicate x twice.'\n    return x\nhelp(frob)")
    assert r.error is None, r.error
    assert r.stdout.startswith("Help on function frob in module __main__:\n"), r.stdout
    assert "Frobnicate x twice." in r.stdout
    assert "\x08" not in r.stdout and "\x1b" not in r.stdout  # plain text: no overstrike, no escapes
    assert r.value is None
    r = sb.run("import json\nhelp(json.dumps)")
    assert r.error is None and "Help on function dumps in module json" in r.stdout, r.error
    r = sb.run("help('json.loads')")
    assert r.error is None and "json.loads = loads(s" in r.stdout, (r.error, r.stdout[:200])
    r = sb.run("help('if')")  # a keyword: pydoc's topics
    assert r.error is None and "if" in r.stdout and len(r.stdout) > 200, (r.error, r.stdout[:200])


def test_help_without_an_argument_says_how_to_use_it(sb):
    r = sb.run("help()")
    assert r.error is None, r.error
    assert r.stdout == ("layover: the sandbox's REPL has no interactive help; call help(object) or "
                        "help('name') to print its documentation\n"), r.stdout
    assert "help(object)" in sb.run("help").value
