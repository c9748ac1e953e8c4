"""A new user (newuser17) writing an agent loop over docs/python.md. Each
test fails before its fix."""
from __future__ import annotations

import os

import pytest

import layover


def test_exec_whose_background_child_holds_its_output_says_so_not_pass_a_larger_timeout(sb):
    # Before: exec("sleep 30 &", shell=True, timeout=2) waited out its
    # timeout (as subprocess.run waits for the pipes' end) and said "timed out
    # after 2 s and was killed; pass a larger timeout=": the shell had exited
    # at once, and a larger timeout only waits longer (no timeout: forever,
    # for a server started so).
    with pytest.raises(layover.TimeoutError) as e:
        sb.exec("echo started; sleep 30 &", shell=True, timeout=2, text=True)
    msg = str(e.value)
    assert msg == ("layover: exec('echo started; sleep 30 &', shell=True) exited, but a process it left running "
                   "kept its stdout or stderr open past the timeout of 2 s, and was killed; send that process's "
                   "output elsewhere ('cmd > cmd.log 2>&1 &') or start it with run() and subprocess.Popen"), msg
    assert e.value.stdout == "started\n"
    assert sb.exec(["echo", "alive"]).stdout == b"alive\n"
    # A command that itself runs past its timeout keeps the usual message.
    with pytest.raises(layover.TimeoutError, match=r"timed out after 1 s and was killed; pass a larger timeout="):
        sb.exec(["sleep", "30"], timeout=1)


def test_a_call_after_discard_says_the_session_is_gone_not_to_resume_it(sb, state_dir):
    # Before: "sandbox NAME is not running; start() it or Sandbox.resume('NAME')",
    # and Sandbox.resume('NAME') then failed: "session NAME not found".
    sb.run("open('f.txt', 'w').write('x')")
    sb.discard()
    for call in (lambda: sb.run("1"), lambda: sb.exec(["true"])):
        with pytest.raises(layover.SandboxError) as e:
            call()
        assert str(e.value) == ("layover: sandbox %s was discarded (discard()), its session and changes with it; "
                                "start() starts an empty session of that name, or make a new Sandbox()" % sb.name)
    with pytest.raises(layover.SandboxError, match="no session named"):
        layover.Sandbox.resume(sb.name, state_dir=state_dir)
    assert not os.path.exists(os.path.join(sb.target, "f.txt"))
    sb.start()  # as the message says: a fresh, empty session
    assert sb.run("import os; os.path.exists('f.txt')").value == "False"
    sb.close()
    with pytest.raises(layover.SandboxError, match=r"is not running; start\(\) it or Sandbox.resume"):
        sb.run("1")


def test_an_apply_whose_changes_are_already_on_the_target_names_them(sb, state_dir, tmp_path):
    # Before: apply_patch() of a patch already applied returned
    # ApplyResult(applied=[], ...) and nothing else: the CLI says "already on
    # the target as the patch makes them, so left as they are: f.txt", and its
    # --json lists them in "already", but the Python result dropped them, so
    # an agent could not tell "nothing to do" from "nothing selected".
    sb.run("open('f.txt', 'w').write('new\\n')")
    patch = sb.save(tmp_path / "p.tar.zst")
    first = sb.apply()
    assert (first.applied, first.already) == (["f.txt"], [])
    again = layover.apply_patch(patch, target=sb.target, state_dir=state_dir)
    assert (again.applied, again.already, again.undo_path) == ([], ["f.txt"], None)
    with open(os.path.join(sb.target, "f.txt")) as f:
        assert f.read() == "new\n"


def test_the_call_after_one_that_stopped_the_sandbox_says_an_earlier_call_did_and_start_restarts_it(make_sandbox):
    # Before: the next run() raised the very words of the call that stopped
    # the sandbox ("the sandbox sent more than max_output=... bytes for one
    # call; ... raise max_output"), as if run("1") had printed a megabyte,
    # and named no way back but raising max_output.
    sb = make_sandbox(max_output=1_000_000)
    with pytest.raises(layover.SandboxError) as first:
        sb.run("print('x' * 2_000_000)")
    assert "more than max_output=1000000 bytes for one call" in str(first.value)
    with pytest.raises(layover.SandboxError) as e:
        sb.run("1")
    assert str(e.value) == ("layover: sandbox (session %s) was stopped by an earlier call, which said: %s; "
                            "start() starts it again (its session was kept)" % (sb.name, first.value)), str(e.value)
    sb.start()
    assert sb.run("40 + 2").value == "42"


@pytest.mark.parametrize("flag", ["steps", "keep_empty", "start", "env_clear", "hide_secrets"])
def test_a_flag_given_as_a_string_is_a_type_error_not_true(flag, target, state_dir):
    # Before: Sandbox(steps="no") turned steps on ("no" is true), as did
    # keep_empty="false", start="no" (it started) and env_clear="no" (every
    # variable dropped); docs/python.md promises a TypeError for a wrong type.
    with pytest.raises(TypeError) as e:
        layover.Sandbox(target, state_dir=state_dir, **{flag: "no"})
    assert str(e.value) == "%s must be True or False, not str 'no'" % flag
    assert os.listdir(state_dir) == []  # nothing started, no session made


def test_network_given_as_a_bool_is_a_type_error(target, state_dir):
    # Before: Sandbox(network=True) raised ValueError ("network must be one of ..."): a wrong type is a TypeError.
    with pytest.raises(TypeError) as e:
        layover.Sandbox(target, state_dir=state_dir, network=True)
    assert str(e.value) == "network must be a str, one of ('loopback', 'none', 'host'), not bool True"
    assert os.listdir(state_dir) == []
