"""Session history (docs/history.md, issue 23): every resumed run of a kept
session freezes the last run's upper as a step; capture sees the flattened
stack, so a session with steps gives the same patch as one without."""
import json
import os
import subprocess
from pathlib import Path

from capture_util import manifest_of, status_json

# Each snippet is one step when run one by one, and one lump when joined.
SCRIPT = [
    # created, later deleted; renamed along a chain; made, later changed in mode/xattr
    "echo t > tmp.txt; echo r > r1; echo m > m.txt; mkdir made; echo 1 > made/one; echo 1 > old/new_in_old.txt",
    "mv r1 r2; chmod 600 m.txt; python3 -c \"import os; os.setxattr('m.txt', 'user.k', b'v')\"; "
    # real dirs deleted here (copies kept aside), remade in step 4
    "cp -a keep .k; cp -a part .p; rm -rf keep part",
    # a dir made opaque over earlier content (real and a step's); a dir remade
    "rm -rf old; mkdir old; echo fresh > old/fresh.txt; rm -rf made; mkdir made; echo 2 > made/two",
    # remade: keep/ as it was (no change), part/ partly changed
    "mv r2 r3; rm tmp.txt; chmod 700 docs; mv notes.txt notes2.txt; cp -a .k keep; cp -a .p part; rm -rf .k .p; "
    "echo changed > part/p2; rm part/p3; echo new > part/p4; rm -r part/sub/deep",
    # a step that only deletes (whiteouts over lower-only files)
    "rm link docs/readme.txt",
]


def run_ok(lo, cmd, session, *extra):
    r = lo.run(cmd, *extra, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r


def extract(patch, into):
    into.mkdir()
    r = subprocess.run(["tar", "--zstd", "--xattrs", "--xattrs-include=user.*", "-xpf", str(patch), "-C", str(into)],
                       capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    out = {}
    for dirpath, dirnames, filenames in os.walk(into):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(into))
            if rel.startswith(".layover"):
                continue
            st = p.lstat()
            readable = p.is_file() and not p.is_symlink() and not name.startswith(".wh.")
            content = p.read_bytes() if readable else None
            out[rel] = (st.st_mode, st.st_size, content, os.readlink(p) if p.is_symlink() else None)
    return out


def comparable(changes):
    """A change list without what differs by when it was done (mtimes)."""
    out = []
    for c in changes:
        c = {k: v for k, v in c.items() if k not in ("mtime", "mtime_ns")}
        out.append(json.dumps(c, sort_keys=True))
    return sorted(out)


def steps_of(lo, name):
    d = lo.session_dir(name) / "steps"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def real_dirs_to_remake(t):
    """keep/ and part/ in the real tree, for SCRIPT to delete and remake."""
    for d in ("keep/sub", "part/sub/deep"):
        (t / d).mkdir(parents=True)
    for f in ("keep/k1", "keep/sub/k2", "part/p1", "part/p2", "part/p3", "part/sub/s", "part/sub/deep/x"):
        (t / f).write_text(f + "\n")
    os.chmod(t / "keep" / "k1", 0o600)


def test_steps_flatten_like_one_layer(lo, tmp_path):
    real_dirs_to_remake(Path(lo.target))
    for cmd in SCRIPT:
        run_ok(lo, cmd, "stepped")
    run_ok(lo, " && ".join("(" + c + ")" for c in SCRIPT), "flat")
    # Each resume froze the last run: four frozen steps under the live upper.
    names = steps_of(lo, "stepped")
    assert [n for n in names if not n.endswith(".json")] == ["0001", "0002", "0003", "0004"]
    assert steps_of(lo, "flat") == ["live.json"]
    assert comparable(status_json(lo, "stepped")) == comparable(status_json(lo, "flat"))
    pa, pb = tmp_path / "a.tar.zst", tmp_path / "b.tar.zst"
    for name, out in (("stepped", pa), ("flat", pb)):
        r = lo("save", name, "-o", out)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
    ma, mb = manifest_of(pa), manifest_of(pb)
    assert comparable(ma["changes"]) == comparable(mb["changes"])
    assert sorted(b["path"] for b in ma["base"]) == sorted(b["path"] for b in mb["base"])
    ta, tb = extract(pa, tmp_path / "xa"), extract(pb, tmp_path / "xb")
    assert ta == tb
    paths = {c["path"]: c["kind"] for c in ma["changes"]}
    assert "tmp.txt" not in paths and "r1" not in paths and "r2" not in paths
    assert paths["r3"] == "added" and paths["link"] == "deleted"
    assert ta["old/fresh.txt"][2] == b"fresh\n" and "old/a.txt" not in ta
    assert ta["m.txt"][0] & 0o777 == 0o600
    # A dir deleted in one step and remade in a later one is compared with
    # the real dir: identical, no change; partly changed, only what differs.
    assert not [p for p in paths if p.startswith("keep")]
    assert {p: k for p, k in paths.items() if p.startswith("part")} == {
        "part/p2": "modified", "part/p3": "deleted", "part/p4": "added", "part/sub/deep": "deleted"}
    assert paths["old/a.txt"] == "deleted" and paths["old/sub"] == "deleted" and "old" not in paths
    assert not [n for n in ta if n.endswith(".wh..wh..opq")]
    # Applying the stepped session's patch gives the real tree the net result.
    r = lo("apply", "stepped", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    t = Path(lo.target)
    assert (t / "r3").read_text() == "r\n" and not (t / "tmp.txt").exists() and not (t / "link").is_symlink()
    assert sorted(os.listdir(t / "old")) == ["fresh.txt"] and sorted(os.listdir(t / "made")) == ["two"]
    assert os.getxattr(t / "m.txt", "user.k") == b"v" and not (t / "docs" / "readme.txt").exists()
    assert (t / "keep" / "sub" / "k2").read_text() == "keep/sub/k2\n" and os.stat(t / "keep" / "k1").st_mode & 0o777 == 0o600
    assert sorted(os.listdir(t / "part")) == ["p1", "p2", "p4", "sub"] and os.listdir(t / "part" / "sub") == ["s"]
    assert (t / "part" / "p2").read_text() == "changed\n"


def test_a_reverted_dir_deletion_shows_no_change(lo):
    # Step 1 deletes real dirs, step 2 adds a file; reverting step 1 brings
    # the dirs back as copies under step 1's whiteouts: compared with the
    # real dirs, they are no change, as in a one-layer session that only
    # added the file.
    t = Path(lo.target)
    real_dirs_to_remake(t)
    run_ok(lo, "rm -rf keep part/sub", "r")
    run_ok(lo, "echo x > other.txt", "r")
    run_ok(lo, "true", "r")  # freezes step 2
    r = lo("revert", "r", "1")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    run_ok(lo, "echo x > other.txt", "one")
    assert comparable(status_json(lo, "r")) == comparable(status_json(lo, "one"))
    assert [c["path"] for c in status_json(lo, "r")] == ["other.txt"]
    r = lo("apply", "r", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (t / "other.txt").read_text() == "x\n" and (t / "part" / "sub" / "deep" / "x").read_text() == "part/sub/deep/x\n"
    assert os.stat(t / "keep" / "k1").st_mode & 0o777 == 0o600


def test_step_records_and_frozen_layers(lo):
    run_ok(lo, "echo a > a.txt; echo changed > notes.txt", "s")
    run_ok(lo, "rm a.txt; rm docs/readme.txt; chmod 600 old/a.txt", "s")
    # A run that changes nothing is not a step.
    run_ok(lo, "true", "s")
    run_ok(lo, "echo b > b.txt", "s")
    d = lo.session_dir("s") / "steps"
    assert sorted(p.name for p in d.iterdir() if p.is_dir()) == ["0001", "0002"]
    # A freeze leaves the paths pending (O(1)); `log` computes and writes them.
    assert json.loads((d / "0002.json").read_text())["pending"] is True
    assert lo("log", "s").returncode == 0
    r1 = json.loads((d / "0001.json").read_text())
    r2 = json.loads((d / "0002.json").read_text())
    assert r1["step"] == 1 and r1["label"].startswith("/bin/sh -c echo a > a.txt")
    assert r1["start"] <= r1["end"]
    assert {(p["path"], p["kind"]) for p in r1["paths"]} == {("a.txt", "A"), ("notes.txt", "M")}
    assert {(p["path"], p["kind"]) for p in r2["paths"]} == {("a.txt", "D"), ("docs/readme.txt", "D"),
                                                              ("old/a.txt", "mode")}
    # The frozen layers hold what each step wrote, and are never written again.
    assert (d / "0001" / "a.txt").read_text() == "a\n"
    assert (d / "0002" / "a.txt").is_char_device() or (d / "0002" / "a.txt").stat().st_size == 0
    assert (lo.upper("s") / "b.txt").read_text() == "b\n"
    ch = {c["path"]: c["kind"] for c in status_json(lo, "s")}
    assert ch == {"notes.txt": "modified", "docs/readme.txt": "deleted", "old/a.txt": "metadata", "b.txt": "added"}


def test_log_lists_steps_newest_first(lo):
    run_ok(lo, "echo a > a.txt; echo changed > notes.txt", "s")
    run_ok(lo, "rm a.txt docs/readme.txt", "s")
    run_ok(lo, "mkdir n; echo x > n/x", "s")
    r = lo("log", "s", "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    log = json.loads(r.stdout)
    assert log["session"] == "s"
    st = log["steps"]
    assert [s["step"] for s in st] == [None, 2, 1]
    assert st[0]["live"] and st[0]["label"].startswith("/bin/sh -c mkdir n")
    assert (st[0]["added"], st[0]["modified"], st[0]["deleted"]) == (2, 0, 0)
    assert (st[1]["added"], st[1]["modified"], st[1]["deleted"]) == (0, 0, 2)
    assert (st[2]["added"], st[2]["modified"], st[2]["deleted"]) == (1, 1, 0)
    assert {p["path"] for p in st[1]["paths"]} == {"a.txt", "docs/readme.txt"}
    assert st[2]["bytes"] > 0
    text = lo("log", "s")
    assert text.returncode == 0
    lines = text.stdout.decode().splitlines()
    assert lines[0] == "session 's': 2 steps and live changes"
    assert lines[1].split()[0] == "(live)" and "+2 ~0 -0" in lines[1]
    assert lines[2].split()[0] == "2" and "-2" in lines[2] and lines[2].endswith("/bin/sh -c rm a.txt docs/readme.txt")
    assert lines[3].split()[0] == "1" and "+1 ~1 -0" in lines[3]
    # An unknown session: exit 1, named; a bad flag: usage, 2.
    sessions = {x["name"]: x for x in json.loads(lo("sessions", "--json").stdout)}
    assert sessions["s"]["steps"] == 2
    bad = lo("log", "nosuch")
    assert bad.returncode == 1 and b"nosuch" in bad.stderr
    assert lo("log", "s", "--bogus").returncode == 2


def test_log_of_a_session_without_steps(lo):
    run_ok(lo, "echo a > a.txt", "one")
    r = lo("log", "one")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    lines = r.stdout.decode().splitlines()
    assert lines[0] == "session 'one': 0 steps and live changes" and "+1 ~0 -0" in lines[1]


def test_blame_names_every_step_that_touched_a_path(lo):
    run_ok(lo, "echo 1 > f.txt", "b")
    run_ok(lo, "echo 2 > other.txt", "b")
    run_ok(lo, "echo 3 >> f.txt; chmod 600 notes.txt", "b")
    run_ok(lo, "rm f.txt; rm -r old", "b")
    r = lo("blame", "b", "f.txt")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    lines = r.stdout.decode().splitlines()
    assert [(l.split()[0], l.split()[2]) for l in lines] == [("1", "A"), ("3", "M"), ("(live)", "D")]
    assert lines[1].endswith("/bin/sh -c echo 3 >> f.txt; chmod 600 notes.txt")
    # An absolute path inside the target; a path under a deleted dir names the dir.
    r = lo("blame", "b", str(Path(lo.target) / "notes.txt"))
    assert r.returncode == 0 and r.stdout.decode().split()[:3][2] == "mode"
    r = lo("blame", "b", "old/sub/b.txt")
    assert r.returncode == 0 and "D (old/)" in r.stdout.decode()
    r = lo("blame", "b", "never.txt")
    assert r.returncode == 1 and b"never.txt" in r.stderr
    assert lo("blame", "b", "/etc/passwd").returncode == 1
    assert lo("blame", "b").returncode == 2


def test_rollback_and_its_undo(lo):
    t = Path(lo.target)
    run_ok(lo, "echo 1 > one.txt", "r")
    run_ok(lo, "echo 2 > two.txt; rm notes.txt", "r")
    run_ok(lo, "echo 3 > three.txt", "r")
    before = status_json(lo, "r")
    assert {c["path"] for c in before} == {"one.txt", "two.txt", "notes.txt", "three.txt"}
    r = lo("rollback", "r", "1")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert b"rolled back to step 1" in r.stderr
    assert {c["path"] for c in status_json(lo, "r")} == {"one.txt"}
    # The sandbox sees the rolled-back view, and the real tree never changed.
    run_ok(lo, "test -f one.txt && test ! -e two.txt && test -f notes.txt && test ! -e three.txt", "r")
    assert (t / "notes.txt").exists() and not (t / "one.txt").exists()
    # Bad step numbers change nothing.
    assert lo("rollback", "r", "7").returncode == 1
    assert lo("rollback", "r", "x").returncode == 2
    assert {c["path"] for c in status_json(lo, "r")} == {"one.txt"}
    r = lo("rollback", "r", "--undo")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert status_json(lo, "r") == before
    # The live changes were frozen as step 3 by the rollback; they come back as it.
    assert [s["step"] for s in json.loads(lo("log", "r", "--json").stdout)["steps"]] == [3, 2, 1]
    # After new work on top of a rollback, --undo refuses and changes nothing.
    assert lo("rollback", "r", "0").returncode == 0
    assert status_json(lo, "r") == []
    run_ok(lo, "echo new > new.txt", "r")
    r = lo("rollback", "r", "--undo")
    assert r.returncode == 1 and b"changed since the rollback" in r.stderr
    assert {c["path"] for c in status_json(lo, "r")} == {"new.txt"}


def test_sessions_counts_the_view_a_rollback_revert_or_fork_made(lo):
    # They leave no count from the exit's scan: `sessions` counted the live
    # layer alone, `~0` for a session whose steps hold changes. A fork scans
    # nothing (it copies nothing): all of it has its source's count, one at a
    # step none, `?`.
    def listed(name):
        s = [x for x in json.loads(lo("sessions", "--json").stdout) if x["name"] == name][0]
        return s["changes"], s["changes_exact"], s["state"]
    run_ok(lo, "echo 1 > one.txt; echo 1b > oneb.txt", "v")
    run_ok(lo, "echo 2 > two.txt", "v")
    run_ok(lo, "echo 3 > three.txt", "v")
    assert listed("v") == (4, True, "kept")
    assert lo("rollback", "v", "2").returncode == 0
    assert listed("v") == (3, True, "kept")
    assert lo("rollback", "v", "--undo").returncode == 0
    assert listed("v") == (4, True, "kept")
    assert lo("revert", "v", "2").returncode == 0
    assert listed("v") == (3, True, "kept")
    assert lo("fork", "v", "w", "--at", "1").returncode == 0
    assert listed("w") == (-1, False, "kept")
    assert "  ?  fork of v at step 1" in lo("sessions").stdout.decode()
    assert lo("fork", "v", "w2").returncode == 0
    assert listed("w2") == (3, True, "kept")
    # Back to the real tree: no change, but never `empty` (gc would remove
    # the session, and with it what --undo brings back).
    assert lo("rollback", "v", "0").returncode == 0
    assert listed("v") == (0, False, "kept")
    assert b"would free 0 item(s)" in lo("gc", "--dry-run").stdout


def test_fork_shares_the_steps_and_then_goes_its_own_way(lo):
    run_ok(lo, "echo 1 > one.txt", "src")
    run_ok(lo, "echo 2 > two.txt", "src")
    r = lo("fork", "src", "a")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    r = lo("fork", "src", "b", "--at", "1")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    paths = lambda n: {c["path"] for c in status_json(lo, n)}  # noqa: E731
    assert paths("src") == paths("a") == {"one.txt", "two.txt"}
    assert paths("b") == {"one.txt"}
    # No file data copied, no link made: both refer to one layer of the store.
    ref = lambda n, i: (lo.session_dir(n) / "steps" / ("%04d.ref" % i)).read_text().strip()  # noqa: E731
    assert ref("src", 1) == ref("a", 1) == ref("b", 1) and ref("src", 2) == ref("a", 2)
    assert not (lo.session_dir("a") / "steps" / "0001").exists()
    src1 = Path(lo.state) / "layers" / ref("src", 1) / "one.txt"
    # Independent from then on.
    run_ok(lo, "echo b > b.txt; rm one.txt", "b")
    run_ok(lo, "echo a > a.txt", "a")
    assert paths("b") == {"b.txt"} and paths("a") == {"one.txt", "two.txt", "a.txt"}
    assert paths("src") == {"one.txt", "two.txt"} and src1.read_text() == "1\n"
    # Errors change nothing.
    assert lo("fork", "src", "a").returncode == 1
    assert lo("fork", "src", "c", "--at", "9").returncode == 1
    assert lo("fork", "src", "../x").returncode == 1
    assert not lo.session_dir("c").exists()
    assert not [p for p in (Path(lo.state) / "sessions").iterdir() if p.name.startswith(".")]
    assert lo("fork", "src").returncode == 2


def test_a_step_ends_when_its_run_ended_not_when_a_resume_froze_it(lo):
    # Found by newuser6: a run is frozen into a step only when the session
    # is next resumed, and the step's end was that resume's time.
    import time
    from datetime import datetime

    def t(s):
        return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")

    run_ok(lo, "echo a > a.txt", "s")
    time.sleep(2.2)
    run_ok(lo, "echo b > b.txt", "s")
    st = json.loads(lo("log", "s", "--json", check=True).stdout)["steps"]
    live, first = st[0], st[1]
    assert first["step"] == 1 and live["live"]
    assert (t(live["start"]) - t(first["end"])).total_seconds() >= 2, (first, live)
    assert t(first["start"]) <= t(first["end"])
