"""Entries an agent can make that are unusual but legal, through run -> apply -> undo as an
ordinary user (found by the attack pass of 26 Nov, "pass 11"): times past what int64
nanoseconds hold, read-only and mode-000 directories, layover's own reserved names."""
import json
import os
import stat

from conftest import snapshot

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
