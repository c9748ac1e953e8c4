"""The attack pass of 27 Nov on this round's merged code (attack25): a
hostile agent inside the sandbox, a hostile patch or state. Each test
failed before its fix."""
import json
import os

import pexpect

from conftest import missing_feature, snapshot
from mcp_util import client, proj, text  # noqa: F401 (fixtures)

from test_attack23 import strict
from test_mcp_server import TAKE_AGENT_CHANNEL  # the agent's channel, taken by pidfd_getfd

FORGE_DEEP_REPLY = TAKE_AGENT_CHANNEL + r"""
import sys
depth = int(sys.argv[1])
for i in range(1, 100):  # every id this server can have used: the call running this one among them
    body = ('{"id":%d,"ok":true,"stdout":"","stderr":"","exit_code":%s0%s,"timed_out":false}'
            % (i, "[" * depth, "]" * depth)).encode()
    s.sendall(len(body).to_bytes(4, "big") + body)
"""


def test_mcp_a_forged_reply_nested_deep_is_refused_in_one_line(client, proj):
    # A reply of 65,536 values or fewer could nest ~980 arrays deep: the
    # reader's shallow stack parsed it, the tool's thread passed it on in
    # structuredContent, and json.dumps of the response, deeper in the
    # stack, raised RecursionError outside every handler: a traceback on
    # stderr and no response at all, the client's call left waiting. A
    # reply nested past 64 now stops the sandbox, naming it in one line.
    c = client(session="mcp-a25-deep")
    assert not c.call("write_file", path="forge.py", content=FORGE_DEEP_REPLY)["isError"]
    for depth in (65, 989, 5000):  # 989: parsed on the reader's stack, not by json.dumps's (Python 3.11)
        r = c.call("run_command", command="python3 forge.py %d" % depth)
        assert r["isError"], r
        msg = text(r)
        assert "\n" not in msg, msg
        assert "the sandbox sent a reply nested more than 64 deep, the limit of one reply" in msg, (depth, msg)
    for line in c.lines:
        strict(line)
    assert text(c.call("run_command", command="echo still up")).startswith("still up\n")  # started again


def test_apply_p_a_kept_yes_to_a_whole_change_never_takes_other_content_of_the_same_size_and_mtime(lo):
    # A whole change (an added file) was keyed by its path, kind, types,
    # modes, size, mtime, link target and xattrs, not its content: after a
    # dry run's "y" to new.txt, the agent's next run wrote other bytes of the
    # same size and put the mtime back (touch -d, to the nanosecond), and the
    # real `apply -p` reused the "y" without a word: it wrote content no one
    # was shown. The key now holds the content's fingerprint: asked again.
    from test_apply_interactive import WHOLE, _apply_p, _finish
    r = lo.run("cd '%s' && printf 'good\\n' > new.txt && touch -d '2020-01-02 03:04:05.123456789' new.txt" % lo.target,
               session="a25")
    assert r.returncode == 0
    c = _apply_p(lo, "a25", "--dry-run")
    c.expect(WHOLE)
    c.sendline("y")
    c.expect(r"your 1 answer\(s\) are kept")
    assert _finish(c) == 0
    r = lo.run("cd '%s' && printf 'EVIL\\n' > new.txt && touch -d '2020-01-02 03:04:05.123456789' new.txt"
               % lo.target, session="a25")
    assert r.returncode == 0
    c = _apply_p(lo, "a25")
    i = c.expect([r"reuse its 1 answers?\? \[Y/n\] ", WHOLE])
    if i == 0:
        c.sendline("y")
        i = c.expect([WHOLE, r"undo record: ", pexpect.EOF]) + 1
    assert i == 1, "the kept 'y' was reused for other content: %r" % c.before
    c.sendline("n")
    c.expect(r"Why not\? ")
    c.sendline("")
    _finish(c)
    assert not (lo.target / "new.txt").exists()


def _journal_of(lo, tree):
    st = os.stat(str(tree))
    return lo.state / "journal" / ("%x-%x.json" % (st.st_dev, st.st_ino))


def _other_birth(path):
    """The JSON file at `path` as if written for another tree at the same
    inode: its `btime_ns` moved by a second."""
    text = path.read_text()
    j = json.loads(text)
    if not j.get("btime_ns"):  # review/txn/journal.cc: not on overlayfs (attack26), NFS, FUSE...
        missing_feature("a target filesystem whose birth time is the inode's own (ext4, xfs, btrfs, tmpfs...): "
                        "no btime_ns recorded in %s" % text[:300])
    path.write_text(text.replace('"btime_ns":%d' % j["btime_ns"], '"btime_ns":%d' % (j["btime_ns"] - 10**9)))


def test_a_journal_of_an_earlier_tree_at_the_same_inode_is_set_aside_never_run(lo, home):
    # Found by attack25 (from the code): the journal and the records are keyed by the target's dev and
    # inode alone. A killed apply's target removed, and a new dir given its inode (ext4 reuses them):
    # the next apply, `undo --last` or `doctor --fix` there ran the old journal, removing the files at
    # its paths and restoring the old tree's originals into the new one. The journal now records the
    # tree's birth time, and one of another tree is set aside, named, with nothing done.
    assert lo.run("echo NEW > notes.txt; echo added > added.txt", session="s").returncode == 0
    r = lo("apply", "s", "--yes", env={"LAYOVER_FAULT": "apply:commit:2:kill"})
    assert r.returncode == -9, r.stderr
    journal = _journal_of(lo, home)
    assert journal.exists()
    _other_birth(journal)  # the same inode, another tree
    before = snapshot(home)
    r = lo("undo", "--last", "--target", home)
    err = r.stderr.decode()
    assert "is of an earlier tree at this inode, removed since: nothing of it was done here" in err, err
    assert snapshot(home) == before  # nothing reverted, removed or restored
    assert not journal.exists()
    aside = [p.name for p in journal.parent.iterdir() if ".other-tree-" in p.name]
    assert len(aside) == 1 and aside[0].startswith(journal.name), aside
    # The next apply goes on as on any tree: no journal pending.
    r = lo("apply", "s", "--yes", "--force")
    assert r.returncode == 0, r.stderr
    assert (home / "notes.txt").read_text() == "NEW\n"


def test_undo_records_of_an_earlier_tree_at_the_same_inode_are_not_this_trees(lo, home):
    assert lo.run("echo NEW > notes.txt", session="s").returncode == 0
    assert lo("apply", "s", "--yes").returncode == 0
    r = lo("undo", "--list", "--json", "--target", home)
    assert r.returncode == 0 and len(json.loads(r.stdout)) == 1, r.stdout
    st = os.stat(str(home))
    records = list((lo.state / "undo" / ("%x-%x" % (st.st_dev, st.st_ino))).glob("*/undo.json"))
    assert len(records) == 1
    _other_birth(records[0])
    r = lo("undo", "--list", "--json", "--target", home)
    assert r.returncode == 0 and json.loads(r.stdout) == [], r.stdout
    r = lo("undo", "--last", "--target", home)
    assert r.returncode == 1
    assert (home / "notes.txt").read_text() == "NEW\n"  # the other tree's record restored nothing here
