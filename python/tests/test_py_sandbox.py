"""layover.Sandbox against the real helper, as an unprivileged user: REPL and
exec inside the sandbox, a hostile REPL, a crash, the history (log,
rollback, revert, fork, checkpoints, steps, rejections).  Changes and
review: test_py_sandbox_review.py."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from .layover_testutil import HOSTILE_SEND, repl_waits_in_root, session, tree
from layover import Sandbox, SandboxError, StepDeferredWarning, TimeoutError


# --- sessions ---

def test_run_keeps_state_and_sees_the_target(sb, target):
    assert sb.run("import os\ncount = 1").error is None
    r = sb.run("count += 1\nprint(open('README.md').read())\ncount")
    assert r.error is None
    assert (r.stdout, r.value) == ("# demo\n\n", "2")
    assert sb.run("os.getcwd()").value == repr(str(target))


def test_repl_machinery_imports_nothing_from_the_target_and_user_imports_behave_as_python(make_sandbox, target,
                                                                                         state_dir):
    # A project's own traceback.py, types.py... never stand in for the
    # standard modules the REPL itself imports, and get no bytecode from it.
    for name in ("traceback", "linecache", "types", "subprocess", "time"):
        (target / (name + ".py")).write_text("raise RuntimeError('the target module %s was imported')\n" % name)
    (target / "mymod.py").write_text("X = 1\n")
    sb = make_sandbox()
    r = sb.run("1/0")
    assert "ZeroDivisionError" in r.error and "was imported" not in r.error, r.error
    assert sb.exec(["true"], timeout=30).returncode == 0
    assert sb.call("def f(self):\n    return self.a\n", "f", self_attrs={"a": 7}) == 7
    # The user's own import writes bytecode as Python does by default.
    assert sb.run("import mymod\nmymod.X").value == "1"
    upper = state_dir / "sessions" / sb.name / "upper"
    cached = sorted(p.name.split(".")[0] for p in (upper / "__pycache__").iterdir())
    assert cached == ["mymod"]
    assert sorted(p.name for p in upper.iterdir()) == ["__pycache__"]


def test_exception_is_formatted_and_session_stays_alive(sb):
    r = sb.run("def boom():\n    raise ValueError('inside')\nboom()")
    assert "ValueError: inside" in r.error and "raise ValueError" in r.error
    assert sb.run("boom.__name__").value == "'boom'"


def test_exec_returns_codes_output_and_timeouts(sb):
    p = sb.exec(["bash", "-c", "echo hi > notes.txt; cat notes.txt; echo oops >&2; exit 4"])
    assert (p.returncode, p.stdout, p.stderr) == (4, b"hi\n", b"oops\n")
    assert sb.exec(["cat", "notes.txt"], text=True).stdout == "hi\n"
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        sb.exec(["sleep", "30"], timeout=0.5)
    assert time.monotonic() - t0 < 6
    assert sb.exec(["true"]).returncode == 0


def test_sandbox_processes_are_isolated_from_host(sb, target):
    # pid namespace: the REPL is a low pid and sees no host process.
    r = sb.exec(["sh", "-c", "ls /proc | grep -c '^[0-9]'"], text=True)
    assert int(r.stdout) < 20
    sb.run("open('written_inside.txt', 'w').write('x')")
    assert not (target / "written_inside.txt").exists()


def test_huge_output_50mb_arrives_complete(sb):
    n = 50 * 1024 * 1024
    p = sb.exec(["head", "-c", str(n), "/dev/zero"])
    assert len(p.stdout) == n and p.stdout.count(b"\0") == n
    r = sb.run("import sys\nw = sys.stdout.write('z' * %d)" % n)
    assert len(r.stdout) == n


def test_run_timeout_interrupts_but_keeps_the_sandbox(sb):
    with pytest.raises(TimeoutError):
        sb.run("import time\nwhile True: time.sleep(0.01)", timeout=0.5)
    assert sb.run("40 + 2").value == "42"


def test_parallel_sandboxes_on_one_target_are_independent(make_sandbox, target):
    before = tree(target)
    boxes = [make_sandbox() for _ in range(4)]
    errors = []

    def work(i, box):
        try:
            box.run("open('mine.txt', 'w').write('box %d')" % i).check()
            box.exec(["sh", "-c", "echo %d >> README.md" % i], check=True)
            for _ in range(20):
                assert box.run("open('mine.txt').read()").value == repr("box %d" % i)
            assert box.exec(["tail", "-n", "1", "README.md"]).stdout == b"%d\n" % i
        except BaseException as e:  # noqa: B902 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i, b)) for i, b in enumerate(boxes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len({b.name for b in boxes}) == 4
    assert tree(target) == before


# --- hostile REPL and crash ---

@pytest.mark.parametrize("payload", [
    "send(b'\\x00\\x00\\x00\\x07\\x00\\x00\\x00\\x00garbage!')",
    "send((1 << 31).to_bytes(4, 'big') + (0).to_bytes(4, 'big'))",
])
def test_hostile_repl_raises_and_changes_stay_recoverable(sb, state_dir, tmp_path, payload):
    sb.run("open('before.txt', 'w').write('kept work')").check()
    t0 = time.monotonic()
    with pytest.raises(SandboxError):
        sb.run(HOSTILE_SEND + payload + "\nimport time\ntime.sleep(60)")
    assert time.monotonic() - t0 < 15
    with pytest.raises(SandboxError):
        sb.run("1")
    info = session(state_dir, sb.name)
    assert info is not None and info.status in ("kept", "crashed")
    assert (state_dir / "sessions" / sb.name / "upper" / "before.txt").read_bytes() == b"kept work"
    assert [c.path for c in sb.changes()] == ["before.txt"]


def test_killed_helper_raises_on_next_call_and_session_is_crashed(sb, state_dir):
    sb.run("open('survivor.txt', 'w').write('still here')").check()
    os.kill(sb._repl.proc.pid, signal.SIGKILL)
    sb._repl.proc.wait()
    t0 = time.monotonic()
    with pytest.raises(SandboxError):
        sb.run("1")
    assert time.monotonic() - t0 < 5
    assert session(state_dir, sb.name).status == "crashed"
    assert (state_dir / "sessions" / sb.name / "upper" / "survivor.txt").read_bytes() == b"still here"
    assert {c.path for c in sb.changes()} == {"survivor.txt"}


def test_missing_target_is_a_clear_error(require_sandbox, state_dir, tmp_path):
    with pytest.raises(SandboxError) as e:
        Sandbox(tmp_path / "nope", state_dir=state_dir)
    assert str(e.value) == "layover: target %s: does not exist; pass an existing tree" % (tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(SandboxError) as e:
        Sandbox(tmp_path / "file", state_dir=state_dir)
    assert "file: not a directory; pass an existing tree" in str(e.value)
    # An empty target (an unset variable) is no target, not the cwd (found by the attack pass of 26 Nov);
    # an argument error, so a ValueError as the others are (python3).
    with pytest.raises(ValueError) as e:
        Sandbox("", state_dir=state_dir)
    assert str(e.value) == "layover: target is empty; pass an existing tree (default: your home, '~')"


def test_a_missing_helper_binary_names_the_fix(require_sandbox, state_dir, tmp_path):
    with pytest.raises(SandboxError) as e:
        Sandbox(tmp_path, state_dir=state_dir, binary=str(tmp_path / "no-layover"))
    assert str(e.value).startswith("layover: cannot start the sandbox (session py-")
    assert str(e.value).endswith("no-layover: No such file or directory (ENOENT); set LAYOVER_BIN or binary= to "
                                 "the layover helper, or reinstall"), str(e.value)


def test_log_and_rollback_across_resumes(sb, target):
    sb.run("open('one.txt', 'w').write('1')")
    sb.close()
    sb.start()  # the resume freezes the first run as step 1
    sb.run("open('two.txt', 'w').write('2')")
    log = sb.log()
    assert [s.step for s in log] == [None, 1]
    assert log[0].live and ("two.txt", "A") in log[0].paths
    assert log[1].paths == [("one.txt", "A")] and log[1].added == 1
    assert {c.path for c in sb.changes()} == {"one.txt", "two.txt"}
    sb.run("kept = 42")
    sb.rollback(1)  # in place: the REPL goes on, its state too, over the rolled-back files
    assert sb.running and sb.run("kept").value == "42"
    assert sb.run("import os; os.path.exists('two.txt'), open('one.txt').read()").value == "(False, '1')"
    assert {c.path for c in sb.changes()} == {"one.txt"}
    sb.rollback(0, undo=True)
    assert {c.path for c in sb.changes()} == {"one.txt", "two.txt"}
    assert sb.run("open('two.txt').read()").value == "'2'"
    assert not (target / "one.txt").exists()


def test_changes_of_one_step_and_revert(sb, target, state_dir):
    sb.run("open('one.txt', 'w').write('1')")
    assert sb.checkpoint("one") == 1
    sb.run("open('two.txt', 'w').write('2')\nopen('one.txt', 'a').write('!')")
    assert sb.checkpoint("two") == 2
    sb.run("open('three.txt', 'w').write('3')")
    # A running sandbox: its frozen steps read as they are.
    assert {(c.path, c.kind) for c in sb.changes(step=2)} == {("two.txt", "added"), ("one.txt", "modified")}
    assert {c.path for c in sb.changes(step=1)} == {"one.txt"}
    with pytest.raises(SandboxError) as e:
        sb.revert(1)  # step 2 changed one.txt since
    assert "later changes touched its paths" in str(e.value)
    n = sb.revert(2)
    assert [s.label for s in sb.log() if s.step == n][0].startswith("revert 2: ")
    assert {c.path for c in sb.changes()} == {"one.txt", "three.txt"}
    assert sb.running  # reverted in place
    assert sb.run("import os; open('one.txt').read(), os.path.exists('two.txt')").value == "('1', False)"
    assert not (target / "one.txt").exists()


def test_fork_shares_the_steps_and_is_independent(sb, target):
    sb.run("open('one.txt', 'w').write('1')")
    sb.close()
    sb.start()
    sb.run("open('two.txt', 'w').write('2')")
    early = sb.fork(sb.name + "-early", at=1)
    assert sb.running and not early.running
    assert {c.path for c in early.changes()} == {"one.txt"}
    full = sb.fork(sb.name + "-full")
    assert {c.path for c in full.changes()} == {"one.txt", "two.txt"}
    with early:
        early.run("open('three.txt', 'w').write('3')")
    assert {c.path for c in early.changes()} == {"one.txt", "three.txt"}
    assert {c.path for c in sb.changes()} == {"one.txt", "two.txt"}
    with pytest.raises(SandboxError) as e:
        sb.fork(sb.name + "-early")
    assert "exists" in str(e.value)
    assert not (target / "one.txt").exists() and not (target / "three.txt").exists()


def test_changes_carry_risk_phrases_never_the_secret(sb):
    tok = "glpat-" + "aB3dE5gH7jK9mN1pQ2sT4"
    sb.run("open('deploy.env', 'w').write('X=1\\nT=%s\\n')\nopen('plain.txt', 'w').write('p')" % tok)
    risks = {c.path: c.risks for c in sb.changes()}
    assert risks["deploy.env"] == ("secret: GitLab token on line 2 (glpat-\u2026)",)
    assert risks["plain.txt"] == ()


def test_checkpoint_while_running_keeps_the_repl_and_its_cwd(sb, target, state_dir):
    sb.run("x = 41\nopen('one.txt', 'w').write('1')")
    assert sb.checkpoint("first") == 1
    assert sb.running
    # The REPL state survives, and relative paths resolve in the next overlay.
    r = sb.run("x += 1\nopen('two.txt', 'w').write(open('one.txt').read() + '2')\nx")
    assert r.error is None and r.value == "42"
    assert sb.run("import os\nos.getcwd()").value == repr(str(target))
    d = state_dir / "sessions" / sb.name
    assert (d / "steps" / "0001" / "one.txt").read_text() == "1"
    assert (d / "upper" / "two.txt").read_text() == "12"
    assert not (d / "steps" / "0001" / "two.txt").exists()
    assert sb.checkpoint() == 2 and sb.checkpoint() == 0
    assert [s.step for s in sb.log()] == [2, 1] and sb.log()[1].label == "first"
    # A file the REPL keeps open for writing: refused, named, nothing changed.
    sb.run("f = open('held.txt', 'w')")
    with pytest.raises(SandboxError, match=r"held\.txt open for writing"):
        sb.checkpoint()
    sb.run("f.close()")
    assert sb.checkpoint() == 3
    assert not (target / "one.txt").exists()


def test_an_idle_repl_waits_off_the_overlay_so_a_checkpoint_from_elsewhere_works(sb, target, state_dir):
    sb.run("import os\nos.chdir('sub') if os.path.isdir('sub') else (os.mkdir('sub'), os.chdir('sub'))")
    deadline = time.monotonic() + 60
    while not repl_waits_in_root(sb):  # idle past the REPL's 20 ms: it waits in /
        assert time.monotonic() < deadline, "the idle REPL never left its cwd on the overlay"
        time.sleep(0.01)
    r = sb.helper.run(["checkpoint", sb.name, "--json"], ok=(0, 1))
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    # Back in its cwd (by path, on the new overlay) for the next request.
    assert sb.run("os.getcwd()").value == repr(str(target / "sub"))
    assert sb.run("open('x.txt', 'w').write('x')").error is None
    assert (state_dir / "sessions" / sb.name / "upper" / "sub" / "x.txt").read_text() == "x"


def test_run_of_code_that_is_not_a_str_is_a_type_error_and_the_repl_lives(sb):
    for code in (b"1+1", None, 42):
        with pytest.raises(TypeError, match="takes the code as a str"):
            sb.run(code)
    assert sb.run("1+1").value == "2"


def test_exec_env_takes_bytes_as_subprocess_does(sb):
    # subprocess.run(env=) takes bytes names and values (their exact bytes);
    # str() of them used to pass the name "b'A'".
    r = sb.exec(["sh", "-c", "printf '%s|%s' \"$A\" \"$B\""], env={b"A": b"v\xff", "B": b"w"})
    assert r.stdout == b"v\xff|w"
    with pytest.raises(TypeError):
        sb.exec(["true"], env={"A": 1})
    assert sb.exec(["true"]).returncode == 0


def test_exec_input_arriving_slowly_does_not_park_the_repl_mid_request(sb, target):
    from layover._client import Reply
    sb.run("1")
    repl = sb._repl
    c = repl.client
    with repl.lock:  # an exec whose stdin frame comes 0.2 s after its header (past the 20 ms idle wait)
        rid = c.next_id
        c.next_id += 1
        c.send({"t": "exec", "id": rid, "argv": ["/bin/sh", "-c", "cat; pwd"], "cwd": None, "env": None,
                "timeout": 60.0, "stdin": True})
        time.sleep(0.2)
        c.send({"t": "stdin", "id": rid, "more": False}, b"in\n")
        reply = c._finish(rid, Reply(), time.monotonic() + 90, 60.0)
    assert reply.data("stdout") == ("in\n%s\n" % target).encode()


def test_steps_true_makes_each_run_and_exec_a_step_and_defers_a_busy_one(make_sandbox, target):
    sb = make_sandbox(steps=True)
    sb.run("open('a.txt', 'w').write('a')")
    sb.exec(["sh", "-c", "echo b > b.txt"])
    sb.run("x = 1")  # nothing changed: no step
    with pytest.warns(StepDeferredWarning, match=r"the step after run: f = open\('held.txt', 'w'\) was deferred"):
        sb.run("f = open('held.txt', 'w')\nf.write('h')")  # still open: deferred
    sb.run("f.close()\nopen('c.txt', 'w').write('c')")
    log = sb.log()
    assert [s.step for s in log] == [3, 2, 1]
    assert log[2].label == "run: open('a.txt', 'w').write('a')"
    assert log[1].label == "exec: sh -c echo b > b.txt"
    assert log[0].label == "run: f.close() (merged, deferred while busy: run: f = open('held.txt', 'w'))"
    assert {p for p, _ in log[0].paths} == {"held.txt", "c.txt"}
    assert sb.run("open('a.txt').read() + open('c.txt').read()").value == "'ac'"
    assert not (target / "a.txt").exists()


def test_rejections_come_back_with_their_reasons(sb, state_dir):
    import subprocess
    from layover._helper import find_binary
    sb.run("open('a.txt', 'w').write('a\\n')\nopen('b.txt', 'w').write('b\\n')")
    assert sb.rejections() == []
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    r = subprocess.run([find_binary(), "reject", sb.name, "a.txt", "-m", "no a please"], capture_output=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    got = sb.rejections()
    assert [(x.seq, x.path, x.hunk, x.reason, x.state) for x in got] == [(1, "a.txt", 0, "no a please", "rejected")]
    sb.run("open('a.txt', 'w').write('a again\\n')")
    assert [(x.path, x.state, x.why) for x in sb.rejections()] == [("a.txt", "superseded", "changed since")]
