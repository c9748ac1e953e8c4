"""The attack pass of 27 Nov on the last session's code (attack27): the
journal's and records' birth time, kept `apply -p` answers, the rename
worker's temporary names, the dir fingerprint and the MCP server's limits.
Each test failed before its fix."""
import json
import os

from test_attack25 import _other_birth


def _record_of(lo, tree):
    st = os.stat(str(tree))
    records = list((lo.state / "undo" / ("%x-%x" % (st.st_dev, st.st_ino))).glob("*/undo.json"))
    assert len(records) == 1, records
    return records[0]


def test_an_undo_record_of_an_earlier_tree_named_by_its_path_is_refused_never_run(lo, home):
    # attack25 kept a record of an earlier tree at the target's inode (removed, the inode reused) out of
    # `undo --list` and `--last`; the path apply printed ('layover undo STORE', kept in the terminal's
    # history) still ran it: the old tree's originals were put into the new one (a deletion needs
    # nothing of the path to match). It is now refused as another tree's, as one at another inode is.
    (home / "gone.txt").write_text("old tree's\n")
    assert lo.run("rm gone.txt; echo NEW > notes.txt", session="s").returncode == 0
    assert lo("apply", "s", "--yes").returncode == 0
    record = _record_of(lo, home)
    _other_birth(record)  # the same inode, another tree
    for args in ([str(record.parent)], [str(record)], [str(record.parent), "--force"]):
        r = lo("undo", *args)
        err = r.stderr.decode()
        assert r.returncode != 0, err
        assert "belongs to another tree" in err and "undo only works on the tree apply wrote" in err, err
        assert not (home / "gone.txt").exists()  # the other tree's original never put here
        assert (home / "notes.txt").read_text() == "NEW\n"
        assert record.exists()
