"""Helpers for the capture integration tests."""
import base64
import json
import subprocess

import pytest


def raw_path(change):
    """The exact bytes of a change's path (path_b64 when not UTF-8)."""
    if "path_b64" in change:
        return base64.b64decode(change["path_b64"])
    return change["path"].encode()


def status_json(lo, session):
    r = lo("status", session, "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout)


def by_path(changes):
    return {raw_path(c): c for c in changes}


def save(lo, session, out):
    r = lo("save", session, "-o", out)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return out


def tar_members(patch):
    """Member names as GNU tar lists them (-tvf, verbose lines kept too)."""
    r = subprocess.run(["tar", "--zstd", "-tvf", str(patch)], capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    b = subprocess.run(["bsdtar", "-tf", str(patch)], capture_output=True)
    assert b.returncode == 0, b.stderr.decode(errors="replace")
    return r.stdout.decode(errors="replace"), b.stdout.decode(errors="replace").splitlines()


def manifest_of(patch):
    r = subprocess.run(["tar", "--zstd", "-xOf", str(patch), ".layover/manifest.json"], capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout)


def show_json(lo, patch):
    r = lo("show", patch, "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return json.loads(r.stdout)


# The capture tests' own (test_capture_status.py, test_capture_save_show.py).

@pytest.fixture(autouse=True)
def discard_sessions(lo):
    """Remove the sessions afterwards (deep trees and mode-000 dirs defeat pytest's own cleanup)."""
    yield
    for name in ("s", "live"):
        if lo.session_dir(name).exists():
            lo("discard", name, "--now")


def run_ok(lo, cmd, session="s"):
    r = lo.run(cmd, "--keep-empty", session=session)  # a session with no changes is examined too
    assert r.returncode == 0, r.stderr.decode(errors="replace")
