"""The undo record of an added directory tree (issue 20, "Apply, second
pass"): staging records each entry from the stat of its own fd as it finishes
it, instead of walking the staged tree afterwards. The record must be exactly
what a walk of the applied tree sees (inode, type, mode, size, mtime, ctime
of every entry), or undo would refuse a tree left as applied; a tree holding
a dir its owner may not list is walked as before. Every test checks the real
tree afterwards."""
import base64
import json
import os
import stat

import pytest
from conftest import real_dir

TYPES = {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "symlink", stat.S_IFIFO: "fifo"}


def _walk(top):
    """walk_tree's view: every entry beneath top, sorted by path; a dir the
    user may not open is listed without its entries."""
    out = []

    def into(d, prefix):
        try:
            names = os.listdir(d)
        except PermissionError:
            return
        for n in names:
            p = os.path.join(d, n)
            st = os.lstat(p)
            out.append((prefix + n, TYPES[stat.S_IFMT(st.st_mode)], stat.S_IMODE(st.st_mode), st.st_ino,
                        st.st_size, st.st_mtime_ns, st.st_ctime_ns))
            if stat.S_ISDIR(st.st_mode):
                into(p, prefix + n + b"/")

    into(os.fsencode(str(top)), b"")
    return sorted(out)


def _record_of(lo, target, path):
    recs = json.loads(lo("undo", "--list", "--target", target, "--json", check=True).stdout)
    assert len(recs) == 1, recs
    with open(os.path.join(recs[0]["record"], "undo.json")) as f:
        units = json.load(f)["units"]
    unit = [u for u in units if base64.b64decode(u["p"]) == path][0]
    return sorted((base64.b64decode(e["p"]), e["type"], e["mode"], e["ino"], e["size"], e["mtime_ns"], e["ctime_ns"])
                  for e in unit["after_tree"])


def _apply_and_check(lo, script, umask=None):
    proj = real_dir("record-")
    (proj / "keep.txt").write_text("kept\n")
    r = lo("run", "--target", proj, "--session", "s", "--on-exit", "keep", "--", "/bin/sh", "-c",
           "cd %s && %s" % (proj, script))
    assert r.returncode == 0, r.stderr
    old = os.umask(umask) if umask is not None else None
    try:
        r = lo("apply", "s", "--target", proj, "--yes")
    finally:
        if old is not None:
            os.umask(old)
    assert r.returncode == 0, r.stderr
    walked = _walk(proj / "new")
    assert len(walked) >= 8
    assert _record_of(lo, proj, b"new") == walked
    # Undo accepts the tree as applied and takes all of it away.
    r = lo("undo", "--last", "--target", proj)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(proj)) == ["keep.txt"] and (proj / "keep.txt").read_text() == "kept\n"
    return walked


@pytest.mark.parametrize("umask", [None, 0o077])
def test_an_added_trees_record_is_what_a_walk_of_the_applied_tree_sees(lo, umask):
    # A new tree's files are created with their own bits (apply, fifth
    # pass); an umask that takes some of them (077) leaves them chmodded
    # after, as before: the same modes, the record still the walk's.
    walked = _apply_and_check(
        lo, "mkdir -p new/a/b new/ro new/c && echo one > new/a/one.txt && : > new/a/b/empty && "
            "printf 'x%.0s' $(seq 1 5000) > new/c/big.txt && ln -s ../a/one.txt new/c/link && "
            "mkfifo new/c/pipe && chmod 640 new/a/one.txt && chmod 604 new/c/big.txt && echo r > new/ro/f && "
            "chmod 555 new/ro && touch -d '2001-02-03 04:05:06' new/a/b/empty", umask)
    kinds = {e[1] for e in walked}
    assert kinds == {"dir", "file", "symlink", "fifo"}
    modes = {e[0]: e[2] for e in walked}
    assert modes[b"ro"] == 0o555 and modes[b"a/one.txt"] == 0o640 and modes[b"c/big.txt"] == 0o604
    assert modes[b"ro/f"] == 0o644 and modes[b"a/b/empty"] == 0o644


def test_a_tree_with_a_dir_its_owner_may_not_list_is_walked_as_before(lo):
    walked = _apply_and_check(
        lo, "mkdir -p new/a new/hidden/deep && echo one > new/a/one.txt && echo h > new/hidden/deep/h.txt && "
            "echo 2 > new/a/two.txt && echo 3 > new/three.txt && mkdir new/b new/c && echo 4 > new/b/4 && "
            "chmod 311 new/hidden")
    if os.geteuid() != 0:  # root lists it anyway
        assert not any(e[0].startswith(b"hidden/") for e in walked)
