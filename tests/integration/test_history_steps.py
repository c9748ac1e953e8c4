"""Per-step views and operations on kept sessions (docs/history.md, issue 23):
status/diff --step and --steps, revert, compare and diff A B, apply/save --upto."""
import json
import os
from pathlib import Path

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
    assert lo("diff", "/nonexistent/p.tar.zst", "--step", "1").returncode == 1


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
