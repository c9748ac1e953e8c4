"""Attack pass 18 (27 Nov): invariant 7, "bad input is a clear error", from
the outside: the CLI's arguments, `layover mcp`'s tool arguments, the Python
bindings' arguments. Each test failed before its fix."""
import os

import pytest

from apply_util import python_session_stopping_at_commit, stopped_apply
from conftest import snapshot
from mcp_util import client, proj, text  # noqa: F401 (fixtures)

# Every verb that names one session and would act on the most recent one when
# given "" (`layover discard "$S"` with S unset): discard --now deleted it.
EMPTY_NAME = [
    ["discard", ""], ["discard", "", "--now"], ["rollback", "", "0"], ["revert", "", "1"], ["fork", "", "copy"],
    ["blame", "", "notes.txt"], ["compare", "", "s1"], ["status", ""], ["log", ""], ["rejections", ""],
]


@pytest.mark.parametrize("args", EMPTY_NAME, ids=[" ".join(a) for a in EMPTY_NAME])
def test_an_empty_session_name_is_refused_never_the_most_recent_session(lo, args):
    lo.run("echo more >> notes.txt", session="s1", check=True)
    before = snapshot(lo.state)
    r = lo(*args)
    err = r.stderr.decode()
    assert r.returncode != 0 and r.stdout == b"", (r.returncode, r.stdout, err)
    assert len(err.splitlines()) == 1 and "empty" in err and "'layover sessions'" in err, err
    assert snapshot(lo.state) == before  # nothing moved, deleted, forked or rolled back
    assert "M  notes.txt" in lo("status", "s1").stdout.decode()


def test_an_empty_diff_source_is_refused_and_none_still_means_the_most_recent(lo):
    lo.run("echo more >> notes.txt", session="s1", check=True)
    r = lo("diff", "")
    assert r.returncode == 2 and r.stdout == b"", r
    assert r.stderr.decode().count("\n") == 1 and "empty" in r.stderr.decode(), r
    for verb in ("status", "diff", "log", "rejections"):  # SESSION left out: the most recent, as before
        r = lo(verb)
        assert r.returncode in (0, 1) and r.stdout, (verb, r)


FORK_AND_CHECKPOINT = [
    (["fork", "s1"], "a SESSION and a NEW session name", "layover fork --help"),
    (["fork", "s1", "n", "--at"], "--at needs a step number N", "layover fork --help"),
    (["fork", "s1", "n", "--at", ""], "--at takes a step number N (see 'layover log'), not ''", "layover fork --help"),
    (["fork", "s1", "n", "--at", "x"], "not 'x'", "layover fork --help"),
    (["checkpoint", "s1", "-m"], "-m needs a LABEL", "layover checkpoint --help"),
]


@pytest.mark.parametrize("args,names,fix", FORK_AND_CHECKPOINT, ids=[" ".join(c[0]) for c in FORK_AND_CHECKPOINT])
def test_fork_and_checkpoint_usage_errors_are_one_line_naming_the_flag(lo, args, names, fix):
    # Before: fork printed its bare usage line (naming nothing), `--at ""`
    # forked everything as if no --at was given, and `checkpoint S -m` said
    # "unknown option '-m'".
    lo.run("echo more >> notes.txt", session="s1", check=True)
    r = lo(*args)
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b"", err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("layover: %s: " % args[0]) and names in err, err
    assert err.endswith("; see '%s'\n" % fix), err
    assert not (lo.state / "sessions" / "n").exists()


def test_mcp_a_nul_in_a_path_command_or_label_is_an_argument_error_and_ends_no_step(client, proj):
    # Before: diff's paths and checkpoint's label failed as "internal error
    # (ValueError)", write_file's path as "bad arguments: embedded null byte"
    # inside, and each refused mutating call still tried to end a step.
    c = client()
    calls = [("diff", {"paths": ["a\0b"]}, "'paths'"), ("checkpoint", {"label": "a\0b"}, "'label'"),
             ("write_file", {"path": "a\0b", "content": "x"}, "'path'"),
             ("run_command", {"command": "echo a\0b"}, "'command'"),
             ("run_command", {"command": "true", "cwd": "\0"}, "'cwd'"),
             ("read_file", {"path": "x\0"}, "'path'"), ("list_directory", {"path": "\0"}, "'path'"),
             ("search_files", {"pattern": "x", "glob": "*\0"}, "'glob'"),
             ("edit_file", {"path": "\0", "old_string": "a", "new_string": "b"}, "'path'")]
    for name, args, arg in calls:
        r = c.call(name, **args)
        assert r["isError"], (name, r)
        assert text(r) == "%s: argument %s holds a NUL byte (\\u0000), which no path, command or label can hold" \
            % (name, arg) or (name == "diff" and "'paths' holds a NUL byte" in text(r)), (name, text(r))
    # Content, stdin and old/new strings may hold one.
    assert not c.call("write_file", path="nul.bin", content="a\0b")["isError"]
    assert not c.call("run_command", command="cat", stdin="a\0b")["isError"]
    assert c.close() == 0
    err = c.stderr()
    assert "internal error" not in err and "failed: ValueError" not in err, err
    assert "was not made" not in err, err  # no step tried after a refused call


def test_python_step_numbers_and_nul_arguments_are_refused_naming_them(require_sandbox, state_dir, home):
    from layover import Sandbox
    sb = Sandbox(home, session="py18", state_dir=state_dir, steps=True)
    try:
        # Before: the helper's refusal, "rollback: unknown option '-1'; see
        # 'layover rollback --help'", named a flag no Python caller typed.
        for call in (lambda: sb.rollback(-1), lambda: sb.revert(0), lambda: sb.changes(step=-2),
                     lambda: sb.fork("f18", at=-1)):
            with pytest.raises(ValueError, match=r"must be a step number of [01] or more \(see log\(\)\), not -?\d"):
                call()
        for call in (lambda: sb.rollback("1"), lambda: sb.revert(1.0), lambda: sb.fork("f18", at=True)):
            with pytest.raises(TypeError, match=r"must be a step number \(an int, see log\(\)\)"):
                call()
        # Before: subprocess's bare "embedded null byte".
        with pytest.raises(ValueError, match=r"an argument of 'layover diff' holds a NUL byte.*'a\\x00b'"):
            sb.diff(["a\0b"])
        with pytest.raises(ValueError, match=r"an argument of 'layover checkpoint' holds a NUL byte"):
            sb.checkpoint("a\0b")
        # Before: with steps=True, code holding a NUL in its first line ran,
        # then the step's label raised ValueError in place of its result.
        r = sb.run("open('made.txt', 'w').write('x')  # \0 in a comment")
        assert r.error is None or "null" in r.error, r
        r = sb.run("open('made2.txt', 'w').write('y')")
        assert r.error is None, r
        assert not any("\0" in s.label for s in sb.log())
    finally:
        sb.close()
    assert not os.path.exists(os.path.join(str(home), "made2.txt"))


@pytest.mark.parametrize("meta", ['{"pid": "x"}', '{"name": 5', '{"hidden": [5]}', None],
                         ids=["a field of another type", "not JSON", "a hidden entry not an object", "dir mode 000"])
def test_an_unreadable_session_is_named_with_why_never_a_crash_or_no_such_session(lo, meta):
    # Before: a field of another type aborted `sessions`, `status` and every
    # verb listing sessions (exit 134); an unreadable session was "no session
    # named 's1'", and `run --session s1` said its dir "exists without
    # metadata; remove it", which would drop its changes.
    lo.run("echo more >> notes.txt", session="s1", check=True)
    lo.run("echo other > other.txt", session="s2", check=True)
    d = lo.session_dir("s1")
    good = (d / "meta.json").read_bytes()
    try:
        if meta is None:
            d.chmod(0)
        else:
            (d / "meta.json").write_text(meta)
        r = lo("sessions")
        assert r.returncode == 0 and b"s2" in r.stdout, r  # the others still listed
        for args in (["status", "s1"], ["discard", "s1", "--now"], ["log", "s1"]):
            r = lo(*args)
            err = r.stderr.decode()
            assert r.returncode == 1 and len(err.splitlines()) == 1, (args, err)
            assert err.startswith("layover: session 's1' cannot be read: "), (args, err)
            assert ("Permission denied" if meta is None else "is corrupt") in err, err
        r = lo.run("true", session="s1")
        err = r.stderr.decode()
        assert r.returncode == 125 and "session 's1' cannot be resumed: " in err, err
        assert "remove it" not in err, err
    finally:
        d.chmod(0o700)
        (d / "meta.json").write_bytes(good)
    assert "M  notes.txt" in lo("status", "s1").stdout.decode()


def test_python_exec_refuses_a_nul_and_a_non_bytes_input_naming_them(require_sandbox, state_dir, home):
    # Before: a NUL came back as SandboxError "exec inside the sandbox failed:
    # ValueError: embedded null byte", naming nothing, and input=5 sent five
    # NUL bytes (bytes(5)) where subprocess raises TypeError.
    from layover import Sandbox
    with Sandbox(home, session="py18x", state_dir=state_dir, steps=True) as sb:
        for call, what in ((lambda: sb.exec(["echo", "a\0b"]), r"an argument holds a NUL byte.*'a\\x00b'"),
                           (lambda: sb.exec("echo \0", shell=True), r"the command holds a NUL byte"),
                           (lambda: sb.exec(["env"], env={"A": "b\0"}), r"an env name or value holds a NUL byte"),
                           (lambda: sb.exec(["pwd"], cwd="x\0"), r"cwd holds a NUL byte")):
            with pytest.raises(ValueError, match="exec\\(\\): " + what):
                call()
        with pytest.raises(TypeError, match=r"exec\(\): input must be bytes or str, as in subprocess, not int"):
            sb.exec(["cat"], input=5)
        assert sb.exec(["cat"], input=bytearray(b"hi")).stdout == b"hi"
        assert not any("\0" in s.label for s in sb.log())


def test_mcp_a_bad_session_name_exits_at_once_and_a_bad_run_option_claims_no_kept_session(client, proj, state_dir):
    # Before: `--session ""` (an unset variable) served a fresh session instead
    # of resuming, `--session a/b` served on and failed each call, and a bad
    # run option (`--timeout forever`) made every call say "session ... is
    # kept" of a session run never made.
    import subprocess
    from conftest import LAYOVER
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    for bad in ("", "a/b", "-x"):
        r = subprocess.run([LAYOVER, "mcp", "--target", str(proj), "--session", bad], capture_output=True,
                           text=True, env=env, stdin=subprocess.DEVNULL, timeout=60)
        assert r.returncode == 2 and r.stdout == "", r
        assert r.stderr == "layover: mcp: --session %r: use 1-64 of A-Z a-z 0-9 . _ -, not starting with -; " \
                           "see 'layover mcp --help'\n" % bad, r.stderr
    c = client("--timeout", "forever", session="mcp-bad-opt")
    r = c.call("read_file", path="README.md")
    assert r["isError"], r
    assert text(r) == "read_file: layover: the sandbox could not start (layover: run: bad --timeout 'forever'; use " \
                      "e.g. 90s, 5m, 2h, 1d or none; see 'layover run --help'); fix that in the server's options " \
                      "and start it again", text(r)
    c.close()
    assert "is kept" not in c.stderr() and " kept." not in c.stderr(), c.stderr()
    assert not (state_dir / "sessions" / "mcp-bad-opt").exists()


def _stopped(p):
    import time
    for _ in range(600):
        with open("/proc/%d/stat" % p.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return True
        if p.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def _fault_then(lo, args, sig):
    """Run `layover ARGS` to the point where its patch is whole in a temporary
    file (fault point save:written), send sig, and let it go on."""
    import signal
    import subprocess
    from conftest import LAYOVER
    p = subprocess.Popen([LAYOVER, *args], env=dict(lo.env, LAYOVER_FAULT="save:written:1:stop"),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         cwd=str(lo.target))
    assert _stopped(p), p.communicate()
    p.send_signal(sig)
    p.send_signal(signal.SIGCONT)
    p.communicate(timeout=60)
    return p.returncode


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_during_save_leaves_no_hidden_partial_patch_and_the_old_file(lo, tmp_path, sig):
    # Before: each Ctrl+C of a save left `.FILE.tmp-N`, as big as the patch,
    # beside FILE, for good.
    import signal
    lo.run("echo more >> notes.txt; head -c 100000 /dev/urandom > blob.bin", session="s1", check=True)
    out = tmp_path / "out" / "p.tar.zst"
    out.parent.mkdir()
    # The patch saved before: a real one (save replaces only a patch, never another file: newuser9).
    lo.run("echo before > before.txt", session="s0", check=True)
    assert lo("save", "s0", "-o", str(out)).returncode == 0
    before = out.read_bytes()
    assert _fault_then(lo, ["save", "s1", "-o", str(out)], getattr(signal, sig)) == -getattr(signal, sig)
    assert sorted(os.listdir(str(out.parent))) == ["p.tar.zst"]
    assert out.read_bytes() == before
    assert "M  notes.txt" in lo("status", "s1").stdout.decode()


def test_a_killed_apply_or_diff_of_a_session_leaves_no_copy_of_it_in_the_state_dir(lo):
    # Before: apply, diff and show of a session capture it into
    # STATE/.capture-NAME-N.tar.zst, removed only when the verb ended well: a
    # Ctrl+C or a kill left a full copy of the session there, for good.
    import signal
    lo.run("echo more >> notes.txt", session="s1", check=True)

    def captures():
        return [n for n in os.listdir(str(lo.state)) if "capture" in n]
    assert _fault_then(lo, ["apply", "s1", "--dry-run"], signal.SIGINT) == -signal.SIGINT
    assert captures() == []
    assert _fault_then(lo, ["diff", "s1"], signal.SIGKILL) == -signal.SIGKILL
    assert len(captures()) == 1, captures()  # a SIGKILL cannot be caught ...
    r = lo("diff", "s1", "--stat")
    assert r.returncode == 1 and b"notes.txt" in r.stdout, r
    assert captures() == []  # ... but the next capture sweeps it: its pid is gone
    r = lo("apply", "s1", "--yes")
    assert r.returncode == 0, r
    assert captures() == [] and (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\nmore\n"


def _many_files_session(lo):
    for i in range(1, 13):
        (lo.target / ("f%d" % i)).write_text("orig%d\n" % i)
    lo.run("for i in $(seq 1 12); do echo new$i > f$i; done; echo add > added.txt", session="s1", check=True)
    return snapshot(lo.target)


def _journal_and_temps(lo):
    j = lo.state / "journal"
    return (sorted(os.listdir(str(j))) if j.is_dir() else []) + \
        [n for n in os.listdir(str(lo.target)) if n.startswith(".layover-tmp")]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_during_apply_staging_rolls_back_and_during_the_commit_finishes(lo, sig):
    # Before: a Ctrl+C anywhere in apply left the tree with staged
    # `.layover-tmp.*` files, or half-applied, and a journal, until the next
    # apply or undo of that tree reverted it.
    import signal
    import subprocess
    from conftest import LAYOVER
    signum = getattr(signal, sig)
    before = _many_files_session(lo)

    def apply_stopped_at(point):
        p = subprocess.Popen([LAYOVER, "apply", "s1", "--yes"], env=dict(lo.env, LAYOVER_FAULT=point + ":stop"),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             cwd=str(lo.target))
        assert _stopped(p), p.communicate()
        p.send_signal(signum)
        p.send_signal(signal.SIGCONT)
        out, err = p.communicate(timeout=60)
        return p.returncode, out.decode(), err.decode()

    rc, out, err = apply_stopped_at("apply:stage:3")
    assert rc == -signum and out == "", (rc, out, err)
    assert err == "layover: apply: stopped by %s; nothing was applied\n" % (
        "SIGINT (Ctrl+C)" if sig == "SIGINT" else sig), err
    assert snapshot(lo.target) == before and _journal_and_temps(lo) == []
    assert "kept" in lo("sessions").stdout.decode()

    rc, out, err = apply_stopped_at("apply:commit:2")
    assert rc == -signum, (rc, out, err)
    assert out.startswith("applied 13 change(s) to ") and "undo with: layover undo --last" in out, out
    assert _journal_and_temps(lo) == []
    assert all((lo.target / ("f%d" % i)).read_text() == "new%d\n" % i for i in range(1, 13))
    assert "applied" in lo("sessions").stdout.decode()
    r = lo("undo", "--last", "--target", lo.target, "--yes")
    assert r.returncode == 0 and b"reverted an interrupted" not in r.stderr, r
    assert snapshot(lo.target) == before


def test_python_ctrl_c_in_apply_lets_the_helper_finish_never_kills_it(require_sandbox, state_dir, home):
    # Before: subprocess.run SIGKILLed `layover apply` 0.25 s after the
    # KeyboardInterrupt: mid-commit, the tree was left half-applied, with
    # `.layover-tmp.*` files and a journal, until the next apply or undo.
    import signal
    import threading
    import time
    sb = python_session_stopping_at_commit(home, state_dir, "py18c")

    def ctrl_c():
        for _ in range(1200):
            pid = stopped_apply("py18c")
            if pid:
                os.kill(os.getpid(), signal.SIGINT)  # KeyboardInterrupt in sb.apply()
                time.sleep(0.5)  # longer than subprocess.run's 0.25 s before its kill
                os.kill(pid, signal.SIGCONT)
                return
            time.sleep(0.05)
    t = threading.Thread(target=ctrl_c)
    t.start()
    with pytest.raises(KeyboardInterrupt):
        sb.apply()
    t.join()
    assert all((home / ("f%d" % i)).read_text() == "new%d\n" % i for i in range(1, 13))
    assert [n for n in os.listdir(str(home)) if n.startswith(".layover-tmp")] == []
    assert os.listdir(str(state_dir / "journal")) == []


def test_a_ctrl_c_during_undo_finishes_it_first(lo):
    # Before: the undo stopped part way, the tree mixed, until the next undo
    # or apply finished it from its journal.
    import signal
    import subprocess
    from conftest import LAYOVER
    before = _many_files_session(lo)
    assert lo("apply", "s1", "--yes").returncode == 0
    p = subprocess.Popen([LAYOVER, "undo", "--last", "--target", str(lo.target), "--yes"],
                         env=dict(lo.env, LAYOVER_FAULT="undo:restore:3:stop"), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(lo.target))
    assert _stopped(p), p.communicate()
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGCONT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGINT and out.decode().startswith("restored 13 path(s)"), (out, err)
    assert snapshot(lo.target) == before and _journal_and_temps(lo) == []


def test_mcp_concurrent_writing_calls_never_meet_a_steps_read_only_freeze(client):
    # Before: each mutating call's step froze the overlay (read-only for a
    # moment) while other calls ran: 27 of 80 concurrent write_file and
    # run_command calls failed with "Read-only file system".
    c = client()
    rids = []
    for i in range(30):
        rids.append(c.start("tools/call", {"name": "write_file", "arguments": {"path": "w/f%d.txt" % i,
                                                                              "content": "x" * 1000}}))
        rids.append(c.start("tools/call", {"name": "run_command", "arguments": {"command": "echo %d > r%d" % (i, i)}}))
    rids.append(c.start("tools/call", {"name": "checkpoint", "arguments": {"label": "amid them"}}))
    seen = {}
    while len(seen) < len(rids):
        m = c.wait_for(lambda m: m.get("id") in rids and ("result" in m or "error" in m))
        seen[m["id"]] = m
    failed = [text(m["result"]) for m in seen.values() if m["result"]["isError"]]
    assert failed == [], failed
    r = c.call("log")
    assert r["structuredContent"]["steps"], r  # the steps were made, some merged
    assert c.close() == 0


def test_python_steps_with_run_and_exec_in_threads_never_meet_a_freeze(require_sandbox, state_dir, home):
    # Before: a steps=True Sandbox's step after one thread's run() froze the
    # overlay while another thread's run() wrote: OSError EROFS inside.
    import threading
    from layover import Sandbox
    bad = []
    with Sandbox(home, session="py18t", state_dir=state_dir, steps=True) as sb:
        def worker(i):
            for k in range(4):
                n = i * 100 + k
                if i % 2:
                    r = sb.exec(["sh", "-c", "echo %d > e%d && echo %d" % (n, n, n)])
                    if r.stdout.strip() != str(n).encode():
                        bad.append(r)
                else:
                    r = sb.run("import time; time.sleep(0.02); open('t%d', 'w').write('x'); %d" % (n, n))
                    if r.value != str(n):
                        bad.append(r)
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert bad == []
        assert sb.log()


@pytest.mark.parametrize("verb", [["status", "s1"], ["status", "s1", "--json"], ["sessions"], ["log", "s1"]])
def test_a_closed_stdout_is_said_never_exit_0_with_the_output_lost(lo, verb):
    # Before: `layover status >&-` exited 0, its output lost; and fd 1 went to
    # the first file it opened (its status cache's temporary file, written
    # O_WRONLY), so a stray write could have landed there.
    import shlex
    import subprocess
    from conftest import LAYOVER
    lo.run("echo more >> notes.txt", session="s1", check=True)
    r = subprocess.run(["/bin/sh", "-c", "exec %s %s >&-" % (shlex.quote(LAYOVER), " ".join(verb))],
                       env=lo.env, capture_output=True, stdin=subprocess.DEVNULL, cwd=str(lo.target))
    assert r.returncode == 1, r
    assert r.stderr.decode() == "layover %s: stdout is closed, so its output was lost; run it with stdout open " \
                                "(> /dev/null to drop the output)\n" % verb[0], r.stderr
    assert "M  notes.txt" in lo("status", "s1").stdout.decode()


def test_mcp_on_exit_save_to_a_relative_file_is_the_servers_cwds_never_the_real_tree(require_sandbox, proj, state_dir,
                                                                                      tmp_path):
    # Before: the sandbox's helper runs in the target, so save:work.tar.zst
    # wrote the patch into the real tree.
    from mcp_util import McpClient
    c = McpClient(proj, state_dir, "mcp-rel", "--on-exit", "save:work.tar.zst", cwd=str(tmp_path))
    try:
        c.initialize()
        assert not c.call("write_file", path="n.txt", content="x")["isError"]
        assert c.close() == 0
    finally:
        c.kill()
    assert (tmp_path / "work.tar.zst").is_file()
    assert not (proj / "work.tar.zst").exists() and not (proj / "n.txt").exists()


def test_mcp_a_relative_hide_is_the_servers_cwds_never_the_targets(require_sandbox, proj, state_dir):
    # Before: run's relative --hide PATH is "relative to the current dir", and
    # the server runs its helper in the target: `--hide secret.txt` from the
    # dir holding it hid TARGET/secret.txt and left the secret readable.
    from mcp_util import McpClient
    secret = proj.parent / ("secret-%s.txt" % proj.name)
    secret.write_text("TOPSECRET\n")
    c = McpClient(proj, state_dir, "mcp-hide", "--hide", secret.name, cwd=str(proj.parent))
    try:
        c.initialize()
        r = c.call("run_command", command="cat %s" % secret)
        assert "TOPSECRET" not in text(r), text(r)
        assert c.close() == 0
    finally:
        c.kill()
