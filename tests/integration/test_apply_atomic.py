"""All-or-nothing: injected faults, a full filesystem and SIGKILL at several
points leave the target either as before or (after a rerun) as after, never
half-written; staging leftovers, undo stores and journals are cleaned up."""
import json
import os
import subprocess
import sys

import pytest

from apply_util import copy_tree, tree
from conftest import LAYOVER, missing_feature

EDIT = ("echo sandbox > notes.txt && rm -r old && mkdir -p nd/sub && echo x > nd/sub/x && "
        "rm link && ln -s docs link && echo big > docs/readme.txt && echo n > fresh.txt")


def make_patch(lo, tmp_path, session="p"):
    expected = copy_tree(lo.target, tmp_path / "expected")
    subprocess.run(["/bin/sh", "-c", EDIT], cwd=str(expected), check=True)
    r = lo.run("cd '%s' && %s" % (lo.target, EDIT), session=session)
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "p.tar.zst"
    lo("save", session, "-o", patch, check=True)
    return patch, expected


def leftovers(lo):
    bad = []
    for dirpath, dirnames, filenames in os.walk(str(lo.target)):
        bad += [os.path.join(dirpath, n) for n in dirnames + filenames if n.startswith(".layover-")]
    jdir = lo.state / "journal"
    if jdir.exists():
        bad += [str(p) for p in jdir.iterdir()]
    return bad


@pytest.mark.parametrize("fault", ["apply:stage:1", "apply:stage:4", "apply:commit:1", "apply:commit:3",
                                   "apply:commit:6"])
def test_apply_injected_fault_leaves_the_target_exactly_as_before(lo, tmp_path, fault):
    patch, _ = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--yes", env={"LAYOVER_FAULT": fault})
    assert r.returncode == 1
    assert b"injected fault" in r.stderr and b"nothing was applied" in r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


@pytest.mark.parametrize("point", ["apply:stage:3:kill", "apply:commit:1:kill", "apply:commit:4:kill",
                                   "apply:done:1:kill"])
def test_apply_sigkill_then_rerun_gives_a_consistent_tree(lo, tmp_path, point):
    patch, expected = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--yes", env={"LAYOVER_FAULT": point})
    assert r.returncode in (-9, 137), r.stderr
    # The rerun first recovers the interrupted apply (reverting it, or keeping it
    # when it had completed), then applies again (or finds it already applied).
    r = lo("apply", patch, "--yes", "--json")
    out = json.loads(r.stdout)
    assert out["recovered"], out
    if point == "apply:done:1:kill":
        assert r.returncode == 1 and out["conflicts"], out
        undo = out["recovered"].rsplit(" ", 1)[1]
    else:
        assert r.returncode == 0, out
        undo = out["undo"]
    assert tree(lo.target) == tree(expected)
    r = lo("undo", undo)
    assert r.returncode == 0, r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


def test_undo_sigkill_then_rerun_finishes_the_undo(lo, tmp_path):
    patch, expected = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--yes", "--json")
    undo = json.loads(r.stdout)["undo"]
    r = lo("undo", undo, env={"LAYOVER_FAULT": "undo:restore:3:kill"})
    assert r.returncode in (-9, 137)
    r = lo("undo", undo)
    assert r.returncode == 0, r.stderr
    assert b"finished an interrupted undo" in r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


ENOSPC_SCRIPT = r"""
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[4])
from apply_util import tree
small, home, patch, _ = sys.argv[1:5]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", small], check=True)
subprocess.run(["cp", "-a", home + "/.", small], check=True)
before = tree(small, mtimes=True)
r = subprocess.run([os.environ["LAYOVER"], "apply", patch, "--yes", "--target", small], capture_output=True)
after = tree(small, mtimes=True)
left = [n for n in os.listdir(small) if n.startswith(".layover")]
print(json.dumps({"rc": r.returncode, "err": r.stderr.decode(errors="replace"),
                  "same": before == after, "left": left}))
"""


def test_apply_on_a_full_filesystem_leaves_the_target_unchanged(lo, tmp_path):
    if subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        missing_feature("unshare -rm (user+mount namespaces) for a private tmpfs")
    big = "head -c 1048576 /dev/urandom > big.bin"
    r = lo.run("cd '%s' && echo s > notes.txt && %s" % (lo.target, big), session="full")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "full.tar.zst"
    lo("save", "full", "-o", patch, check=True)
    small = tmp_path / "small"
    small.mkdir()
    env = dict(lo.env, LAYOVER=LAYOVER)
    r = subprocess.run(["unshare", "-rm", sys.executable, "-c", ENOSPC_SCRIPT, str(small), str(lo.target),
                        str(patch), os.path.dirname(os.path.abspath(__file__))],
                       capture_output=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["rc"] == 1, res
    assert "No space left" in res["err"] or "full" in res["err"], res
    assert res["same"], res
    assert res["left"] == [], res
