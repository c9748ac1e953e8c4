"""All-or-nothing: injected faults, a full filesystem and SIGKILL at several
points leave the target either as before or (after a rerun) as after, never
half-written; staging leftovers, undo stores and journals are cleaned up."""
import json
import os
import subprocess
import sys

from pathlib import Path

import pytest

from apply_util import copy_tree, dir_mover, tree
from conftest import LAYOVER, missing_feature, proc_stat

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
    r = lo("apply", patch, "--target", lo.target, "--yes", env={"LAYOVER_FAULT": fault})
    assert r.returncode == 1
    assert b"injected fault" in r.stderr and b"nothing was applied" in r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


@pytest.mark.parametrize("point", [
    "apply:stage:3:kill", "apply:commit:1:kill", "apply:commit:4:kill", "apply:done:1:kill",
    # Kills during a rollback. Writing undo.json failed after it was in place
    # (its directory's fsync): not to be taken for a finished apply.
    "apply:recorded:1,apply:revert:3:kill",
    # Between a restore's swap and its move of the new version to the trash:
    # the rerun finishes that restore instead of stopping at it.
    "apply:commit:6,restore:swapped:1:kill",
])
def test_apply_sigkill_then_rerun_gives_a_consistent_tree(lo, tmp_path, point):
    patch, expected = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes", env={"LAYOVER_FAULT": point})
    assert r.returncode in (-9, 137), r.stderr
    # The rerun first recovers the interrupted apply (reverting it, or keeping it
    # when it had completed), then applies again (or finds it already applied).
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json")
    out = json.loads(r.stdout)
    assert out["recovered"], out
    if "," in point:
        assert out["recovered"].startswith("reverted an interrupted apply"), out
    if point == "apply:done:1:kill":  # it had completed: all of it is on the target already (newuser11:
        # its new dir `nd` kept it a conflict before), so nothing is applied again
        assert r.returncode == 0 and not out["conflicts"] and not out["applied"] and out["already"], out
        undo = out["recovered"].rsplit(" ", 1)[1]
    else:
        assert r.returncode == 0, out
        undo = out["undo"]
    assert tree(lo.target) == tree(expected)
    r = lo("undo", undo)
    assert r.returncode == 0, r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


# The second: killed between a restore's swap and its move of the new
# version to the trash; the rerun must finish, not take the path for a
# later edit.
@pytest.mark.parametrize("fault", ["undo:restore:3:kill", "restore:swapped:1:kill"])
def test_undo_sigkill_then_rerun_finishes_the_undo(lo, tmp_path, fault):
    patch, expected = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json")
    undo = json.loads(r.stdout)["undo"]
    r = lo("undo", undo, env={"LAYOVER_FAULT": fault})
    assert r.returncode in (-9, 137)
    r = lo("undo", undo)
    assert r.returncode == 0, r.stderr
    assert b"finished an interrupted undo" in r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


ENOSPC_SCRIPT = r"""
import json, os, subprocess, sys, time
sys.path.insert(0, sys.argv[4])
from apply_util import tree
from conftest import proc_stat
small, home, patch, _ = sys.argv[1:5]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", small], check=True)
subprocess.run(["cp", "-a", home + "/.", small], check=True)
before = tree(small, mtimes=True)
# The patch fits when apply checks the free space; another program fills the
# disk while it stages (apply stopped at its first staging step meanwhile).
p = subprocess.Popen([os.environ["LAYOVER"], "apply", patch, "--yes", "--target", small],
                     env=dict(os.environ, LAYOVER_FAULT="apply:stage:1:stop"),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
while proc_stat(p.pid)[0] != "T":
    time.sleep(0.01)
filler = os.path.join(small, "..filler")
subprocess.run(["sh", "-c", "cat /dev/zero > " + filler], capture_output=True)
os.kill(p.pid, 18)
out, err = p.communicate()
r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
os.unlink(filler)
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


def wait_stopped(proc, seconds=20):
    import time
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc_stat(proc.pid)[0] == "T":
            return
        if proc.poll() is not None:
            raise AssertionError("apply ended before the fault point: %r" % (proc.communicate(),))
        time.sleep(0.01)
    raise AssertionError("apply never reached the fault point")


def run_stopped(lo, args, fault, meanwhile):
    """Run `layover ARGS` with LAYOVER_FAULT=FAULT:stop, call meanwhile() while
    it is stopped there, continue it; return (returncode, stdout, stderr)."""
    env = dict(lo.env, LAYOVER_FAULT=fault + ":stop")
    proc = subprocess.Popen([LAYOVER, *map(str, args)], cwd=str(lo.target), env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_stopped(proc)
        meanwhile()
    finally:
        os.kill(proc.pid, 18)  # SIGCONT
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def editor_save(path, text):
    """Save as editors do: write a new file, rename it over the path."""
    tmp = os.path.join(os.path.dirname(str(path)), ".swap-" + os.path.basename(str(path)))
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, str(path))


@pytest.mark.parametrize("edit", ["echo sandbox > notes.txt", "rm notes.txt"])
def test_a_file_saved_over_the_path_as_the_commit_renames_is_kept_and_nothing_applied(lo, tmp_path, edit):
    # An editor saves notes.txt (write a new file, rename it over) between
    # apply's last re-check and its rename: apply must not move the user's
    # new file into the undo store as if it were the original.
    r = lo.run("cd '%s' && %s" % (lo.target, edit), session="race")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "race.tar.zst"
    lo("save", "race", "-o", patch, check=True)
    before = tree(lo.target, mtimes=True)
    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], "apply:rename:1",
                               lambda: editor_save(lo.target / "notes.txt", "the user's latest words\n"))
    assert rc == 1, (out, err)
    assert b"notes.txt was replaced on the target while applying" in err and b"nothing was applied" in err
    with open(os.path.join(str(lo.target), "notes.txt")) as f:
        assert f.read() == "the user's latest words\n"
    # Everything else is as it was.
    after = tree(lo.target, mtimes=True)
    assert {k: v for k, v in after[0].items() if k != b"notes.txt"} == \
        {k: v for k, v in before[0].items() if k != b"notes.txt"}
    assert after[1] == before[1]
    assert leftovers(lo) == []


def test_without_rename_exchange_apply_rollback_and_undo_still_restore_exactly(lo, tmp_path):
    # Filesystems without RENAME_EXCHANGE (NFS, many FUSE ones): replacing
    # moves the original aside first, and restoring moves the new entry away
    # first. A rollback and an undo must both get back to the exact tree.
    patch, expected = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    no_x = {"LAYOVER_NO_EXCHANGE": "1"}
    r = lo("apply", patch, "--target", lo.target, "--yes", env=dict(no_x, LAYOVER_FAULT="apply:commit:6"))
    assert r.returncode == 1 and b"nothing was applied" in r.stderr, r.stderr
    assert tree(lo.target, mtimes=True) == before
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json", env=no_x)
    assert r.returncode == 0, r.stderr
    assert tree(lo.target) == tree(expected)
    r = lo("undo", json.loads(r.stdout)["undo"], env=no_x)
    assert r.returncode == 0, r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []


def test_a_directory_moved_out_of_the_target_before_the_commit_is_not_written_into(lo, tmp_path):
    # docs/ is moved out of the target (and a new one made) after staging:
    # the commit resolves docs afresh beneath the target instead of renaming
    # into the directory that now lies outside it.
    r = lo.run("cd '%s' && echo new > docs/readme.txt" % lo.target, session="mv")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "mv.tar.zst"
    lo("save", "mv", "-o", patch, check=True)
    moved = tmp_path / "moved"
    move_docs_out = dir_mover(lo, moved)

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], "apply:commit:1", move_docs_out)
    assert rc == 1, (out, err)
    assert b"docs/readme.txt" in err and b"nothing was applied" in err, err
    assert (moved / "readme.txt").read_text() == "hello\nworld\n"
    assert os.listdir(str(lo.target / "docs")) == []


def test_a_file_saved_over_the_path_as_undo_swaps_it_back_is_kept(lo, tmp_path):
    r = lo.run("cd '%s' && echo sandbox > notes.txt" % lo.target, session="ur")
    assert r.returncode == 0, r.stderr
    r = lo("apply", "ur", "--yes", "--json")
    undo = json.loads(r.stdout)["undo"]
    rc, out, err = run_stopped(lo, ["undo", undo], "restore:swap:1",
                               lambda: editor_save(lo.target / "notes.txt", "saved during undo\n"))
    assert rc == 1, (out, err)
    assert b"notes.txt was changed while it was being restored" in err, err
    assert (lo.target / "notes.txt").read_text() == "saved during undo\n"
    # The original waits in the undo store.
    found = [p for p in Path(undo).rglob("*")
             if p.is_file() and p.read_bytes() == b"one\ntwo\nthree\n"]
    assert found, list(Path(undo).rglob("*"))


@pytest.mark.parametrize("at", [1, 3, 5])
def test_a_forced_undo_killed_midway_is_finished_by_the_rerun_as_forced(lo, tmp_path, at):
    # notes.txt was edited after apply, so only --force undoes; a kill part
    # way must not leave a journal that a plain rerun can never finish.
    patch, expected = make_patch(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json")
    undo = json.loads(r.stdout)["undo"]
    editor_save(lo.target / "notes.txt", "edited after apply\n")
    r = lo("undo", undo, "--force", env={"LAYOVER_FAULT": "undo:restore:%d:kill" % at})
    assert r.returncode in (-9, 137), r.stderr
    r = lo("undo", undo)
    assert r.returncode == 0, r.stderr
    assert b"finished an interrupted undo" in r.stderr
    assert tree(lo.target, mtimes=True) == before
    assert leftovers(lo) == []
