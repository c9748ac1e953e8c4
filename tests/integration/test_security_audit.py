"""Security audit: hostile patches whose .layover/sums are recomputed (so the
reader's integrity check passes and the rule under test is what rejects
them), xattr namespaces on apply, undo --force, and a sparse-map bomb.

The sums are recomputed by patch_builder.py (libxxhash through ctypes),
following docs/patch-format.md ("Fingerprints")."""
import copy
import json
import os
import subprocess
import sys
import tarfile

import pytest

from apply_util import saved_patch, read_patch, tree, write_patch
from conftest import LAYOVER, missing_feature
from patch_builder import with_sums


def rewrite(patch, out, fn, resum=True):
    """Rewrite a real patch through fn(manifest, members) -> (manifest, members)."""
    manifest, members = read_patch(patch)
    manifest, members = fn(copy.deepcopy(manifest), members)
    info = members[0][0]
    members = [(info, json.dumps(manifest, indent=1).encode())] + members[1:]
    return write_patch(out, with_sums(members) if resum else members)


def err_line(r):
    return r.stderr.decode(errors="replace").strip().splitlines()[-1]


def needs_user_xattrs(path):
    r = subprocess.run(["setfattr", "-n", "user.probe", "-v", "1", str(path)], capture_output=True)
    if r.returncode != 0:
        missing_feature("user.* xattrs on the test filesystem")
    subprocess.run(["setfattr", "-x", "user.probe", str(path)], check=True)


def root_stamp(path):
    st = os.lstat(str(path))
    return st.st_mtime_ns, st.st_ctime_ns, st.st_nlink


# --- the helper is sound, and why it matters ------------------------------


def test_hostile_patch_helper_resums_so_only_the_rule_under_test_can_reject(lo, tmp_path):
    """A manifest rewritten WITHOUT new sums is rejected for its fingerprint
    alone: such a test proves nothing about the rule it means to test (as in
    test_apply_hostile.py, which rewrites manifests without re-summing)."""
    patch = saved_patch(lo, tmp_path, "echo s > notes.txt")
    same = lambda m, ms: (m, ms)  # noqa: E731
    stale = rewrite(patch, tmp_path / "stale.tar.zst", same, resum=False)
    r = lo("show", stale)
    assert r.returncode == 1 and b"fingerprint mismatch" in r.stderr, r.stderr
    good = rewrite(patch, tmp_path / "good.tar.zst", same)
    r = lo("show", good, "--json")
    assert r.returncode == 0, r.stderr
    assert [c["path"] for c in json.loads(r.stdout)] == ["notes.txt"]


def _rename(manifest, members, old, new):
    for c in manifest["changes"] + manifest["base"]:
        if c["path"] == old:
            c["path"] = new
    for info, _ in members:
        if info.name == old:
            info.name = new
    return manifest, members


@pytest.mark.parametrize("kind,why", [
    ("dotdot", b"path traversal"),
    ("absolute", b"absolute path"),
    ("hardlink_outside", b"hardlink target"),
    ("symlink_then_write", b"evil"),
    ("reserved_undo_name", b"reserved"),
])
def test_hostile_patch_with_valid_sums_is_refused_for_the_right_reason(lo, tmp_path, victim, kind, why):
    patch = saved_patch(lo, tmp_path, "echo pwned > x.txt && echo s > notes.txt")
    rel_victim = os.path.relpath(str(victim / "victim.txt"), str(lo.target))

    def fn(manifest, members):
        if kind == "dotdot":
            return _rename(manifest, members, "x.txt", rel_victim)
        if kind == "absolute":
            return _rename(manifest, members, "x.txt", str(victim / "victim.txt"))
        if kind == "reserved_undo_name":
            return _rename(manifest, members, "x.txt", ".layover-undo")
        if kind == "hardlink_outside":
            info = tarfile.TarInfo("hl")
            info.type = tarfile.LNKTYPE
            info.linkname = rel_victim
            info.mode = 0o644
            c = dict(next(c for c in manifest["changes"] if c["path"] == "x.txt"), path="hl")
            manifest["changes"].append(c)
            manifest["base"].append({"path": "hl", "absent": True})
            return manifest, members[:-1] + [(info, None)] + members[-1:]
        link = tarfile.TarInfo("evil")
        link.type = tarfile.SYMTYPE
        link.linkname = str(victim)
        f = tarfile.TarInfo("evil/victim.txt")
        f.mode = 0o644
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
    stamp = root_stamp(lo.target)
    r = lo("apply", bad, "--target", lo.target, "--yes", "--force")
    assert r.returncode == 1, r.stdout
    out = r.stdout + r.stderr
    assert b"fingerprint mismatch" not in out
    assert why in out, out
    assert sorted(os.listdir(str(victim))) == ["victim.txt"]
    assert (victim / "victim.txt").read_text() == "precious\n"
    assert tree(lo.target, mtimes=True) == before
    assert root_stamp(lo.target) == stamp, "something was created and removed in the target"


# --- xattr namespaces --------------------------------------------------------


def _meta_xattrs(patch, tmp_path, xattrs, name):
    """The chmod-only change to notes.txt, with the manifest's xattrs replaced."""
    def fn(manifest, members):
        for c in manifest["changes"]:
            if c["path"] == "notes.txt":
                assert c["kind"] == "metadata"
                c["xattrs"] = xattrs
        return manifest, members
    return rewrite(patch, tmp_path / name, fn)


def test_metadata_change_with_a_trusted_xattr_in_the_manifest_is_refused_before_any_write(lo, tmp_path):
    patch = saved_patch(lo, tmp_path, "echo n > new.txt && chmod 600 notes.txt")
    bad = _meta_xattrs(patch, tmp_path, [{"name": "trusted.evil", "value_b64": "eA=="}], "bad.tar.zst")
    before = tree(lo.target, mtimes=True)
    stamp = root_stamp(lo.target)
    r = lo("apply", bad, "--target", lo.target, "--yes")
    assert r.returncode == 1
    assert b"trusted.evil" in r.stderr, r.stderr
    assert tree(lo.target, mtimes=True) == before
    # Validation first: not even a staged file or an undo store came and went.
    assert root_stamp(lo.target) == stamp


def test_metadata_xattrs_in_the_manifest_must_match_the_payload(lo, tmp_path):
    """The reviewer sees the payload (diff, tar -tv); apply of a metadata change
    used the manifest's own xattr list, which nothing compared with it."""
    needs_user_xattrs(tmp_path)
    patch = saved_patch(lo, tmp_path, "setfattr -n user.color -v blue notes.txt")
    bad = _meta_xattrs(patch, tmp_path, [{"name": "user.hidden", "value_b64": "c25lYWt5"}], "bad.tar.zst")
    r = lo("apply", bad, "--target", lo.target, "--yes")
    assert r.returncode == 1, r.stdout
    assert b"xattr" in r.stderr
    assert os.listxattr(str(lo.target / "notes.txt")) == []


def test_reader_rejects_a_manifest_xattr_outside_user(lo, tmp_path):
    patch = saved_patch(lo, tmp_path, "chmod 600 notes.txt")
    bad = _meta_xattrs(patch, tmp_path, [{"name": "security.capability", "value_b64": "eA=="}], "bad.tar.zst")
    r = lo("show", bad)
    assert r.returncode == 1
    assert b"security.capability" in r.stderr


def test_overlay_markers_set_inside_are_never_written_to_the_real_tree(lo, tmp_path):
    """Inside, overlayfs escapes user.overlay.X (stored user.overlay.overlay.X);
    capture turns it back into user.overlay.X. Written to the real tree, that
    is a live overlayfs marker the next time the tree is a lower layer: here a
    whiteout that makes a real file vanish from every later sandbox."""
    needs_user_xattrs(tmp_path)
    (lo.target / "d").mkdir()
    (lo.target / "d" / "keep.txt").write_text("keep\n")
    (lo.target / "d" / "ghost").write_bytes(b"")
    r = lo.run("setfattr -n user.overlay.opaque -v x d && setfattr -n user.overlay.whiteout -v y d/ghost",
               session="m")
    assert r.returncode == 0, r.stderr
    r = lo("apply", "m", "--yes")
    assert r.returncode == 1, r.stdout
    assert b"user.overlay." in r.stderr, r.stderr
    for p in ("d", "d/ghost"):
        assert not [x for x in os.listxattr(str(lo.target / p)) if x.startswith("user.overlay.")]
    seen = lo.run("ls d", session="after", on_exit="discard")
    assert seen.returncode == 0 and b"ghost" in seen.stdout, seen.stdout + seen.stderr


# --- undo --force --------------------------------------------------------------


def test_undo_force_restores_a_deleted_file_that_was_recreated_since(lo):
    r = lo.run("rm notes.txt", session="u")
    assert r.returncode == 0, r.stderr
    r = lo("apply", "u", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)["undo"]
    (lo.target / "notes.txt").write_text("recreated by the user\n")
    r = lo("undo", record)
    assert r.returncode == 1 and b"notes.txt" in r.stderr
    r = lo("undo", record, "--force")
    assert r.returncode == 0, r.stderr
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert not (lo.target / ".layover-undo").exists()
    journal = lo.state / "journal"
    assert not (journal.exists() and list(journal.glob("*.json")))
    # The tree is usable again: a later apply does not stumble over a journal.
    r = lo.run("echo later > later.txt", session="v")
    assert r.returncode == 0
    r = lo("apply", "v", "--yes")
    assert r.returncode == 0, r.stderr
    assert b"interrupted" not in r.stderr


# --- a sparse-map bomb -----------------------------------------------------------


def _sparse_bomb(path, entries):
    """A patch whose one file is GNU sparse 1.0 with `entries` empty map
    entries: tens of MB of "0\\n0\\n" that zstd shrinks to a few KB."""
    body = b"%d\n" % entries + b"0\n0\n" * entries
    body += b"\0" * (-len(body) % 512)
    info = tarfile.TarInfo("GNUSparseFile.0/big")
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "big",
                        "GNU.sparse.realsize": "0"}
    manifest = {"format": "layover-patch/1", "target": "/nonexistent", "session": "", "command": [],
                "created": "2025-01-01T00:00:00Z", "version": "0",
                "changes": [{"path": "big", "kind": "added", "type": "file", "size": 0, "mode": 420,
                             "old_type": None, "old_mode": 0, "link_target": None, "captured": True,
                             "mtime_ns": 0, "xattrs": []}],
                "base": [{"path": "big", "absent": True}]}
    members = [(tarfile.TarInfo(".layover/manifest.json"), json.dumps(manifest).encode()), (info, body),
               (tarfile.TarInfo(".layover/sums"), b"{}")]
    return write_patch(path, members)


# Peak RSS is measured from a fresh, small interpreter: a posix_spawn'd
# (vfork) child's ru_maxrss starts at its PARENT's peak, since exec records
# the shared address space's high-water mark; from pytest that is whatever
# the test itself held (the bombs' uncompressed bytes), not layover's use.
_RSS_PROBE = """
import os, sys
devnull = os.open(os.devnull, os.O_RDWR)
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], dict(os.environ), file_actions=[
    (os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
_, status, ru = os.wait4(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
print(code, ru.ru_maxrss)
"""


def _max_rss_kib(argv, env):
    """Exit code and peak RSS (KiB) of one run, plus the probe's own ~10 MiB."""
    r = subprocess.run([sys.executable, "-c", _RSS_PROBE] + [str(a) for a in argv], env=env,
                       stdout=subprocess.PIPE, check=True)
    code, rss = r.stdout.split()
    return int(code), int(rss)


def test_rss_probe_measures_the_child_not_the_test(lo, tmp_path):
    """Holding 256 MiB here must not show up as the child's peak."""
    ballast = bytearray(256 << 20)
    ballast[::4096] = b"x" * len(ballast[::4096])
    code, rss = _max_rss_kib(["/bin/true"], lo.env)
    assert code == 0 and rss < 64 * 1024, rss
    code, rss = _max_rss_kib([sys.executable, "-c", "b = bytearray(200 << 20); b[::4096] = b'x' * len(b[::4096])"],
                             lo.env)
    assert code == 0 and rss > 200 * 1024, rss
    del ballast


def test_sparse_map_bomb_is_refused_in_bounded_memory(lo, tmp_path):
    bomb = _sparse_bomb(tmp_path / "bomb.tar.zst", 6_000_000)
    assert bomb.stat().st_size < 64 * 1024
    code, rss = _max_rss_kib([LAYOVER, "show", str(bomb)], lo.env)
    assert code == 1
    # ASan's shadow memory and quarantine make RSS meaningless under `make asan`.
    budget = (1024 if os.environ.get("LAYOVER_SANITIZED") else 128) * 1024
    assert rss < budget, "layover show used %d MiB on a %d byte patch" % (rss // 1024, bomb.stat().st_size)
    r = lo("show", bomb)
    assert r.returncode == 1 and r.stderr.count(b"\n") == 1
    assert err_line(r).endswith("member #1: a sparse map of more than 1000000 segments, over the limit; "
                                "the patch is invalid"), err_line(r)


# --- the undo store and record live in the target --------------------------------


@pytest.mark.parametrize("planted", ["symlink", "file"])
def test_apply_with_a_planted_layover_undo_entry_writes_nothing_anywhere(lo, tmp_path, victim, planted):
    # The store goes into the target only when the state dir is on another
    # mount; LAYOVER_UNDO_IN_TARGET=1 takes that branch here.
    lo.env["LAYOVER_UNDO_IN_TARGET"] = "1"
    store = lo.target / ".layover-undo"
    if planted == "symlink":
        os.symlink(str(victim), str(store))
    else:
        store.write_text("not a dir\n")
    r = lo.run("echo s > notes.txt && echo n > new.txt", session="p")
    assert r.returncode == 0, r.stderr
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "p", "--yes")
    assert r.returncode == 1
    line = err_line(r)
    assert line.startswith("layover: apply:") and ".layover-undo" in line, line
    assert "nothing was applied" in line, line
    assert sorted(os.listdir(str(victim))) == ["victim.txt"]
    assert (victim / "victim.txt").read_text() == "precious\n"
    assert tree(lo.target, mtimes=True) == before
    assert sorted(os.listdir(str(lo.target))) == sorted(["docs", "notes.txt", "old", "link", ".layover-undo"])
    # Nothing was half-done, so no journal wedges the tree: once the entry is
    # moved away, the same apply works.
    journal = lo.state / "journal"
    assert not (journal.exists() and list(journal.iterdir())), list(journal.iterdir())
    os.unlink(str(store))
    r = lo("apply", "p", "--yes")
    assert r.returncode == 0, r.stderr
    assert b"reverted" not in r.stderr and b"interrupted" not in r.stderr
    assert (lo.target / "new.txt").read_text() == "n\n"


@pytest.mark.parametrize("field,value", [
    ("p", "../outside/victim.txt"),
    ("p", "/etc/passwd"),
    ("slot", "../../../outside/victim.txt"),
    ("tmp", "docs/.layover-tmp.x"),
])
def test_undo_refuses_a_forged_record_whose_names_leave_their_place(lo, tmp_path, victim, field, value):
    import base64
    r = lo.run("rm notes.txt", session="u")
    assert r.returncode == 0, r.stderr
    r = lo("apply", "u", "--yes", "--json")
    assert r.returncode == 0, r.stderr
    record = json.loads(r.stdout)["undo"]
    path = os.path.join(record, "undo.json")
    with open(path) as f:
        rec = json.load(f)
    unit = rec["units"][0]
    unit[field] = base64.b64encode(value.encode()).decode() if field in ("p", "tmp") else value
    os.chmod(path, 0o600)
    with open(path, "w") as f:
        json.dump(rec, f)
    before = tree(lo.target, mtimes=True)
    r = lo("undo", record)
    assert r.returncode == 1
    assert "undo record" in err_line(r), err_line(r)
    assert (victim / "victim.txt").read_text() == "precious\n"
    assert tree(lo.target, mtimes=True) == before


def test_pax_header_bomb_is_refused_in_bounded_memory(lo, tmp_path):
    manifest = {"format": "layover-patch/1", "target": "/nonexistent", "changes": [], "base": []}
    big = tarfile.TarInfo("x")
    big.pax_headers = {"comment": "A" * (64 << 20)}
    bomb = write_patch(tmp_path / "pax.tar.zst", [
        (tarfile.TarInfo(".layover/manifest.json"), json.dumps(manifest).encode()), (big, b""),
        (tarfile.TarInfo(".layover/sums"), b"{}")])
    assert bomb.stat().st_size < 64 * 1024
    code, rss = _max_rss_kib([LAYOVER, "show", str(bomb)], lo.env)
    assert code == 1
    # ASan's shadow memory and quarantine make RSS meaningless under `make asan`.
    budget = (1024 if os.environ.get("LAYOVER_SANITIZED") else 128) * 1024
    assert rss < budget, "layover show used %d MiB on a %d byte patch" % (rss // 1024, bomb.stat().st_size)
    r = lo("show", bomb)
    assert r.returncode == 1 and r.stderr.count(b"\n") == 1
    assert "member #1: a pax or long-name header larger than 1 MiB" in err_line(r), err_line(r)
