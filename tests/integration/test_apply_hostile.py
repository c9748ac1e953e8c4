"""Hostile input: a symlink on the real tree pointing outside, and patches
built by hand (traversal names, absolute names, hard links and symlinks
leading outside). The victim outside stays unchanged and nothing is applied."""
import copy
import json
import os
import tarfile

import pytest

from apply_util import read_patch, replace_manifest, tree, write_patch


def saved_patch(lo, tmp_path, script, name="h"):
    r = lo.run("cd '%s' && %s" % (lo.target, script), session=name)
    assert r.returncode == 0, r.stderr
    patch = tmp_path / (name + ".tar.zst")
    lo("save", name, "-o", patch, check=True)
    return patch


@pytest.fixture
def victim(tmp_path):
    out = tmp_path / "outside"
    out.mkdir()
    (out / "victim.txt").write_text("precious\n")
    return out


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


def rewrite(patch, out_path, fn):
    manifest, members = read_patch(patch)
    manifest, members = fn(copy.deepcopy(manifest), members)
    write_patch(out_path, replace_manifest(members, manifest))
    return out_path


def rename_everywhere(manifest, members, old, new):
    for c in manifest["changes"]:
        if c["path"] == old:
            c["path"] = new
    for b in manifest["base"]:
        if b["path"] == old:
            b["path"] = new
    for info, _ in members:
        if info.name == old:
            info.name = new
    return manifest, members


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "hardlink_outside", "symlink_then_write"])
def test_apply_hostile_patch_is_rejected_and_nothing_is_applied(lo, tmp_path, victim, kind):
    patch = saved_patch(lo, tmp_path, "echo pwned > x.txt && echo s > notes.txt")
    rel_victim = os.path.relpath(str(victim / "victim.txt"), str(lo.target))

    def fn(manifest, members):
        if kind == "dotdot":
            return rename_everywhere(manifest, members, "x.txt", rel_victim)
        if kind == "absolute":
            return rename_everywhere(manifest, members, "x.txt", str(victim / "victim.txt"))
        if kind == "hardlink_outside":
            info = tarfile.TarInfo("hl")
            info.type = tarfile.LNKTYPE
            info.linkname = rel_victim
            c = dict(next(c for c in manifest["changes"] if c["path"] == "x.txt"), path="hl")
            manifest["changes"].append(c)
            manifest["base"].append({"path": "hl", "absent": True})
            return manifest, members[:-1] + [(info, None)] + members[-1:]
        # A patch symlink pointing outside, then a file written "through" it.
        link = tarfile.TarInfo("evil")
        link.type = tarfile.SYMTYPE
        link.linkname = str(victim)
        f = tarfile.TarInfo("evil/victim.txt")
        manifest["changes"].append({"path": "evil", "kind": "added", "type": "symlink", "mode": 0o777,
                                    "size": 0, "old_type": None, "old_mode": 0, "link_target": str(victim),
                                    "captured": True, "mtime_ns": 0, "xattrs": []})
        c = dict(next(c for c in manifest["changes"] if c["path"] == "x.txt"), path="evil/victim.txt")
        manifest["changes"].append(c)
        manifest["base"] += [{"path": "evil", "absent": True}, {"path": "evil/victim.txt", "absent": True}]
        data = next(d for i, d in members if i.name == "x.txt")
        return manifest, members[:-1] + [(link, None), (f, data)] + members[-1:]

    bad = rewrite(patch, tmp_path / "bad.tar.zst", fn)
    before = tree(lo.target, mtimes=True)
    r = lo("apply", bad, "--yes", "--force")
    assert r.returncode == 1, r.stdout
    line = r.stderr.decode(errors="replace").strip().splitlines()[-1]
    assert line.startswith("layover: apply:"), line
    assert outside_unchanged(victim)
    assert tree(lo.target, mtimes=True) == before
    assert not (lo.target / ".layover-undo").exists()
