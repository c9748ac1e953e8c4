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
    r = lo("apply", patch, "--target", lo.target, "--yes", "--force", "--json", env=env)
    out = json.loads(r.stdout)
    assert r.returncode == 1
    assert any("symlink" in c["reason"] for c in out["conflicts"]), out
    assert outside_unchanged(victim)
    assert tree(lo.target, mtimes=True) == before


# Hostile *patches* (traversal, absolute names, a hardlink leaving the target,
# a symlink then a write through it, reserved names) are built with valid sums
# in test_security_audit.py, so each is refused for its own reason rather
# than for a fingerprint mismatch.


BIND_SCRIPT = r"""
set -e
mount --bind "$1" "$2"
"$LAYOVER" apply "$3" --target "$5" --yes --force --json > "$4" || echo "rc=$?" >> "$4.rc"
umount "$2"
"""


def test_a_bind_mount_of_the_same_filesystem_inside_a_deleted_directory_is_never_entered(lo, tmp_path):
    # Someone bind-mounted a directory (same filesystem, same content as the
    # patch's base) at old/sub. Deleting old/ must not move it aside and
    # then empty the mounted directory while removing the undo store.
    import subprocess
    patch = saved_patch(lo, tmp_path, "rm -r old && echo s > notes.txt")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "b.txt").write_text("b\n")
    os.chmod(str(precious), os.stat(str(lo.target / "old" / "sub")).st_mode & 0o7777)
    os.utime(str(precious / "b.txt"), ns=(0, os.stat(str(lo.target / "old" / "sub" / "b.txt")).st_mtime_ns))
    env = dict(lo.env, LAYOVER=os.environ.get("LAYOVER", ""))
    from conftest import LAYOVER
    env["LAYOVER"] = LAYOVER
    out = tmp_path / "out.json"
    r = subprocess.run(["unshare", "-rm", "/bin/sh", "-c", BIND_SCRIPT, "sh", str(precious),
                        str(lo.target / "old" / "sub"), str(patch), str(out), str(lo.target)], env=env, capture_output=True)
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert (tmp_path / "out.json.rc").read_text().strip() == "rc=1", res
    assert any("mount point" in c["reason"] for c in res["conflicts"]), res
    assert sorted(os.listdir(str(precious))) == ["b.txt"] and (precious / "b.txt").read_text() == "b\n"
    assert (lo.target / "old" / "sub" / "b.txt").read_text() == "b\n"


def test_a_change_named_like_the_patchs_own_members_is_refused_by_name_then_excluded(lo, tmp_path):
    """An agent that writes .layover/sums into the target must not make the
    session's patch unreadable: save and apply refuse it by name, and
    --ignore leaves it out."""
    r = lo.run("cd '%s' && mkdir -p .layover && echo forged > .layover/sums && echo ok > .layover/notes.txt "
               "&& echo s > notes.txt" % lo.target, session="res")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "res.tar.zst"
    r = lo("save", "res", "-o", out)
    assert r.returncode == 1 and not out.exists()
    assert b"the session holds .layover/sums, a name the patch format reserves" in r.stderr, r.stderr
    assert b"--ignore .layover/sums" in r.stderr
    before = tree(lo.target)
    r = lo("apply", "res", "--target", lo.target, "--yes")
    assert r.returncode == 1 and tree(lo.target) == before
    r = lo("save", "res", "-o", out, "--ignore", ".layover/sums")
    assert r.returncode == 0, r.stderr
    r = lo("apply", out, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr
    assert (lo.target / ".layover" / "notes.txt").read_text() == "ok\n"
    assert not (lo.target / ".layover" / "sums").exists()
