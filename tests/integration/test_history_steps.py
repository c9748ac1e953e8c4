"""Per-step views and operations on kept sessions (docs/history.md, issue 23):
status/diff --step and --steps, revert, compare and diff A B, apply/save --upto."""
import json
import os
from pathlib import Path

import pytest

from capture_util import manifest_of, status_json


def run_ok(lo, cmd, session):
    r = lo.run(cmd, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def three_steps(lo, name="s"):
    # 1: adds a.txt, changes notes.txt; 2: deletes docs/, adds b.txt, changes a.txt; 3: adds c.txt, chmod old/a.txt
    run_ok(lo, "echo a > a.txt; echo changed > notes.txt", name)
    run_ok(lo, "rm -r docs; echo b > b.txt; echo a2 > a.txt", name)
    run_ok(lo, "echo c > c.txt; chmod 600 old/a.txt", name)
    run_ok(lo, "true", name)  # freezes step 3; the live upper stays empty


def kinds(lo, *args):
    r = lo("status", *args, "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return {c["path"]: c["kind"] for c in json.loads(r.stdout)}


def test_status_and_diff_of_single_steps(lo):
    three_steps(lo)
    assert kinds(lo, "s", "--step", "1") == {"a.txt": "added", "notes.txt": "modified"}
    # Step 2 against the view after step 1: a.txt existed then, so it is modified.
    assert kinds(lo, "s", "--step", "2") == {"a.txt": "modified", "b.txt": "added", "docs": "deleted"}
    assert kinds(lo, "s", "--steps", "2..3") == {"a.txt": "modified", "b.txt": "added", "docs": "deleted",
                                                 "c.txt": "added", "old/a.txt": "metadata"}
    assert kinds(lo, "s", "--steps=1..3") == kinds(lo, "s")
    r = lo("diff", "s", "--step", "2", "--no-pager", "--color=never")
    assert r.returncode == 1, r.stderr.decode(errors="replace")
    out = r.stdout.decode()
    assert "-a\n+a2\n" in out and "+b\n" in out and "-hello\n" in out and "c.txt" not in out
    # Errors: a step it does not have, N > M, a patch file: nothing printed on stdout.
    r = lo("status", "s", "--step", "4")
    assert r.returncode == 1 and b"no step 4" in r.stderr and r.stdout == b""
    assert lo("status", "s", "--steps", "3..2").returncode == 2
    assert lo("status", "s", "--step", "0").returncode == 2
    assert lo("diff", "s", "--steps", "2").returncode == 2
    # diff's errors exit 2, as diff(1)'s: 1 is "there are changes" (a step it does not have, and a patch
    # file with --step, exited 1, the latter as "diff: diff: ... (a patch holds no steps)", which
    # `layover log FILE` contradicts).
    r = lo("diff", "s", "--step", "4")
    assert r.returncode == 2 and b"no step 4" in r.stderr and r.stdout == b"", r.stderr
    r = lo("diff", "/nonexistent/p.tar.zst", "--step", "1")
    assert r.returncode == 2 and r.stderr.decode() == (
        "layover: diff: /nonexistent/p.tar.zst is a patch file: it carries its steps' records ('layover log "
        "/nonexistent/p.tar.zst'), not their layers; --step and --steps take the session it was saved from; see "
        "'layover diff --help'\n"), r.stderr
    # status of a patch file names show, as show of a session names status (it said "invalid session name").
    patch = Path(lo.state).parent / "s.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    r = lo("status", patch)
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: %s is a patch file, not a session: 'layover show %s' lists its changes\n" % (patch, patch))
    r = lo("apply", patch, "--upto", "1", "--dry-run")  # a usage mistake: 2, as diff's (it exited 1)
    assert r.returncode == 2 and b"not their layers; --upto takes the session it was saved from" in r.stderr


def test_upto_applies_and_saves_only_the_first_steps(lo, tmp_path):
    three_steps(lo)
    t = Path(lo.target)
    patch = tmp_path / "upto1.tar.zst"
    r = lo("save", "s", "--upto", "1", "-o", patch)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert {c["path"] for c in manifest_of(patch)["changes"]} == {"a.txt", "notes.txt"}
    r = lo("apply", "s", "--upto", "1", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (t / "a.txt").read_text() == "a\n" and (t / "notes.txt").read_text() == "changed\n"
    assert not (t / "b.txt").exists() and (t / "docs" / "readme.txt").exists() and not (t / "c.txt").exists()
    assert lo("apply", "s", "--upto", "9", "--yes").returncode == 1
    assert lo("save", "s", "--upto", "x", "-o", tmp_path / "x.tar.zst").returncode == 2


def tree(root):
    """Every entry under root: (mode, bytes or link target)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = p.lstat()
            body = os.readlink(p) if p.is_symlink() else (p.read_bytes() if p.is_file() else None)
            out[str(p.relative_to(root))] = (st.st_mode, body)
    return out


def test_revert_of_a_middle_step_then_apply_gives_the_other_steps(lo, tmp_path):
    three_steps(lo)
    t = Path(lo.target)
    before = tree(t)
    r = lo("revert", "s", "2")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert b"step 2 reverted by a new step 4" in r.stderr
    log = json.loads(lo("log", "s", "--json").stdout)["steps"]
    assert [s["step"] for s in log] == [4, 3, 2, 1] and log[0]["label"].startswith("revert 2: /bin/sh -c rm -r docs")
    # Frozen layers never change: step 2 still holds what it did.
    assert (lo.session_dir("s") / "steps" / "0002" / "b.txt").read_text() == "b\n"
    # docs/ comes back as a copy under step 2's whiteout, compared with the real docs/: no change.
    assert kinds(lo, "s") == {"a.txt": "added", "notes.txt": "modified", "c.txt": "added", "old/a.txt": "metadata"}
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    after = tree(t)
    assert after["a.txt"][1] == b"a\n" and after["notes.txt"][1] == b"changed\n" and after["c.txt"][1] == b"c\n"
    assert after["old/a.txt"][0] & 0o777 == 0o600
    assert "b.txt" not in after and after["docs/readme.txt"] == before["docs/readme.txt"]
    assert set(after) == set(before) | {"a.txt", "c.txt"}
    # A step that does not exist: exit 1, nothing changed.
    assert lo("revert", "s", "9").returncode == 1
    assert lo("revert", "s").returncode == 2


def test_revert_refuses_when_later_changes_touched_its_paths(lo):
    run_ok(lo, "echo a > a.txt; mkdir d; echo x > d/x", "c")
    run_ok(lo, "echo more >> a.txt", "c")
    run_ok(lo, "echo y > d/y", "c")  # live: under a dir step 1 added
    steps_dir = lo.session_dir("c") / "steps"
    layers = sorted(p.name for p in steps_dir.iterdir())
    r = lo("revert", "c", "1")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "a.txt: step 2" in err and "d: the live changes" in err and "nothing was changed" in err
    assert sorted(p.name for p in steps_dir.iterdir()) == layers
    assert kinds(lo, "c") == {"a.txt": "added", "d": "added", "d/x": "added", "d/y": "added"}


def test_compare_and_diff_of_two_forks(lo):
    run_ok(lo, "echo base > shared.txt", "src")
    run_ok(lo, "true", "src")
    assert lo("fork", "src", "x").returncode == 0 and lo("fork", "src", "y").returncode == 0
    run_ok(lo, "echo x > only_x.txt; echo x > both.txt; rm notes.txt", "x")
    run_ok(lo, "echo y > only_y.txt; echo y > both.txt; echo same > shared.txt; echo base > shared.txt", "y")
    r = lo("compare", "x", "y", "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    got = json.loads(r.stdout)
    assert got["from"] == "x" and got["to"] == "y"
    assert {c["path"]: c["kind"] for c in got["changes"]} == {"only_x.txt": "deleted", "only_y.txt": "added",
                                                             "both.txt": "modified", "notes.txt": "added"}
    text = lo("compare", "x", "y")
    assert text.returncode == 0 and text.stdout.decode().startswith("from session 'x' to session 'y': 4 paths differ")
    # --help names the letters it prints (it said '+ only in B, - only in A, ~ differs').
    lines = text.stdout.decode().splitlines()
    assert "A  only_y.txt" in lines and "D  only_x.txt" in lines and "M  both.txt" in lines, lines
    helped = lo("compare", "--help").stdout.decode()
    assert "A only in B, D only in A, M differs" in helped and "+ only in B" not in helped, helped
    r = lo("diff", "x", "y", "--no-pager", "--color=never")
    assert r.returncode == 1, r.stderr.decode(errors="replace")
    out = r.stdout.decode()
    assert "-x\n+y\n" in out and "+one\n" in out and "shared.txt" not in out
    # Another target: refused.
    other = Path(lo.target) / "docs"
    r = lo("run", "--target", other, "--session", "elsewhere", "--on-exit", "keep", "--", "/bin/sh", "-c", "echo z > z")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    r = lo("compare", "x", "elsewhere")
    assert r.returncode == 1 and b"different targets" in r.stderr
    # Resuming it over another tree (--target left out, say) names the --target that resumes it.
    r = lo("run", "--target", lo.target, "--session", "elsewhere", "--", "/bin/true")
    assert r.returncode == 125 and r.stderr.decode() == (
        "layover: session 'elsewhere' overlays %s, not %s; resume it with --target %s, or use another --session "
        "name\n" % (other, lo.target, other)), r.stderr
    assert lo("compare", "x").returncode == 2


def test_diff_of_two_sessions_makes_no_stale_copy_note(lo):
    # A's file changed after B's copy of it: that is what the two sessions
    # differ by, not a real file that moved (the note said "changed on the
    # real filesystem ... apply will report a conflict" for a file the real
    # tree never had).
    run_ok(lo, "echo hi > e.txt", "a")
    run_ok(lo, "echo more >> e.txt", "a")  # freezes step 1
    assert lo("fork", "a", "b", "--at", "1").returncode == 0
    r = lo("diff", "a", "b", "--no-pager", "--color=never")
    assert r.returncode == 1 and "-more\n" in r.stdout.decode(), r.stderr
    assert b"changed on the real filesystem" not in r.stderr, r.stderr


def test_compare_reads_both_stacks_in_place_through_dirs(lo):
    # Each session two steps deep, both changing inside real dirs.
    run_ok(lo, "echo base > docs/base.txt", "src")
    run_ok(lo, "true", "src")
    assert lo("fork", "src", "p").returncode == 0 and lo("fork", "src", "q").returncode == 0
    run_ok(lo, "echo p > docs/p.txt; rm -r old/sub", "p")
    run_ok(lo, "echo p2 >> docs/p.txt", "p")
    run_ok(lo, "echo q > docs/q.txt; rm docs/readme.txt", "q")
    run_ok(lo, "true", "q")
    r = lo("compare", "p", "q", "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    got = {c["path"]: c["kind"] for c in json.loads(r.stdout)["changes"]}
    assert got == {"docs/p.txt": "deleted", "docs/q.txt": "added", "docs/readme.txt": "deleted",
                   "old/sub": "added", "old/sub/b.txt": "added"}
    # Nothing of the comparison is left in either session.
    for name in ("p", "q"):
        assert not [x for x in os.listdir(lo.session_dir(name)) if x.startswith("flat.")]


def test_compare_of_a_remade_dir_lists_only_what_differs(lo):
    # x removes and remakes old/ (a.txt the same, sub/ gone, c.txt new); y
    # leaves it alone: only what differs is listed, either way round.
    run_ok(lo, "echo base > shared.txt", "src")
    run_ok(lo, "true", "src")
    assert lo("fork", "src", "x").returncode == 0 and lo("fork", "src", "y").returncode == 0
    run_ok(lo, "cp -a old .k; rm -rf old; mkdir old; cp -a .k/a.txt old/; rm -rf .k; echo c > old/c.txt", "x")
    run_ok(lo, "echo y > only_y.txt", "y")
    for a, b, want in (("x", "y", {"old/sub": "added", "old/sub/b.txt": "added", "old/c.txt": "deleted",
                                   "only_y.txt": "added"}),
                       ("y", "x", {"old/sub": "deleted", "old/c.txt": "added", "only_y.txt": "deleted"})):
        r = lo("compare", a, b, "--json")
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        assert {c["path"]: c["kind"] for c in json.loads(r.stdout)["changes"]} == want, (a, b)


def session_state(lo, name):
    """What a crash must leave exactly before or after: the steps with their records, and the view.
    (A record written ahead of its layer's rename is no step: log, count and the next freeze ignore it.)"""
    log = lo("log", name, "--json")
    assert log.returncode == 0, log.stderr.decode(errors="replace")
    return json.loads(log.stdout)["steps"], sorted(json.dumps(c, sort_keys=True) for c in status_json(lo, name))


@pytest.mark.parametrize("point", ["revert:built:1", "revert:record:1", "revert:committed:1"])
def test_revert_killed_at_each_fault_point_is_before_or_after_and_a_rerun_finishes(lo, point):
    three_steps(lo)
    before = session_state(lo, "s")
    r = lo("revert", "s", "2", env={"LAYOVER_FAULT": point + ":kill"})
    assert r.returncode == -9 or r.returncode == 137, r.stderr.decode(errors="replace")
    mid = session_state(lo, "s")
    r = lo("revert", "s", "2")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    after = session_state(lo, "s")
    assert after != before and mid in (before, after)
    assert (mid == after) == (point == "revert:committed:1")
    assert not (lo.session_dir("s") / "revert.new").exists()
    assert kinds(lo, "s")["c.txt"] == "added" and "b.txt" not in kinds(lo, "s")
    # Once more: already done, nothing changes.
    r = lo("revert", "s", "2")
    assert r.returncode == 0 and b"already reverted (step 4)" in r.stderr
    assert session_state(lo, "s") == after


def test_sessions_lists_each_sessions_step_count(lo):
    three_steps(lo, "stepped")
    run_ok(lo, "echo a > a.txt", "flat")
    listed = {x["name"]: x["steps"] for x in json.loads(lo("sessions", "--json").stdout)}
    assert listed == {"stepped": 3, "flat": 0}
    lines = lo("sessions", check=True).stdout.decode().splitlines()
    assert lines[0].split()[:6] == ["NAME", "STATE", "AGE", "SIZE", "STEPS", "CHANGES"]
    row = {l.split()[0]: l.split() for l in lines[1:]}
    assert row["stepped"][4] == "3" and row["flat"][4] == "0"


def test_a_squashed_step_is_out_of_reach(lo):
    three_steps(lo)
    rec = lo.session_dir("s") / "steps" / "0001.json"
    data = json.loads(rec.read_text())
    data["squashed"] = True
    rec.write_text(json.dumps(data))
    for args in (("status", "s", "--step", "1"), ("status", "s", "--steps", "2..3"), ("revert", "s", "1"),
                 ("apply", "s", "--upto", "1", "--yes")):
        r = lo(*args)
        assert r.returncode == 1 and b"out of reach" in r.stderr, (args, r.stderr)
    # Step 2's end is a layer boundary still.
    assert kinds(lo, "s", "--step", "3") == {"c.txt": "added", "old/a.txt": "metadata"}


def test_revert_of_a_mode_change_a_replaced_symlink_and_an_addition_leaves_the_later_step(lo):
    run_ok(lo, "chmod 700 docs; rm link; ln -s docs link; echo 1 > docs/new; echo x >> old/sub/b.txt", "m")
    run_ok(lo, "echo z > z", "m")
    run_ok(lo, "true", "m")
    r = lo("revert", "m", "1")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert kinds(lo, "m") == {"z": "added"}
    run_ok(lo, "test \"$(readlink link)\" = notes.txt && test ! -e docs/new && test \"$(cat old/sub/b.txt)\" = b "
               "&& test \"$(stat -c %a docs)\" = 755 && test -f z", "m")


def test_status_reads_frozen_layers_from_the_kept_index(lo):
    """docs/history.md, "The layer index": the frozen layers' structure is
    kept in SESSION/layer-index; a status read from it lists what a listing
    of every layer did, and a new step is indexed when it appears."""
    three_steps(lo)
    want = {"a.txt": "added", "notes.txt": "modified", "b.txt": "added", "docs": "deleted", "c.txt": "added",
            "old/a.txt": "metadata"}
    index = lo.session_dir("s") / "layer-index"
    assert kinds(lo, "s") == want
    assert index.is_file() and (index.stat().st_mode & 0o777) == 0o600
    first = index.read_bytes()
    assert kinds(lo, "s") == want  # read from the index
    assert index.read_bytes() == first  # nothing new: not written again
    run_ok(lo, "rm c.txt; mkdir -p old/new && echo n > old/new/f", "s")
    run_ok(lo, "true", "s")  # freezes step 4
    want.pop("c.txt")
    want.update({"old/new": "added", "old/new/f": "added"})
    assert kinds(lo, "s") == want
    assert index.read_bytes() != first
