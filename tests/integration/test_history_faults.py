"""Step operations killed by SIGKILL at every fault point (docs/history.md,
"Faults"): the session is exactly as before or as after, `layover doctor`
names what was left, and a rerun (or `doctor --fix`) finishes or undoes it."""
import json
import os
from pathlib import Path

import pytest

from capture_util import status_json

BEFORE = {"one.txt", "two.txt", "notes.txt", "three.txt"}
AT_ONE = {"one.txt"}
TEMPS = ("stack-op", "steps.rb", "rolled-back.new", "steps.gone")


def run_ok(lo, cmd, session, **kw):
    r = lo.run(cmd, session=session, **kw)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def three_runs(lo, name):
    run_ok(lo, "echo 1 > one.txt", name)
    run_ok(lo, "echo 2 > two.txt; rm notes.txt", name)
    run_ok(lo, "echo 3 > three.txt", name)  # left live


def paths(lo, name):
    return {c["path"] for c in status_json(lo, name)}


def log_steps(lo, name):
    r = lo("log", name, "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return [s["step"] for s in json.loads(r.stdout)["steps"]]


def leftovers(lo, name):
    d = lo.session_dir(name)
    bad = [t for t in TEMPS if (d / t).exists()]
    bad += [p.name for p in (d / "steps").iterdir() if p.name.endswith(".tmp")] if (d / "steps").exists() else []
    return bad + [p.name for p in (Path(lo.state) / "sessions").iterdir() if p.name.startswith(".")]


def doctor(lo, *extra):
    r = lo("doctor", "--target", lo.target, *extra)
    return r.stdout.decode(errors="replace")


def killed(r):
    assert r.returncode != 0, r.stderr.decode(errors="replace")


@pytest.mark.parametrize("point", ["freeze:record", "freeze:renamed"])
def test_freeze_killed(lo, point):
    three_runs(lo, "s")
    killed(lo.run("true", session="s", env={"LAYOVER_FAULT": point + ":1:kill"}))
    out = doctor(lo)
    # The commit exchanges the upper with an empty layer dir: after it, a
    # fresh (empty) upper is there already and nothing is left to repair.
    assert ("record 0003.json without its layer" if point == "freeze:record" else "OK    session histories") in out
    # Before (the run left live) or after (frozen as step 3): the same view.
    assert log_steps(lo, "s") == ([None, 2, 1] if point == "freeze:record" else [3, 2, 1])
    assert paths(lo, "s") == BEFORE
    run_ok(lo, "test -f three.txt && test ! -e notes.txt", "s")
    assert log_steps(lo, "s") == [3, 2, 1] and paths(lo, "s") == BEFORE
    assert leftovers(lo, "s") == [] and "OK    session histories" in doctor(lo)


# share: the session's own layers moving into the store (view-preserving).
@pytest.mark.parametrize("point,after", [("share:ref:1", False), ("share:moved:2", False), ("rollback:aside:1", False),
                                         ("rollback:built:1", False), ("rollback:committed:1", True),
                                         ("rollback:replaced:1", True)])
def test_rollback_killed(lo, point, after):
    three_runs(lo, "s")
    killed(lo("rollback", "s", "1", env={"LAYOVER_FAULT": point + ":kill"}))
    assert paths(lo, "s") == (AT_ONE if after else BEFORE)
    assert log_steps(lo, "s") == ([1] if after else [3, 2, 1])  # the live changes were frozen first
    if not point.startswith("share:moved"):
        assert "FAIL  session 's'" in doctor(lo)
        assert "FIXED session 's'" in doctor(lo, "--fix")
        assert paths(lo, "s") == (AT_ONE if after else BEFORE)
    r = lo("rollback", "s", "1")
    assert r.returncode == 0, r.stderr
    assert paths(lo, "s") == AT_ONE and leftovers(lo, "s") == []
    r = lo("rollback", "s", "--undo")
    assert r.returncode == 0, r.stderr
    assert paths(lo, "s") == BEFORE and log_steps(lo, "s") == [3, 2, 1] and leftovers(lo, "s") == []


@pytest.mark.parametrize("point,after", [("undo:built:1", False),
                                         ("undo:committed:1", True)])
def test_rollback_undo_killed(lo, point, after):
    three_runs(lo, "s")
    assert lo("rollback", "s", "1").returncode == 0
    killed(lo("rollback", "s", "--undo", env={"LAYOVER_FAULT": point + ":kill"}))
    assert paths(lo, "s") == (BEFORE if after else AT_ONE)
    r = lo("rollback", "s", "--undo")  # the rerun finishes it, or does it
    if after:
        assert r.returncode == 1 and b"nothing to undo" in r.stderr
    else:
        assert r.returncode == 0, r.stderr
    assert paths(lo, "s") == BEFORE and log_steps(lo, "s") == [3, 2, 1] and leftovers(lo, "s") == []


@pytest.mark.parametrize("point", ["share:ref:2", "fork:shared:1", "fork:ref:2", "fork:commit:1"])
def test_fork_killed(lo, point):
    three_runs(lo, "src")
    killed(lo("fork", "src", "b", env={"LAYOVER_FAULT": point + ":kill"}))
    assert not lo.session_dir("b").exists()
    assert paths(lo, "src") == BEFORE
    if point.startswith("fork:commit"):  # killed in the parent: its half-built dir stays
        assert "a half-built fork" in doctor(lo)
    r = lo("fork", "src", "b")
    assert r.returncode == 0, r.stderr
    assert paths(lo, "b") == paths(lo, "src") == BEFORE
    assert leftovers(lo, "src") == [] and leftovers(lo, "b") == []
    # The fork is independent: a rollback of one leaves the other alone.
    assert lo("rollback", "b", "0").returncode == 0
    assert paths(lo, "b") == set() and paths(lo, "src") == BEFORE


def test_gc_keeps_shared_layers_and_sweeps_unreferenced_ones(lo):
    three_runs(lo, "src")
    assert lo("fork", "src", "b", "--at", "1").returncode == 0
    assert lo("rollback", "src", "1").returncode == 0  # moves the rest into the store too
    store = Path(lo.state) / "layers"
    ids = {p.name for p in store.iterdir() if not p.name.startswith(".")}
    assert len(ids) == 3  # steps 1, 2 and the frozen live changes
    assert lo("discard", "src", "--now").returncode == 0  # sweeps the store: what b refers to stays
    left = {p.name for p in store.iterdir() if not p.name.startswith(".")}
    ref = (lo.session_dir("b") / "steps" / "0001.ref").read_text().strip()
    assert left == {ref}  # only the fork's step 1 is still referred to
    assert paths(lo, "b") == AT_ONE
    assert os.listdir(str(store / ref)) == ["one.txt"]


def test_rolled_back_layers_follow_the_trash_clock(lo):
    three_runs(lo, "s")
    assert lo("rollback", "s", "1").returncode == 0
    at = lo.session_dir("s") / "rolled-back" / "at"
    assert lo("gc").returncode == 0  # young: kept
    assert (lo.session_dir("s") / "rolled-back" / "0002.ref").exists()
    old = at.stat().st_mtime - 25 * 3600
    os.utime(str(at), (old, old))
    r = lo("gc")
    assert r.returncode == 0 and b"a rollback of session s set aside" in r.stdout
    assert len([p for p in (Path(lo.state) / "layers").iterdir() if not p.name.startswith(".")]) == 1
    r = lo("rollback", "s", "--undo")
    assert r.returncode == 1 and b"are gone: gc removed them after 24 hours" in r.stderr
    assert paths(lo, "s") == AT_ONE


def test_sizes_and_max_size_count_every_layer(lo):
    run_ok(lo, "head -c 3000000 /dev/urandom > big.bin", "s")
    run_ok(lo, "echo 2 > two.txt", "s")  # big.bin is now a frozen step
    assert lo("fork", "s", "f").returncode == 0
    r = lo("sessions", "--json")
    by = {s["name"]: s for s in json.loads(r.stdout)}
    assert by["s"]["bytes"] >= 3000000 and by["f"]["bytes"] >= 3000000
    assert by["f"]["store_bytes"] >= 3000000 and by["s"]["upper_bytes"] < 100000
    out = lo("sessions").stdout.decode()
    assert "layers shared by forks count in each session" in out
    # --max-size counts the frozen 3 MB: 2 MB more passes 4M.
    r = lo("run", "--target", lo.target, "--on-exit", "keep", "--session", "s", "--max-size", "4M", "--",
           "/bin/sh", "-c", "head -c 2000000 /dev/zero > more.bin; sleep 2; echo finished", timeout=60)
    assert r.returncode == 125 and b"session's layers hold" in r.stderr, r.stderr


def test_gc_shows_the_sizes_sessions_shows_and_frees_a_shared_layer_once(lo):
    run_ok(lo, "head -c 3000000 /dev/urandom > big.bin", "s")
    run_ok(lo, "echo 2 > two.txt", "s")  # big.bin is now a frozen step
    assert lo("fork", "s", "f").returncode == 0  # s's steps move to the layer store; f refers to them too
    by = {x["name"]: x for x in json.loads(lo("sessions", "--json").stdout)}
    assert by["s"]["store_bytes"] == by["f"]["store_bytes"] >= 3000000
    out = lo("gc", "--older-than", "0s", "--dry-run").stdout.decode()
    for n in ("s", "f"):
        line = [x for x in out.splitlines() if x.startswith("would remove session %s " % n)][0]
        assert line.endswith(" of it in the layer store)"), out
    r = lo("gc", "--older-than", "0s")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert " layer(s) no session refers to (" in out, out
    freed = int(out.splitlines()[-1].rsplit("(", 1)[1].split()[0])
    # Each session's own layers, and the layer they shared once (by the sweep).
    own = sum(by[n]["bytes"] - by[n]["store_bytes"] for n in ("s", "f"))
    assert freed == own + by["f"]["store_bytes"], out


def test_the_shared_layers_line_is_for_forks_only(lo):
    # A rollback moves the steps into the layer store; with no fork nothing
    # is shared, and `sessions` said "layers shared by forks" all the same.
    run_ok(lo, "echo 1 > one.txt", "s")
    run_ok(lo, "echo 2 > two.txt", "s")
    assert lo("rollback", "s", "1").returncode == 0
    assert list((lo.session_dir("s") / "steps").glob("*.ref"))
    out = lo("sessions").stdout.decode()
    assert "layers shared by forks" not in out and len(out.splitlines()) == 2, out
    assert lo("fork", "s", "f").returncode == 0
    assert "(layers shared by forks count in each session; all together: " in lo("sessions").stdout.decode()


def test_a_run_after_a_killed_rollback_finishes_it_first(lo):
    three_runs(lo, "s")
    killed(lo("rollback", "s", "1", env={"LAYOVER_FAULT": "rollback:committed:1:kill"}))
    run_ok(lo, "echo 4 > four.txt", "s")  # resumes: finishes the rollback, then freezes nothing
    run_ok(lo, "true", "s")  # freezes four.txt as step 2
    assert paths(lo, "s") == {"one.txt", "four.txt"} and leftovers(lo, "s") == []
    assert log_steps(lo, "s") == [2, 1]
    assert (lo.session_dir("s") / "rolled-back" / "0003.ref").exists()  # what the rollback set aside is kept


def test_a_rollback_made_before_the_store_is_undone(lo):
    # The old layout: rolled-back/ holding real step dirs and the live upper.
    three_runs(lo, "s")
    run_ok(lo, "true", "s")  # steps 1..3, no live changes
    d = lo.session_dir("s")
    rb = d / "rolled-back"
    rb.mkdir()
    (rb / "at").write_text("1\n")
    os.rename(str(d / "steps" / "0002"), str(rb / "0002"))
    os.rename(str(d / "steps" / "0002.json"), str(rb / "0002.json"))
    os.rename(str(d / "steps" / "0003"), str(rb / "upper"))
    os.unlink(str(d / "steps" / "0003.json"))
    assert paths(lo, "s") == AT_ONE
    r = lo("rollback", "s", "--undo")
    assert r.returncode == 0, r.stderr
    assert paths(lo, "s") == BEFORE and log_steps(lo, "s") == [3, 2, 1] and not rb.exists()
