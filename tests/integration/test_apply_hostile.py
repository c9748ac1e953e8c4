"""Hostile input: a symlink on the real tree pointing outside. The victim
outside stays unchanged and nothing is applied."""
import json
import os

import pytest

from apply_util import saved_patch, tree


def outside_unchanged(victim):
    return sorted(os.listdir(str(victim))) == ["victim.txt"] and (victim / "victim.txt").read_text() == "precious\n"


@pytest.mark.parametrize("walk", ["openat2", "fallback"])
def test_apply_never_writes_through_a_symlink_on_the_target(lo, tmp_path, victim, walk):
    patch = saved_patch(lo, tmp_path, "echo pwned > docs/victim.txt && echo x > docs/new.txt && echo s > notes.txt")
    # After capture, the real docs/ becomes a symlink to a directory outside the target.
    os.rename(str(lo.target / "docs"), str(tmp_path / "docs.moved"))
    os.symlink(str(victim), str(lo.target / "docs"))
    before = tree(lo.target, mtimes=True)
    env = {"LAYOVER_NO_OPENAT2": "1"} if walk == "fallback" else {}
    r = lo("apply", patch, "--yes", "--force", "--json", env=env)
    out = json.loads(r.stdout)
    assert r.returncode == 1
    assert any("symlink" in c["reason"] for c in out["conflicts"]), out
    assert outside_unchanged(victim)
    assert tree(lo.target, mtimes=True) == before


# Hostile *patches* (traversal, absolute names, a hardlink leaving the target,
# a symlink then a write through it, reserved names) are built with valid sums
# in test_security_audit.py, so each is refused for its own reason rather
# than for a fingerprint mismatch.
