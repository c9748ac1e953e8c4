"""A Python agent author's first day (newuser11): wrong types, a sandbox in
a child process, pickling, a helper that is not layover, apply errors in
Python's words. Each test fails before its fix."""
from __future__ import annotations

import copy
import os
import pickle

import pytest

from layover import PatchError, Sandbox, SandboxError, apply_patch


def test_wrong_argument_types_are_a_typeerror_naming_the_argument(make_sandbox, target):
    # Before: "'int' object is not iterable", "expected str, bytes or
    # os.PathLike object, not int", "startswith first arg must be bytes ...".
    with pytest.raises(TypeError, match=r"^target must be a str, bytes or os.PathLike, not int 5$"):
        Sandbox(target=5, start=False)
    with pytest.raises(TypeError, match=r"^env: names and values must be str, not env\['A'\] = 1; pass str\(value\)$"):
        Sandbox(target=str(target), env={"A": 1}, start=False)
    with pytest.raises(TypeError, match=r"^env must be a mapping of variable names to values"):
        Sandbox(target=str(target), env=["A=1"], start=False)
    assert Sandbox(target=os.fsencode(target), start=False).target == os.path.realpath(target)  # bytes, as os.fsdecode
    sb = make_sandbox(steps=True)
    with pytest.raises(TypeError, match=r"^exec\(\) takes a list of arguments \(str, bytes or os.PathLike\), "
                                        r"or a str with shell=True, not int 5$"):
        sb.exec(5)
    with pytest.raises(TypeError, match=r"^exec\(\) argument 1 must be a str, bytes or os.PathLike, not int 5$"):
        sb.exec(["echo", 5])
    assert sb.exec(w for w in ["echo", "gen"]).stdout == b"gen\n"  # any iterable, as before
    with pytest.raises(TypeError, match=r"^label must be a str \(or None\), not int 5$"):
        sb.checkpoint(5)
    assert sb.run("1").value == "1"  # untouched


def test_a_sandbox_is_not_pickled_or_copied_and_says_what_to_do(sb):
    # Before: "cannot pickle '_thread.lock' object"; copy.copy shared the REPL.
    for how in (pickle.dumps, copy.copy):
        with pytest.raises(TypeError, match=r"^a Sandbox cannot be pickled or copied: it holds its REPL's sockets; "
                                            r"pass its name \('%s'\)" % sb.name):
            how(sb)


def test_a_forked_child_cannot_use_the_parents_repl_nor_stop_it(sb):
    # Before: a child's run() read the parent's replies and the parent the
    # child's (a child's run("0") returned the parent's 1000), and the
    # child's close() stopped the parent's sandbox.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            sb.run("0")
            msg = "ran"
        except SandboxError as e:
            msg = str(e)
        sb.close()
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        msg = f.read().decode()
    os.waitpid(pid, 0)
    assert msg == ("layover: sandbox %s belongs to process %d, which started it; a child process (os.fork, "
                   "multiprocessing) cannot use its REPL: start a Sandbox of its own there, or Sandbox.resume(%r) "
                   "once the parent close()d it" % (sb.name, os.getpid(), sb.name)), msg
    assert sb.running and sb.run("1000").value == "1000"


def test_a_binary_that_is_not_the_helper_is_named(require_sandbox, state_dir, target):
    # Before: "layover: the sandbox (session X) exited with status 0", no fix.
    with pytest.raises(SandboxError) as e:
        Sandbox(target=str(target), state_dir=state_dir, binary="/bin/true")
    assert str(e.value).endswith(" exited with status 0 before it started, and /bin/true printed nothing; "
                                 "set LAYOVER_BIN or binary= to the layover helper, or reinstall"), str(e.value)


def test_apply_errors_read_as_pythons_and_info_of_a_gone_session(make_sandbox, tmp_path, target):
    # Before: apply's error lacked "layover: apply: " and told to "pass
    # --target DIR"; info() said "session X not found" with no fix, a bare
    # SandboxError where changes() raised PatchError.
    sb = make_sandbox()
    sb.run("open('n.txt', 'w').write('n')")
    patch = sb.save(tmp_path / "p.tar.zst")
    other = tmp_path / "elsewhere"
    other.mkdir()
    with pytest.raises(PatchError) as e:
        apply_patch(patch)  # its target is not under this user's home: the tmp dir
    msg = str(e.value)  # the tmp dir is outside the test user's home
    assert msg.startswith("layover: apply: the patch file names its target ") and msg.endswith(
        "then pass target=DIR"), msg
    sb.discard()
    with pytest.raises(PatchError, match=r"^layover: no session named '%s'; list them with 'layover sessions'$"
                       % sb.name):
        sb.info()
    with pytest.raises(PatchError, match=r"^layover: apply: no session named '%s'" % sb.name):
        sb.apply()


def test_a_repl_the_code_ended_says_the_session_is_kept_and_start_brings_it_back(sb):
    # Before: "layover: the sandbox (session X) exited with status 0", no fix.
    with pytest.raises(SandboxError) as e:
        sb.run("import os; os._exit(0)")
    assert str(e.value) == ("layover: the sandbox (session %s) exited with status 0; the code ended its REPL "
                            "(os._exit, a signal) or the sandbox was stopped; its session is kept: start() starts "
                            "it again" % sb.name), str(e.value)
    assert not sb.running
    assert sb.start().run("6 * 7").value == "42"


def test_a_session_another_sandbox_runs_is_refused_in_pythons_words(make_sandbox):
    # Before: "choose another --session name" and "stop it first", which the
    # bindings offer no way to do.
    sb = make_sandbox(session="twice")
    with pytest.raises(SandboxError) as e:
        make_sandbox(session="twice")
    assert "; stop that run first, or choose another session= name" in str(e.value), str(e.value)
    assert "--session" not in str(e.value)
    with pytest.raises(SandboxError) as e:
        Sandbox.resume("twice", state_dir=sb.helper.env["LAYOVER_STATE_DIR"])
    assert str(e.value).endswith("; close() the Sandbox that runs it, or end that process, first"), str(e.value)
    assert sb.run("1").value == "1"


def test_a_sandboxed_tool_name_that_no_method_has_is_refused_not_run_on_the_host(require_sandbox, state_dir,
                                                                                 target):
    # Before: sandboxed_tools = ("run_shell",) over a method `shell` was
    # passed over in silence, and shell() ran on the host; a lambda tool was
    # "tool <lambda> must be a plain (non-async) function".
    from layover import SandboxMixin

    class Typo(SandboxMixin):
        sandboxed_tools = ("run_shell",)
        sandbox_options = {"target": str(target), "state_dir": str(state_dir)}

        def shell(self, command):
            return command

    with pytest.raises(TypeError, match=r"^Typo.sandboxed_tools names 'run_shell', which Typo does not define as a "
                                        r"method; a tool left out runs on the host: fix the name, or define it$"):
        Typo()

    class Base(SandboxMixin):  # a base that lists the tools its subclasses define: still fine
        sandboxed_tools = ("shell",)

    class Concrete(Base):
        sandbox_options = {"target": str(target), "state_dir": str(state_dir)}

        def __init__(self, label, *, n=1):
            self.label = label

        def shell(self, command):
            import os
            return [command, self.label, os.getpid() < 50]  # a low pid: inside the sandbox's pid namespace

    agent = Concrete("a", n=2)
    assert agent.shell("ls") == ["ls", "a", True]
    agent.sandbox.close()
    with pytest.raises(SandboxError, match=r"^layover: tool lam must be a plain \(non-async\) function defined "
                                           r"with def, not a lambda$"):
        class Lam(SandboxMixin):
            sandboxed_tools = ("lam",)
            lam = lambda self: 1  # noqa: E731


def test_exec_takes_subprocess_runs_words_for_what_it_always_does(sb):
    # Before: capture_output=True, universal_newlines=True and
    # stdout=subprocess.PIPE, which code ported from subprocess.run passes,
    # were each "unexpected keyword argument".
    import subprocess
    assert sb.exec(["echo", "x"], capture_output=True).stdout == b"x\n"
    assert sb.exec(["echo", "x"], universal_newlines=True).stdout == "x\n"
    assert sb.exec(["echo", "x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True).stdout == "x\n"
    with pytest.raises(ValueError, match=r"^exec\(\) always captures stdout and stderr apart, as "
                                         r"subprocess.run\(capture_output=True\) does; leave stderr= out"):
        sb.exec(["echo", "x"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    with pytest.raises(ValueError, match=r"leave capture_output= out"):
        sb.exec(["echo", "x"], capture_output=False)
    with pytest.raises(TypeError, match=r"^Sandbox.exec\(\) got an unexpected keyword argument 'shel'$"):
        sb.exec(["echo", "x"], shel=True)
