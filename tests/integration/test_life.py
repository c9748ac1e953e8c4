"""Session life cycle (applied/saved/empty, --keep-empty, labels), the undo
store outside the target (undo --last/--list, retention) and `layover gc`.
Every test checks the real filesystem afterwards."""
import contextlib
import json
import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import LAYOVER, Layover, real_dir

SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"


def _same_mount(a, b):
    """True when rename works between a and b (one mount)."""
    def mnt(p):
        best = ""
        with open("/proc/self/mountinfo") as f:
            for line in f:
                mp = line.split()[4]
                if (str(p) + "/").startswith(mp.rstrip("/") + "/") and len(mp) > len(best):
                    best = mp
        return best
    return mnt(Path(a).resolve()) == mnt(Path(b).resolve())


@pytest.fixture
def proj(lo):
    """A target under a real path (/home in CI) with one file."""
    d = real_dir("life-")
    (d / "keep.txt").write_text("original\n")
    return d


def _sessions(lo):
    return json.loads(lo("sessions", "--json", check=True).stdout)


def _apply(lo, what, target, *extra, env=None):
    r = lo("apply", what, "--target", target, "--yes", *extra, env=env)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout.decode()


def _records(lo, target):
    r = lo("undo", "--list", "--target", target, "--json", check=True)
    return json.loads(r.stdout)


def test_apply_keeps_the_undo_record_in_the_state_dir_and_undo_last_restores(lo, proj):
    assert _same_mount(lo.state, proj), "the test harness puts state and targets on one mount"
    r = lo("run", "--target", proj, "--session", "a", "--on-exit", "keep", "--", "/bin/sh", "-c",
           "cd %s && echo changed > keep.txt && echo new > added.txt" % proj)
    assert r.returncode == 0, r.stderr
    out = _apply(lo, "a", proj)
    # Nothing of layover's in the target; the record is in STATE/undo/.
    assert sorted(os.listdir(proj)) == ["added.txt", "keep.txt"]
    assert "undo with: layover undo --last --target %s" % proj in out, out
    recs = _records(lo, proj)
    assert len(recs) == 1 and recs[0]["paths"] == 2 and not recs[0]["in_target"]
    assert recs[0]["source"] == "a" and recs[0]["created"] and recs[0]["bytes"] > 0
    assert recs[0]["record"].startswith(str(lo.state / "undo") + "/") and Path(recs[0]["record"]).is_dir()
    # The session is "applied", with the time and the record.
    s = [x for x in _sessions(lo) if x["name"] == "a"][0]
    assert s["state"] == "applied" and s["applied"] and s["undo"] == recs[0]["record"]
    assert s["changes"] == 2 and s["changes_exact"]
    assert "applied" in lo("sessions", check=True).stdout.decode()

    r = lo("undo", "--last", "--target", proj)
    assert r.returncode == 0, r.stderr
    assert (proj / "keep.txt").read_text() == "original\n" and not (proj / "added.txt").exists()
    assert _records(lo, proj) == [] and not list((lo.state / "undo").iterdir())
    r = lo("undo", "--last", "--target", proj)
    assert r.returncode == 1 and b"no undo record" in r.stderr


def test_an_undone_apply_leaves_its_session_kept_not_applied(lo, proj):
    # Its changes are out of the real tree again: `applied` would say
    # otherwise, and gc prunes applied sessions after 30 days.
    def listed(name):
        return [x for x in _sessions(lo) if x["name"] == name][0]
    for name in ("a", "b"):
        r = lo("run", "--target", proj, "--session", name, "--on-exit", "keep", "--", "/bin/sh", "-c",
               "echo %s > %s/%s.txt" % (name, proj, name))
        assert r.returncode == 0, r.stderr
    _apply(lo, "a", proj)
    rec = listed("a")["undo"]
    assert listed("a")["state"] == "applied" and rec
    _apply(lo, "b", proj)
    # By the record's undo.json: only a is unmarked.
    r = lo("undo", rec + "/undo.json", "--target", proj)
    assert r.returncode == 0, r.stderr
    s = listed("a")
    assert (s["state"], s["applied"], s["undo"], s["changes"]) == ("kept", None, None, 1)
    assert listed("b")["state"] == "applied"
    # A dry run changes nothing; --last unmarks b.
    assert lo("undo", "--last", "--target", proj, "--dry-run").returncode == 0
    assert listed("b")["state"] == "applied"
    assert lo("undo", "--last", "--target", proj).returncode == 0
    assert listed("b")["state"] == "kept" and not (proj / "b.txt").exists()
    # Applied again, it is applied again.
    _apply(lo, "a", proj)
    assert listed("a")["state"] == "applied" and (proj / "a.txt").read_text() == "a\n"


def test_a_damaged_or_unreadable_undo_record_is_noted_by_list_and_refused_by_undo(lo, proj):
    # One reader of undo.json (review/apply/records.cc, read_undo_json): --list
    # leaves such a record out with a note, --last stops at it (it may be the
    # newest apply: passing over it would undo an older one), and an undo of
    # it fails with one line naming the file and the fix.
    for i in range(2):
        lo("run", "--target", proj, "--session", "d%d" % i, "--on-exit", "keep", "--", "/bin/sh", "-c",
           "echo %d > %s/d%d.txt" % (i, proj, i), check=True)
        _apply(lo, "d%d" % i, proj)
    newest, older = [x["record"] for x in _records(lo, proj)]
    js = os.path.join(newest, "undo.json")
    good = Path(js).read_bytes()
    os.chmod(js, 0o600)

    def check(why):
        r = lo("undo", "--list", "--target", proj)
        assert r.returncode == 0, r.stderr
        assert older in r.stdout.decode() and newest not in r.stdout.decode()
        err = r.stderr.decode().splitlines()
        assert len(err) == 1 and err[0].startswith("layover: undo: not listed: ") and why in err[0], err
        assert "rm -r %s)" % newest in err[0], err
        r = lo("undo", "--list", "--target", proj, "--json")
        assert r.returncode == 0 and [x["record"] for x in json.loads(r.stdout)] == [older], r.stderr
        r = lo("undo", "--last", "--target", proj)
        err = r.stderr.decode().splitlines()
        assert r.returncode == 1 and len(err) == 1, err
        assert err[0].startswith("layover: undo: --last stops at a damaged record, which may be the newest apply: ")
        assert why in err[0], err
        r = lo("undo", newest)
        err = r.stderr.decode().splitlines()
        assert r.returncode == 1 and len(err) == 1 and why in err[0] and "rm -r %s)" % newest in err[0], err
        assert sorted(os.listdir(proj)) == ["d0.txt", "d1.txt", "keep.txt"]  # nothing was undone

    Path(js).write_text("{not json")
    check("%s is damaged (" % js)
    Path(js).write_text(json.dumps(dict(json.loads(good), state="committing")))
    check("%s is damaged (its apply did not finish)" % js)
    Path(js).write_bytes(good)
    os.chmod(js, 0)
    check("cannot read %s (open undo.json: Permission denied); fix its permissions, or remove the record" % js)
    # Readable again: --last undoes the newest apply.
    os.chmod(js, 0o400)
    r = lo("undo", "--last", "--target", proj)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(proj)) == ["d0.txt", "keep.txt"]
    # No undo.json at all (its apply never finished): left out quietly; undo says what it is.
    js = os.path.join(older, "undo.json")
    os.chmod(older, 0o700)
    os.rename(js, js + ".away")
    r = lo("undo", "--list", "--target", proj)
    assert r.returncode == 0 and r.stderr == b"" and "no undo records" in r.stdout.decode(), r
    r = lo("undo", older)
    assert r.returncode == 1
    assert r.stderr.decode() == ("layover: undo: undo record %s has no undo.json: the apply that made it did not "
                                 "finish, so it holds nothing to undo; unless an apply is running there, remove the "
                                 "record (rm -r %s)\n" % (older, older))


def test_undo_last_on_a_tree_without_records_names_the_tree_last_applied_to(lo, proj):
    # `undo --last` defaults to $HOME: run from the project just applied to, it
    # says where the apply went and the command that undoes it.
    other = real_dir("life-other-")
    for target, name in ((proj, "a"), (other, "b")):
        r = lo("run", "--target", target, "--session", name, "--on-exit", "keep", "--", "/bin/sh", "-c",
               "echo %s > %s/new.txt" % (name, target))
        assert r.returncode == 0, r.stderr
        _apply(lo, name, target)
    home = real_dir("life-home-")
    want = "no undo record for %s; nothing was applied there (or it was undone already); " % home
    # From inside a tree applied to: that one, though another apply is newer.
    r = lo("undo", "--last", env={"HOME": str(home)}, cwd=proj / ".")
    assert r.returncode == 1
    assert r.stderr.decode() == ("layover: undo: " + want + "the newest apply elsewhere was on %s: undo it with "
                                 "'layover undo --last --target %s'\n" % (proj, proj))
    # From elsewhere: the newest apply.
    r = lo("undo", "--last", "--target", home, cwd=home)
    assert r.returncode == 1 and ("elsewhere was on %s:" % other).encode() in r.stderr, r.stderr
    assert (proj / "new.txt").exists() and (other / "new.txt").exists()
    # Once none is left, the old advice.
    for target in (proj, other):
        assert lo("undo", "--last", "--target", target).returncode == 0
    r = lo("undo", "--last", "--target", home)
    assert r.stderr.decode() == "layover: undo: " + want + "see 'layover undo --list --target DIR'\n"


@contextlib.contextmanager
def _state_elsewhere(proj):
    """A state dir on another filesystem than the target (/dev/shm): apply keeps its undo store in the target."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or _same_mount(shm, proj) or not os.access(str(shm), os.W_OK):
        pytest.fail("no writable filesystem apart from %s to put the state dir on (/dev/shm)" % proj)
    state = Path(tempfile.mkdtemp(prefix="layover-life-", dir=str(shm)))
    try:
        yield state
    finally:
        subprocess.run(["rm", "-rf", str(state)])


def test_a_state_dir_on_another_filesystem_keeps_the_record_in_the_target_hidden_from_git(proj, require_sandbox):
    with _state_elsewhere(proj) as state:
        lo = Layover(state, proj)
        r = lo("run", "--target", proj, "--session", "b", "--on-exit", "keep", "--", "/bin/sh", "-c",
               "echo changed > %s/keep.txt" % proj)
        assert r.returncode == 0, r.stderr
        _apply(lo, "b", proj)
        store = proj / ".layover-undo"
        assert (store / ".gitignore").read_text() == "*\n"
        assert (store / "CACHEDIR.TAG").read_text().startswith(SIGNATURE)
        # git sees nothing of it.
        if subprocess.run(["git", "--version"], capture_output=True).returncode == 0:
            subprocess.run(["git", "init", "-q", str(proj)], check=True)
            st = subprocess.run(["git", "-C", str(proj), "status", "--porcelain", "--untracked-files=all"],
                                capture_output=True, check=True).stdout.decode()
            assert ".layover-undo" not in st and "keep.txt" in st
            subprocess.run(["rm", "-rf", str(proj / ".git")], check=True)
        recs = _records(lo, proj)
        assert len(recs) == 1 and recs[0]["in_target"]
        r = lo("undo", "--last", "--target", proj)
        assert r.returncode == 0, r.stderr
        assert (proj / "keep.txt").read_text() == "original\n"
        assert not store.exists()  # markers and all, once the last record is gone


def test_an_undo_store_in_the_target_is_hidden_from_later_sessions(proj, require_sandbox):
    """Found by the attack pass of 27 Nov: with the state dir on another
    filesystem the undo store is TARGET/.layover-undo, holding the originals
    an apply deleted or replaced; a later session read them there, a file
    the person deleted (and --hid) too. Now covered like a hidden dir, in the
    target and above it; undo still finds it."""
    with _state_elsewhere(proj) as state:
        lo = Layover(state, proj)
        (proj / "leaked.env").write_text("AWS_SECRET=gone-but-kept\n")
        (proj / "sub").mkdir()
        r = lo("run", "--target", proj, "--session", "del", "--on-exit", "keep", "--", "/bin/sh", "-c", "rm leaked.env")
        assert r.returncode == 0, r.stderr
        _apply(lo, "del", proj)
        assert (proj / ".layover-undo").is_dir()
        read = "ls -A .layover-undo; cat .layover-undo/*/* 2>/dev/null; echo done"
        for target, cwd_read in ((proj, read), (proj / "sub", read.replace(".layover-undo", "../.layover-undo"))):
            r = lo("run", "--target", target, "--session", "look", "--on-exit", "discard", "--hide", proj / "leaked.env",
                   "--", "/bin/sh", "-c", "cd %s && %s" % (target, cwd_read))
            assert r.returncode == 0, r.stderr
            assert r.stdout.decode() == "done\n"  # an empty dir: no record, no original
        r = lo("undo", "--last", "--target", proj)
        assert r.returncode == 0, r.stderr
        assert (proj / "leaked.env").read_text() == "AWS_SECRET=gone-but-kept\n"


def test_a_record_made_the_old_way_inside_the_target_still_undoes(lo, proj):
    lo("run", "--target", proj, "--session", "c", "--on-exit", "keep", "--", "/bin/sh", "-c",
       "echo old-way > %s/keep.txt" % proj, check=True)
    _apply(lo, "c", proj, env={"LAYOVER_UNDO_IN_TARGET": "1"})
    ids = os.listdir(str(proj / ".layover-undo"))
    rec = [i for i in ids if i not in (".gitignore", "CACHEDIR.TAG")]
    assert len(rec) == 1
    # As an older layover left it: no markers.
    for m in (".gitignore", "CACHEDIR.TAG"):
        os.unlink(str(proj / ".layover-undo" / m))
    assert not (lo.state / "undo").exists() or not list((lo.state / "undo").iterdir())
    assert [x["in_target"] for x in _records(lo, proj)] == [True]
    r = lo("undo", proj / ".layover-undo" / rec[0])
    assert r.returncode == 0, r.stderr
    assert (proj / "keep.txt").read_text() == "original\n" and not (proj / ".layover-undo").exists()


def test_retention_prunes_the_21st_record(lo, proj):
    for i in range(21):
        lo("run", "--target", proj, "--session", "r%02d" % i, "--on-exit", "keep", "--", "/bin/sh", "-c",
           "echo %d > %s/f%02d.txt" % (i, proj, i), check=True)
        out = _apply(lo, "r%02d" % i, proj, "--keep-undo-days", "0")
    assert "pruned 1 old undo record" in out
    recs = _records(lo, proj)
    assert len(recs) == 20
    assert [r["source"] for r in recs] == ["r%02d" % i for i in range(20, 0, -1)]  # r00's is gone
    assert len(os.listdir(str(next(iter((lo.state / "undo").iterdir()))))) == 20
    assert sorted(os.listdir(proj)) == sorted(["keep.txt"] + ["f%02d.txt" % i for i in range(21)])


def test_an_empty_session_is_removed_at_exit_unless_keep_empty(lo, proj):
    r = lo("run", "--target", proj, "--session", "e1", "--on-exit", "keep", "--", "true")
    assert r.returncode == 0
    assert b"made no changes; removed" in r.stderr
    assert not lo.session_dir("e1").exists()
    r = lo("run", "--target", proj, "--session", "e2", "--on-exit", "keep", "--quiet", "--", "true")
    assert r.returncode == 0 and b"made no changes" not in r.stderr and not lo.session_dir("e2").exists()
    r = lo("run", "--target", proj, "--session", "e3", "--on-exit", "keep", "--keep-empty", "--", "true")
    assert r.returncode == 0 and b"kept (--keep-empty)" in r.stderr
    assert lo.session_dir("e3").is_dir()
    s = [x for x in _sessions(lo) if x["name"] == "e3"][0]
    assert s["state"] == "empty" and s["changes"] == 0
    assert [x["name"] for x in _sessions(lo)] == ["e3"]


def test_a_session_dir_without_metadata_is_refused_and_left_as_it_was(lo, proj):
    # Issue 20: a new session's dirs are made while the sandbox starts; a
    # name taken by a dir that is not a session fails the run and that dir,
    # not ours, stays untouched.
    d = lo.session_dir("taken")
    d.mkdir(parents=True)
    (d / "notes.txt").write_text("mine\n")
    spare = Path(lo.state) / "spare" / "next"  # a spare is never moved over it
    (spare / "upper").mkdir(parents=True)
    (spare / "work").mkdir()
    r = lo("run", "--target", proj, "--session", "taken", "--on-exit", "discard", "--", "/bin/sh", "-c",
           "echo x > %s/new.txt" % proj)
    assert r.returncode == 125 and b"exists without metadata" in r.stderr, r.stderr
    assert sorted(p.name for p in d.iterdir()) == ["notes.txt"]
    assert (d / "notes.txt").read_text() == "mine\n"
    assert sorted(p.name for p in spare.iterdir()) == ["upper", "work"]
    assert sorted(p.name for p in proj.iterdir()) == ["keep.txt"]


def test_discard_frees_the_name_at_once_and_removes_the_session_in_the_background(lo, proj):
    # Issue 20: run returns the command's status without waiting for the
    # delete; the session is moved into STATE/deleting/ and removed there.
    big = "head -c 3000000 /dev/zero > %s/big.bin; mkdir -p %s/d/e; echo x > %s/d/e/f; exit 3" % (proj, proj, proj)
    # What a remover killed while making its spare left: its pid is gone.
    gone = subprocess.Popen(["true"])
    gone.wait()
    stale = Path(lo.state) / "spare" / ("tmp.%d" % gone.pid)
    (stale / "upper").mkdir(parents=True)
    r = lo("run", "--target", proj, "--session", "d1", "--on-exit", "discard", "--", "/bin/sh", "-c", big)
    assert r.returncode == 3, r.stderr
    assert not lo.session_dir("d1").exists()
    assert _sessions(lo) == []
    assert sorted(p.name for p in proj.iterdir()) == ["keep.txt"]
    deleting = Path(lo.state) / "deleting"
    for _ in range(100):  # the detached remover finishes on its own
        if not any(deleting.iterdir()):
            break
        time.sleep(0.05)
    assert list(deleting.iterdir()) == []
    assert not stale.exists()  # the remover dropped the dead one's leftover
    # The remover made the next new session's dirs first (helper/sandbox/prepare/spare.h): empty.
    spare = Path(lo.state) / "spare" / "next"
    assert {"steps", "upper", "work"} <= {p.name for p in spare.iterdir()}
    assert list((spare / "upper").iterdir()) == [] and list((spare / "work").iterdir()) == []
    # The name is free again for a new session, which takes the spare.
    proj.chmod(0o750)
    r = lo("run", "--target", proj, "--session", "d1", "--on-exit", "keep", "--", "/bin/sh", "-c",
           "echo y > %s/new.txt" % proj)
    assert r.returncode == 0, r.stderr
    assert not spare.exists()
    assert (lo.session_dir("d1") / "upper" / "new.txt").read_text() == "y\n"
    assert stat.S_IMODE((lo.session_dir("d1") / "upper").stat().st_mode) == 0o750
    assert sorted(p.name for p in (lo.session_dir("d1") / "upper").iterdir()) == ["new.txt"]


def test_a_spare_scratch_layer_the_run_does_not_use_goes(lo, proj):
    # helper/sandbox/prepare/spare.h: a spare laid out for a scratch layer, taken by a
    # run that has none ($HOME inside the target): its outside/ is removed.
    spare = Path(lo.state) / "spare" / "next"
    for d in ("upper", "work", "steps", "outside/0/upper", "outside/0/work"):
        (spare / d).mkdir(parents=True)
    r = lo("run", "--target", proj, "--session", "sp", "--on-exit", "keep", "--", "/bin/sh", "-c",
           "echo z > %s/z.txt" % proj, env={"HOME": str(proj)})
    assert r.returncode == 0, r.stderr
    assert not spare.exists()
    d = lo.session_dir("sp")
    assert not (d / "outside").exists()
    assert (d / "upper" / "z.txt").read_text() == "z\n"
    assert (d / "steps" / "live.json").is_file()


def test_sessions_shows_the_python_sandbox_label_never_the_bootstrap(lo, proj):
    code = r'''
import sys
import tempfile
from layover import Sandbox
sb = Sandbox(sys.argv[1], state_dir=sys.argv[2], binary=sys.argv[3], session="py")
sb.run("open('made.txt', 'w').write('x')")
sb.close()
sb.apply()
'''
    r = subprocess.run([sys.executable, "-c", code, str(proj), str(lo.state), LAYOVER], capture_output=True,
                       cwd=str(proj), env=lo.env, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (proj / "made.txt").read_text() == "x"
    text = lo("sessions", check=True).stdout.decode()
    line = [x for x in text.splitlines() if x.startswith("py ")][0]
    assert "python: Sandbox(" in line and "applied" in line, line
    assert "_boot" not in text and " -c " not in text
    # The default name (py-YYYYmmdd-HHMMSS-xxxxxx, 25 characters) keeps the columns aligned.
    r = subprocess.run([sys.executable, "-c", code.replace(', session="py"', ""), str(proj), str(lo.state), LAYOVER],
                       capture_output=True, cwd=str(proj), env=lo.env, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    lines = lo("sessions", check=True).stdout.decode().splitlines()
    col = lines[0].index("STATE")
    assert [x[col:col + 8] for x in lines[1:]] == ["applied ", "empty   "], lines  # (it wrote the same x)
    s = [x for x in _sessions(lo) if x["name"] == "py"][0]
    assert s["label"].startswith("python: Sandbox(") and s["state"] == "applied" and s["undo"]


def _du(path):
    total = 0
    for dp, dns, fns in os.walk(str(path)):
        for n in dns + fns:
            total += os.lstat(os.path.join(dp, n)).st_blocks * 512
    return total


def test_gc_dry_run_removes_nothing_and_gc_frees_what_it_says(lo, proj):
    for name, cmd in (("kept", "head -c 100000 /dev/urandom > %s/k.bin" % proj),
                      ("done", "head -c 200000 /dev/urandom > %s/d.bin" % proj)):
        lo("run", "--target", proj, "--session", name, "--on-exit", "keep", "--", "/bin/sh", "-c", cmd, check=True)
    lo("run", "--target", proj, "--session", "nothing", "--keep-empty", "--on-exit", "keep", "--", "true",
       check=True)
    _apply(lo, "done", proj)
    before = sorted(p.name for p in (lo.state / "sessions").iterdir())
    assert before == ["done", "kept", "nothing"]

    r = lo("gc", "--dry-run", "--older-than", "0s", "--applied")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].startswith("would remove session kept") and "NOT applied" in lines[0], lines
    assert sorted(p.name for p in (lo.state / "sessions").iterdir()) == before

    # By default: the empty one goes; applied ones only past 30 days; kept work never.
    r = lo("gc", "--dry-run")
    assert "session nothing" in r.stdout.decode() and "session done" not in r.stdout.decode()
    assert "session kept" not in r.stdout.decode()

    # A session's size is the one `sessions` shows (its layers), gc's lines and total too.
    sizes = {s["name"]: s["bytes"] for s in _sessions(lo)}
    dirs = {n: _du(lo.state / "sessions" / n) for n in ("done", "nothing")}
    r = lo("gc", "--applied")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert sorted(p.name for p in (lo.state / "sessions").iterdir()) == ["kept"]
    assert "removed session nothing (empty; 0 B)" in out, out
    summary = out.splitlines()[-1]
    assert summary.startswith("gc: freed 2 item(s)"), out
    freed = int(summary.rsplit("(", 1)[1].split()[0])
    assert freed == sizes["done"] + sizes["nothing"] and freed > 200000
    assert freed < dirs["done"] + dirs["nothing"]  # the bookkeeping (meta.json, work/, ...) is not counted
    # The apply itself stays undoable: gc kept its record (within retention).
    assert len(_records(lo, proj)) == 1


def test_gc_and_sessions_agree_on_an_empty_sessions_size(lo, proj):
    lo("run", "--target", proj, "--session", "nothing", "--keep-empty", "--on-exit", "keep", "--", "true",
       check=True)
    assert _du(lo.state / "sessions" / "nothing") > 0  # its dirs and meta.json take some blocks
    s = [x for x in _sessions(lo) if x["name"] == "nothing"][0]
    assert s["state"] == "empty" and s["bytes"] == 0
    lines = lo("sessions", check=True).stdout.decode().splitlines()
    col = lines[0].index("SIZE")
    row = [x for x in lines if x.startswith("nothing ")][0]
    assert row[col - 3:col + 4].strip() == "0B", lines
    r = lo("gc", "--dry-run")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "would remove session nothing (empty; 0 B)" in out, out
    assert out.splitlines()[-1] == "gc --dry-run: would free 1 item(s), 0 B (0 bytes)", out


def test_gc_prunes_undo_records_past_retention(lo, proj):
    for i in range(3):
        lo("run", "--target", proj, "--session", "g%d" % i, "--on-exit", "keep", "--", "/bin/sh", "-c",
           "echo %d > %s/g%d.txt" % (i, proj, i), check=True)
        _apply(lo, "g%d" % i, proj)
    assert len(_records(lo, proj)) == 3
    r = lo("gc", "--keep-undo", "1", "--keep-undo-days", "0", "--dry-run")
    assert r.stdout.decode().count("would remove undo record") == 2 and len(_records(lo, proj)) == 3
    r = lo("gc", "--keep-undo", "1", "--keep-undo-days", "0")
    assert r.returncode == 0, r.stderr
    recs = _records(lo, proj)
    assert [x["source"] for x in recs] == ["g2"]
    r = lo("gc", "--older-than", "soon")
    assert r.returncode == 2 and b"bad age" in r.stderr
