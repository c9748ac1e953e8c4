"""Entries an agent can make that are unusual but legal, through run -> apply -> undo as an
ordinary user (found by the attack pass of 26 Nov, "pass 11"): times past what int64
nanoseconds hold, read-only and mode-000 directories, layover's own reserved names."""
import json
import os
import stat
import time

from conftest import missing_feature, snapshot

# The latest time a patch holds (int64 nanoseconds, whole seconds kept below the limit):
# 2262-04-11. ext4 itself holds times up to 2446.
MAX_SECONDS = 9223372035


def run_edit(lo, script, session):
    r = lo.run("cd '%s' && %s" % (lo.target, script), session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def apply_json(lo, *args):
    r = lo("apply", *args, "--json")
    return r, json.loads(r.stdout.decode() or "null")


def test_a_time_past_2262_is_kept_as_the_latest_time_a_patch_holds_never_wrapped_to_1901(lo, tmp_path):
    # 2400-01-01 is 13,569,465,600 s: times 1e9 it passes int64, and the capture's
    # nanoseconds wrapped to 1861, which ext4 stored as 1901-12-13.
    run_edit(lo, "echo f > far.txt && touch -d @13569465600 far.txt && touch -d @4294967296 y2106.txt",
             session="far")
    r = lo("status", "far", "--json")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "far.tar.zst"
    r = lo("save", "far", "-o", patch)
    assert r.returncode == 0, r.stderr
    r = lo("show", patch)
    assert r.returncode == 0, r.stderr
    r, out = apply_json(lo, "far", "--yes")
    assert r.returncode == 0, (r.stderr, out)
    assert os.lstat(str(lo.target / "far.txt")).st_mtime_ns == MAX_SECONDS * 10**9 + 999999999
    assert os.lstat(str(lo.target / "y2106.txt")).st_mtime == 4294967296
    assert (lo.target / "far.txt").read_text() == "f\n"


def modes(root):
    return {k: v for k, v in snapshot(root).items()}


def stats(root):
    """Every entry's type, mode, size and (for non-dirs) mtime, without reading any (some are mode 000)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for n in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, n))
            mt = None if stat.S_ISDIR(st.st_mode) else st.st_mtime_ns
            out[os.path.relpath(os.path.join(dirpath, n), str(root))] = (st.st_mode, st.st_size, mt)
    return out


def test_read_only_and_mode_000_directories_apply_undo_and_roll_back_as_an_ordinary_user(lo, tmp_path):
    # Moving a directory to another parent rewrites its ".." entry, which needs
    # write permission on it: a 0555 dir (a Go module cache has them) or a 0000
    # one could not go into the undo store, back out of it, or to the trash.
    # Found by the attack pass of 26 Nov: `rmdir` of a real 0555 dir failed the
    # apply; an added 0555 dir failed its undo (journal left, "remove ro:
    # Permission denied"); an added 0000 dir with content failed the apply and
    # its rollback, leaving the dir on the real tree.
    t = lo.target
    (t / "gone").mkdir()
    (t / "gone").chmod(0o555)
    (t / "was_dir").mkdir()
    (t / "was_dir").chmod(0o500)
    before = modes(t)
    run_edit(lo, "rmdir gone && rmdir was_dir && echo now a file > was_dir && "
             "mkdir ro && echo r > ro/f && chmod 555 ro && "
             "mkdir locked && echo s > locked/secret && chmod 000 locked", session="ro")
    r, out = apply_json(lo, "ro", "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    assert not os.path.lexists(str(t / "gone"))
    assert (t / "was_dir").read_text() == "now a file\n"
    assert stat.S_IMODE(os.lstat(str(t / "ro")).st_mode) == 0o555
    assert (t / "ro" / "f").read_text() == "r\n"
    assert stat.S_IMODE(os.lstat(str(t / "locked")).st_mode) == 0
    assert not os.listdir(str(lo.state / "journal"))
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert modes(t) == before
    assert stat.S_IMODE(os.lstat(str(t / "gone")).st_mode) == 0o555
    assert not os.listdir(str(lo.state / "journal"))


def test_a_failed_apply_of_a_mode_000_directory_rolls_back_whole(lo):
    t = lo.target
    before = modes(t)
    run_edit(lo, "mkdir locked && echo s > locked/secret && chmod 000 locked && echo n > notes.txt", session="fail")
    r = lo("apply", "fail", "--yes", env={"LAYOVER_FAULT": "apply:recorded:1"})
    err = r.stderr.decode(errors="replace")  # shown when the tree differs (flake1: an ASan abort said why)
    assert r.returncode == 1, err
    assert "ROLLING BACK FAILED" not in err
    assert modes(t) == before, err
    assert not os.listdir(str(lo.state / "journal")), err


def test_layovers_reserved_names_made_by_the_agent_are_marked_and_can_be_left_out(lo, tmp_path):
    # Found by the attack pass of 26 Nov: one `.layover-tmp.x` file made inside
    # refused the whole apply, even with --exclude or --only naming other paths,
    # and no list said so before the apply failed.
    t = lo.target
    before = modes(t)
    run_edit(lo, "echo t > .layover-tmp.1.2 && mkdir -p .layover-undo/abc && echo '{}' > .layover-undo/abc/undo.json"
             " && mkdir d && echo y > d/.layover-tmp.9.9 && echo ok > ok.txt", session="res")
    r = lo("status", "res")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    for name in (".layover-tmp.1.2", ".layover-undo/", "d/.layover-tmp.9.9"):
        line = next(x for x in lines if x.startswith("A  " + name))
        assert "! layover's reserved name (apply refuses it)" in line, lines
    assert not any("ok.txt" in x and "!" in x for x in lines)
    r = lo("apply", "res", "--yes")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert ("layover: apply: .layover-tmp.1.2 uses a name reserved for layover's own staging/undo "
            "(.layover-tmp.*, .layover-undo); leave it out with --exclude .layover-tmp.1.2; nothing was applied") in err
    assert modes(t) == before
    # Left out, the rest applies; the same for a saved patch.
    patch = tmp_path / "res.tar.zst"
    assert lo("save", "res", "-o", patch).returncode == 0
    r = lo("apply", patch, "--target", t, "--yes", "--only", "ok.txt")
    assert r.returncode == 0, r.stderr
    assert (t / "ok.txt").read_text() == "ok\n"
    r = lo("apply", "res", "--yes", "--force", "--exclude", ".layover-tmp.*", "--exclude", ".layover-undo")
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(str(t / "d"))) == []
    assert not os.path.lexists(str(t / ".layover-tmp.1.2"))
    assert not os.path.lexists(str(t / ".layover-undo"))


# What an agent inside a session over a tree runs to forge an undo record for a dir
# below it: the real device (of "/", the same filesystem) and the dir's inode are
# what stat shows inside; a "delete" unit whose path is absent now needs no more.
FORGE = r"""
import base64, json, os, sys
b = lambda s: base64.b64encode(s.encode()).decode()
proj = sys.argv[1]
rid = "ffffffffffff"
store = os.path.join(proj, ".layover-undo", rid)
os.makedirs(os.path.join(store, "trash"))
with open(os.path.join(store, "1"), "w") as f:
    f.write("#!/bin/sh\necho hook\n")
os.chmod(os.path.join(store, "1"), 0o755)
none = {"exists": False, "type": "none", "mode": 0, "ino": 0, "size": 0, "mtime_ns": 0, "ctime_ns": 0}
unit = {"p": b(".git/hooks/pre-commit"), "op": "delete", "slot": "1", "new_ino": 0, "old_ino": 0,
        "old_mode": 0o755, "old_mtime_ns": 0, "after": none, "old_xattrs": {}, "after_tree": []}
rec = {"format": "layover-undo/1", "kind": "apply", "id": rid, "target_b64": b(proj), "dev": os.stat("/").st_dev,
       "ino": os.stat(proj).st_ino, "state": "done", "source_b64": b("s1"), "created": "2099-01-01T00:00:00Z",
       "created_ns": 4070908800000000000, "store": ".layover-undo/" + rid, "store_home": "target", "units": [unit]}
with open(os.path.join(store, "undo.json"), "w") as f:
    json.dump(rec, f)
"""


def test_an_undo_store_the_agent_forges_below_the_target_is_refused_never_undone_later(lo, tmp_path):
    # Found by attack14 (27 Nov): `.layover-undo` was reserved at the target's top
    # only. A session over a tree wrote proj/.layover-undo/ID (an undo record for
    # proj: a far-future time, a "delete" unit for .git/hooks/pre-commit, its
    # "original" in the store), listed with no mark but "executable" and applied.
    # Later, `layover undo --last --target proj` (the line apply prints for an
    # apply to proj) took that record as the newest and wrote the hook, unlisted,
    # instead of undoing the apply.
    t = lo.target
    proj = t / "proj"
    (proj / ".git" / "hooks").mkdir(parents=True)
    (proj / "a.txt").write_text("one\n")
    (t / "forge.py").write_text(FORGE)
    before = modes(t)
    if os.stat("/").st_dev != os.stat(str(t)).st_dev:
        # (Skipped only with LAYOVER_ALLOW_SKIP=1, as every test that cannot run here.)
        missing_feature("the forged record needs the target on the root filesystem")
    run_edit(lo, "python3 forge.py %s" % proj, session="forge")
    r = lo("status", "forge")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.decode().splitlines() if x.startswith("A  proj/.layover-undo/"))
    assert "! layover's reserved name (apply refuses it)" in line, line
    for args in (["--dry-run"], ["--yes"]):
        r = lo("apply", "forge", *args)
        assert r.returncode == 1, r.stdout
        assert ("proj/.layover-undo uses a name reserved for layover's own staging/undo (.layover-tmp.*, "
                ".layover-undo); leave it out with --exclude proj/.layover-undo; nothing was applied"
                in r.stderr.decode()), r.stderr
    assert modes(t) == before
    # An apply to proj, then the line it prints, undoes that apply.
    r = lo("run", "--target", proj, "--session", "edit", "--on-exit", "keep", "--", "/bin/sh", "-c",
           "echo two > a.txt", cwd=proj)
    assert r.returncode == 0, r.stderr
    r = lo("apply", "edit", "--yes")
    assert r.returncode == 0, r.stderr
    assert (proj / "a.txt").read_text() == "two\n"
    r = lo("undo", "--last", "--target", proj)
    assert r.returncode == 0, r.stderr
    assert (proj / "a.txt").read_text() == "one\n"
    assert not (proj / ".git" / "hooks" / "pre-commit").exists()
    assert modes(t) == before


def test_an_apply_never_writes_into_layovers_own_state_dir(lo, tmp_path):
    # docs/cli.md: the state dir must not overlap the target. `run` refused that;
    # apply did not (found by the attack pass of 26 Nov): `--target STATE` wrote
    # into the state dir, and with LAYOVER_STATE_DIR inside the target a patch
    # could add a journal, an undo record or a session there.
    t = lo.target
    (t / ".lstate").mkdir(mode=0o700)
    run_edit(lo, "mkdir -p .lstate/journal && echo '{}' > .lstate/journal/planted.json && echo ok > ok.txt",
             session="st")
    patch = tmp_path / "st.tar.zst"
    assert lo("save", "st", "-o", patch).returncode == 0
    inner = dict(lo.env, LAYOVER_STATE_DIR=str(t / ".lstate"))
    lo("sessions", env=inner)  # the state dir's own layout, made on first use
    before = modes(t)
    for args in (["--dry-run"], ["--yes"]):
        r = lo("apply", patch, "--target", t, *args, env=inner)
        assert r.returncode == 1, r.stdout
        err = r.stderr.decode()
        assert (".lstate/journal would change layover's state dir %s/.lstate (sessions, journals, undo "
                "records); leave it out with --exclude .lstate/journal; nothing was applied" % t) in err, err
    assert modes(t) == before
    r = lo("apply", patch, "--target", t, "--yes", "--exclude", ".lstate", env=inner)
    assert r.returncode == 0, r.stderr
    assert (t / "ok.txt").read_text() == "ok\n"
    assert not (t / ".lstate" / "journal" / "planted.json").exists()
    # A target at or inside the state dir.
    for where in (lo.state, lo.state / "sessions"):
        r = lo("apply", patch, "--target", where, "--yes")
        assert r.returncode == 1
        assert ("target %s lies in layover's state dir %s" % (where, lo.state)) in r.stderr.decode()
    assert not (lo.state / "ok.txt").exists() and not (lo.state / "sessions" / "ok.txt").exists()


def test_an_empty_target_or_filter_value_is_a_usage_error_never_the_default(lo, tmp_path):
    # `apply P --target "$UNSET"` applied to the manifest's target (the home) as
    # if no --target had been given (found by the attack pass of 26 Nov).
    run_edit(lo, "echo ok > ok.txt", session="e")
    patch = tmp_path / "e.tar.zst"
    assert lo("save", "e", "-o", patch).returncode == 0
    before = modes(lo.target)
    for args in (["apply", patch, "--target", "", "--yes"], ["apply", patch, "--target=", "--yes"],
                 ["apply", "e", "--only", "", "--yes"], ["undo", "--last", "--target", ""],
                 ["undo", "--list", "--target="]):
        r = lo(*args)
        assert r.returncode == 2, (args, r.stdout)
        assert b"needs a value" in r.stderr, r.stderr
    assert modes(lo.target) == before


def test_a_wh_name_made_by_the_agent_is_marked_and_the_refusal_names_ignore(lo):
    # `.wh.*` marks a deletion in the patch format, so save (and apply, which
    # saves first) cannot store one; found by the attack pass of 26 Nov: the
    # refusal said "rename it", which a reviewer cannot do, and status showed
    # nothing; --exclude acts after the save and cannot help.
    t = lo.target
    before = modes(t)
    run_edit(lo, "echo a > .wh.foo && echo ok > ok.txt", session="wh")
    r = lo("status", "wh")
    line = next(x for x in r.stdout.decode().splitlines() if ".wh.foo" in x)
    assert line == "A  .wh.foo  ! .wh. name (cannot be saved: --ignore it)", line
    r = lo("apply", "wh", "--yes")
    assert r.returncode == 1
    assert ("cannot store .wh.foo: names starting with .wh. mark deletions in the patch format (OCI); leave it out "
            "with --ignore .wh.foo (or rename it in the session)") in r.stderr.decode()
    assert modes(t) == before
    r = lo("apply", "wh", "--yes", "--ignore", ".wh.foo")
    assert r.returncode == 0, r.stderr
    assert (t / "ok.txt").read_text() == "ok\n" and not os.path.lexists(str(t / ".wh.foo"))


def test_a_fifo_given_as_the_patch_is_refused_not_waited_on(lo, tmp_path):
    # Found by the attack pass of 26 Nov: show, diff, apply, undo and log of a
    # fifo hung in open() until something wrote to it.
    fifo = tmp_path / "patch.tar.zst"
    os.mkfifo(str(fifo))
    for args in (["show", fifo], ["show", "--steps", fifo], ["diff", fifo], ["apply", fifo, "--dry-run"],
                 ["undo", fifo], ["log", fifo]):
        r = lo(*args, timeout=20)
        assert r.returncode in (1, 2), (args, r.returncode)
        assert ("patch %s is not a regular file" % fifo) in r.stderr.decode(), (args, r.stderr)


def test_a_real_file_its_owner_cannot_read_is_a_conflict_that_force_overrides(lo):
    # Found by the attack pass of 26 Nov: a mode-000 real file that the session
    # changed, or one inside a dir it deleted, ended the apply with
    # "read z to compare it: Permission denied" (then "reading the real z"),
    # with no way through but a chmod.
    t = lo.target
    (t / "z").write_text("a\n")
    (t / "gone").mkdir()
    (t / "gone" / "q").write_text("q\n")
    (t / "z").chmod(0)
    (t / "gone" / "q").chmod(0)
    before = stats(t)
    run_edit(lo, "chmod 600 z && echo b > z && chmod 000 z && rm -rf gone", session="unr")
    # diff cannot read them either: shown as binary (it failed whole: "reading the real z").
    r = lo("diff", "unr")
    assert r.returncode == 1, r.stderr
    assert "Binary files a/z and b/z differ\n" in r.stdout.decode() and "a/gone/q and /dev/null" in r.stdout.decode()
    r = lo("apply", "unr", "--yes")
    assert r.returncode == 1
    err = r.stderr.decode()
    for p in ("z", "gone/q"):
        assert ("  %s: cannot be read to compare it with the patch's base (Permission denied): make it readable "
                "(chmod u+r) to check it, or --force to replace it unread" % p) in err, err
    assert stats(t) == before
    r, out = apply_json(lo, "unr", "--yes", "--force")
    assert r.returncode == 0, (r.stderr, out)
    assert not os.path.lexists(str(t / "gone"))
    assert [a["path"] for a in out["applied"]] == ["gone", "z"] and stats(t)["z"] != before["z"]  # a new inode's mtime
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr
    assert stats(t) == before


def test_a_path_longer_than_a_patch_holds_is_refused_at_the_save_naming_ignore(lo, tmp_path):
    # The kernel lets a tree nest without end (PATH_MAX bounds one call); a
    # patch holds paths of 65,536 bytes at most. Found by the attack pass of
    # 26 Nov: save wrote a patch its own reader refused, "saved" said so, and
    # apply, diff (even with --exclude) failed naming a temp file and a
    # 75,000-byte path, no fix.
    t = lo.target
    before = modes(t)
    top = "n" * 250
    script = ("python3 -c \"import os\nfd = os.open('.', os.O_RDONLY)\nfor i in range(300):\n"
              "    os.mkdir('%s', dir_fd=fd); n = os.open('%s', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n\n"
              "os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\"; echo ok > ok.txt") % (top, top)
    run_edit(lo, script, session="deep")
    # status says so before any save (it did not: only save refused it).
    r = lo("status", "deep", "--json")
    marked = {c["path"] for c in json.loads(r.stdout)
              if "path too long for a patch (cannot be saved: --ignore it)" in c.get("risks", [])}
    assert len(marked) > 0 and all(len(p.encode()) + 13 > 65536 for p in marked), sorted(marked)[:1]
    assert any(p.endswith("/f") for p in marked)
    out = tmp_path / "deep.tar.zst"
    r = lo("save", "deep", "-o", out)
    assert r.returncode == 1 and not out.exists()
    err = r.stderr.decode()
    assert len(err.splitlines()) == 1 and len(err) < 1500, err[:2000]
    assert "longer than a patch holds (65536 bytes); leave it out with --ignore " + top in err, err
    r = lo("apply", "deep", "--yes")
    assert r.returncode == 1 and "--ignore " + top in r.stderr.decode()
    assert modes(t) == before
    r = lo("apply", "deep", "--yes", "--ignore", top)
    assert r.returncode == 0, r.stderr
    assert (t / "ok.txt").read_text() == "ok\n" and not os.path.lexists(str(t / top))


def test_a_tree_nested_past_the_open_file_limit_is_one_line_naming_the_limit_and_ignore(lo, tmp_path):
    # The walk holds a dir fd a level; under the kernel's default hard limit
    # (4096 where no service manager raises it) an agent's 5,000-deep chain,
    # a 10,000-byte path a patch holds, is past it. Found by the attack pass of
    # 26 Nov: status and save failed with "listing d/d/.../d: dup: Too many
    # open files", one 10,000-byte line naming no fix.
    import resource
    import subprocess
    from conftest import LAYOVER
    script = ("python3 -c \"import os\nfd = os.open('.', os.O_RDONLY)\nfor i in range(1500):\n"
              "    os.mkdir('d', dir_fd=fd); n = os.open('d', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n\n"
              "os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\"; echo ok > ok.txt")
    run_edit(lo, script, session="nest")

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    for verb in (["status", "nest"], ["save", "nest", "-o", str(tmp_path / "n.tar.zst")]):
        r = subprocess.run([LAYOVER, *verb], capture_output=True, env=lo.env, cwd=str(lo.target),
                           stdin=subprocess.DEVNULL, preexec_fn=low_limit, timeout=60)
        err = r.stderr.decode()
        assert r.returncode == 1 and len(err.splitlines()) == 1 and len(err) < 1000, (verb, err[:1500])
        assert "open-file limit" in err and "ulimit -Hn" in err and "--ignore d" in err, err
    r = subprocess.run([LAYOVER, "status", "nest", "--ignore", "d"], capture_output=True, env=lo.env,
                       cwd=str(lo.target), stdin=subprocess.DEVNULL, preexec_fn=low_limit, timeout=60)
    assert r.returncode == 0 and "ok.txt" in r.stdout.decode(), r.stderr


def test_a_discard_now_killed_midway_leaves_no_unlisted_session_dir(lo):
    # Found by the attack pass of 26 Nov: `discard --now` removed the
    # session's dir in place, meta.json first, so a kill (or Ctrl+C during a
    # long removal of what an agent wrote) left the rest in sessions/,
    # listed by nothing and swept by nothing.
    import signal
    import subprocess
    from conftest import LAYOVER
    run_edit(lo, "mkdir many && cd many && seq 1 4000 | xargs touch", session="big")
    d = os.path.join(str(lo.state), "sessions", "big")
    assert os.path.exists(os.path.join(d, "meta.json"))
    p = subprocess.Popen([LAYOVER, "discard", "big", "--now"], env=lo.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while os.path.exists(os.path.join(d, "meta.json")) and p.poll() is None and time.monotonic() < deadline:
        pass
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert not os.path.lexists(d), os.listdir(d)


def test_a_step_holding_a_path_past_4096_bytes_keeps_its_record_and_may_be_rejected(lo, tmp_path):
    # A patch holds paths of 65,536 bytes; a step record held 4,096. Found by
    # the attack pass of 26 Nov: one 5,000-byte path (20 dirs of 250 bytes)
    # made its step "(no record: ...)" with +0 ~0 -0 in log, blame and the
    # patch's history: the step's every change hidden from them.
    top = "n" * 250
    deep = "/".join([top] * 20)
    script = ("python3 -c \"import os\nfd = os.open('.', os.O_RDONLY)\nfor i in range(20):\n"
              "    os.mkdir('%s', dir_fd=fd); n = os.open('%s', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = n\n"
              "os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\"; echo y > y.txt") % (top, top)
    run_edit(lo, script, session="long")
    run_edit(lo, "true", session="long")  # freezes the first run as step 1
    r = lo("log", "long", "--json")
    assert r.returncode == 0, r.stderr
    step = json.loads(r.stdout)["steps"][-1]
    assert "no record" not in step["label"] and step["added"] == 22, step
    assert (deep + "/f", "A") in [(p["path"], p["kind"]) for p in step["paths"]]
    r = lo("blame", "long", "y.txt")
    assert r.returncode == 0 and b"A" in r.stdout, r.stderr
    out = tmp_path / "long.tar.zst"
    assert lo("save", "long", "-o", out).returncode == 0
    r = lo("show", out, "--steps", "--json")
    assert r.returncode == 0 and "no record" not in r.stdout.decode(), r.stdout[:500]
    # A person may reject it, too (a rejection's path was bounded at 4,096
    # bytes: "not a clean relative path", nothing recorded).
    r = lo("reject", "long", deep + "/f", "-m", "too deep")
    assert r.returncode == 0, r.stderr[:300]
    r = lo("apply", "long", "--dry-run")
    assert r.returncode == 0 and b"/f" not in r.stdout and b"y.txt" in r.stdout, (r.stdout[-300:], r.stderr[-300:])


def test_a_file_in_the_current_dir_named_like_the_session_never_stands_in_for_it(lo, home, tmp_path):
    """Found by the attack pass of 27 Nov: a bare SESSION argument named a
    patch file when a regular file of that name was in the current dir, and
    run's own --on-exit apply (and the exit prompt) opened the session by its
    name the same way: `run --session x1 --on-exit apply` from a dir holding
    a file x1 (an earlier apply's, a clone's) applied that file, a patch
    anyone could have written, and not what the command did."""
    r = lo.run("echo PWNED > pwned.txt", session="evil")
    assert r.returncode == 0, r.stderr
    lo("save", "evil", "-o", tmp_path / "evil.tar.zst", check=True)
    lo("discard", "evil", "--now", check=True)
    (home / "x1").write_bytes((tmp_path / "evil.tar.zst").read_bytes())
    # The target is the home here, as a patch file's must be to apply without --target.
    r = lo.run("echo mine > mine.txt", session="x1", on_exit="apply", env={"HOME": str(home)})
    assert r.returncode == 0, r.stderr
    assert (home / "mine.txt").read_text() == "mine\n" and not (home / "pwned.txt").exists()
    # Typed by a person: both exist, so which one is meant is asked, nothing applied.
    r = lo.run("echo two > two.txt", session="x2")
    assert r.returncode == 0, r.stderr
    (home / "x2").write_bytes((tmp_path / "evil.tar.zst").read_bytes())
    before = snapshot(home)
    for verb in (["apply", "x2", "--yes"], ["diff", "x2"]):
        r = lo(*verb)
        assert r.returncode == 2 if verb[0] == "diff" else r.returncode == 1, (verb, r.stderr)
        assert b"'x2' names both a session and the file ./x2 here; write ./x2 for the file" in r.stderr, r.stderr
    assert snapshot(home) == before
    # Untyped (diff takes the most recent session): the session, never the file, and nothing to ask.
    r = lo("diff")
    assert r.returncode == 1 and b"two.txt" in r.stdout and b"pwned" not in r.stdout, r.stderr
    assert r.stderr.decode() == "layover: diff of session 'x2', the most recent ('layover sessions' lists them)\n"
    assert b"A pwned.txt" in lo("apply", "./x2", "--dry-run", "--target", home, check=True).stdout
    assert b"A two.txt" in lo("apply", "x2", "--dry-run", cwd=tmp_path, check=True).stdout
