"""The attack pass of 27 Nov on the last session's code (attack27): the
journal's and records' birth time, kept `apply -p` answers, the rename
worker's temporary names, the dir fingerprint and the MCP server's limits.
Each test failed before its fix."""
import os

import pexpect

from mcp_util import client, proj, text  # noqa: F401 (fixtures)

from test_attack20 import SANITIZED, _maxrss_mb
from test_attack23 import strict
from test_attack25 import _other_birth
from test_mcp_server import TAKE_AGENT_CHANNEL  # the agent's channel, taken by pidfd_getfd


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


# A reply forged on the agent's channel whose string holds N escaped quotes and then a backslash before a
# newline (which JSON has not: the frame is malformed, but the limits are counted before the parse), with
# more than 64 brackets after it (the depth count) or more than 65,536 values (the value count).
FORGE_ESCAPES = TAKE_AGENT_CHANNEL + r"""
import sys
n, what = int(sys.argv[1]), sys.argv[2]
tail = "[" * 65 + "0" + "]" * 65 if what == "deep" else "[" + "0," * 70000 + "0]"
for i in range(1, 100):  # every id this server can have used: the call running this one among them
    body = ('{"id":%d,"ok":true,"stdout":"' % i + '\\"' * n + '\\\n","stderr":"","exit_code":' + tail
            + ',"timed_out":false}').encode()
    s.sendall(len(body).to_bytes(4, "big") + body)
"""


def test_mcp_the_reply_limits_scan_a_string_of_escapes_once_not_once_per_quote():
    # attack23's value count and attack25's depth count find the strings of a frame with a regex; a
    # backslash before a newline (`.` takes no newline) failed the string's match, and the scan began
    # again at each escaped quote inside it: quadratic. A 32 KB frame took 7.5 s of CPU, one of 16 MiB
    # (within the reply limit) would take weeks: the server's reader stuck, every call in flight never
    # answered. Each string is now one token, whatever it holds.
    from layover import _mcp_json
    text = '"' + '\\"' * 1000 + '\\\n"' + "[[["
    for regex in (_mcp_json._NEST, _mcp_json._TOKEN):
        tokens = [m.group() for m in regex.finditer(text)]
        assert tokens == [text[:-3], "[", "[", "["], tokens[:5]


def test_mcp_a_forged_reply_of_escaped_quotes_is_refused_in_one_line_not_scanned_for_hours(client, proj):
    c = client(session="mcp-a27-escapes")
    assert not c.call("write_file", path="forge.py", content=FORGE_ESCAPES)["isError"]
    # 1 MB a frame: before, about two hours of the server's CPU each, the call never answered
    for what, limit in (("deep", "nested more than 64 deep"), ("wide", "of more than 65536 JSON values")):
        r = c.call("run_command", command="python3 forge.py 500000 " + what)
        assert r["isError"], r
        msg = text(r)
        assert "\n" not in msg, msg
        assert "the sandbox sent a reply %s, the limit of one reply" % limit in msg, msg
    for line in c.lines:
        strict(line)
    assert text(c.call("run_command", command="echo still up")).startswith("still up\n")  # started again


def test_an_undo_patch_of_an_earlier_trees_record_at_the_same_inode_is_not_vouched_for(lo, home, tmp_path):
    # `undo UNDO.tar.zst` lists and asks nothing, so it needs --yes unless this tree's undo records vouch
    # for the patch. The record of an earlier tree at the inode (removed, reused) vouched as this tree's:
    # the patch, from a store of another tree, was applied without --yes (putting back that tree's deleted
    # file here) and that record retired. It vouches for nothing now, as at another inode.
    (home / "gone.txt").write_text("old tree's\n")
    assert lo.run("rm gone.txt", session="s").returncode == 0
    undo_patch = tmp_path / "undo.tar.zst"
    r = lo("apply", "s", "--yes", "--undo-to", undo_patch)
    assert r.returncode == 0, r.stderr
    record = _record_of(lo, home)
    _other_birth(record)  # the same inode, another tree
    r = lo("undo", undo_patch, "--target", home)
    err = r.stderr.decode()
    assert r.returncode != 0, err
    assert "is an undo patch of no apply this tree's undo records know" in err, err
    assert not (home / "gone.txt").exists()
    assert record.exists()


WIDE_AT_A_LONG_PATH = ("cd '%s' && python3 -c 'import os\n"
                       "os.mkdir(\"top\"); os.chdir(\"top\")\n"
                       "for i in range(350): os.mkdir(\"n\" * 250); os.chdir(\"n\" * 250)\n"
                       "for i in range(3000): os.mkdir(\"%%08d\" %% i)\n"
                       "' && echo ok > ok.txt")


def test_status_ignoring_a_tree_of_many_dirs_at_a_long_path_is_bounded_in_memory(lo):
    # attack20 bounded the walk's paths (128 MiB) and its refusal names `--ignore TOP`. Below an ignored
    # dir the walk only counts, but it keyed every dir there for the status snapshot, each with its whole
    # path, outside that bound: 3,000 dirs at an 87 KB path (inodes, no disk, made in seconds) took
    # `status --ignore top` 780 MB (20,000 of them, gigabytes). Past 32 MiB of such keys the snapshot is
    # not kept (the next status walks again).
    r = lo("run", "--target", lo.target, "--session", "wide", "--", "/bin/sh", "-c", WIDE_AT_A_LONG_PATH % lo.target,
           timeout=300)
    assert r.returncode == 0, r.stderr
    for _ in range(2):  # the second with what the first kept
        rc, err, mb = _maxrss_mb(lo, ["status", "wide", "--ignore", "top"])
        assert rc == 0, err
        assert mb < 200 * SANITIZED, mb  # 780 MB before
    r = lo("status", "wide", "--ignore", "top")
    assert r.returncode == 0 and b"ok.txt" in r.stdout and b"in ignored caches" in r.stdout, r.stdout
    # A dir made below the ignored one since: counted (no snapshot stood for it).
    assert lo.run("mkdir top/%s/later" % "/".join(["n" * 250] * 3), session="wide").returncode == 0
    r2 = lo("status", "wide", "--ignore", "top")
    assert r2.returncode == 0 and r2.stdout != r.stdout, r2.stdout


def test_the_sweep_of_rename_leftovers_holds_no_path_per_dir_waiting_in_bounded_memory(lo):
    # The sweep of a killed supervisor's rename leftovers (helper/store/records/rename_temps.cc) runs first in every
    # status, diff, save and apply of the session while its key file is there, over the whole upper layer,
    # before the walk and whatever --ignore leaves out. It kept every dir still to visit as its whole path.
    r = lo("run", "--target", lo.target, "--session", "wide", "--", "/bin/sh", "-c", WIDE_AT_A_LONG_PATH % lo.target,
           timeout=300)
    assert r.returncode == 0, r.stderr
    rc, err, plain_mb = _maxrss_mb(lo, ["status", "wide", "--ignore", "top"])
    assert rc == 0, err
    # As a supervisor SIGKILLed with a worker's call in hand leaves it (the sweep's trigger).
    key = lo.session_dir("wide") / "rename-temps"
    key.write_text("0123456789abcdef0123456789abcdef\n")
    key.chmod(0o600)
    rc, err, swept_mb = _maxrss_mb(lo, ["status", "wide", "--ignore", "top"])
    assert rc == 0, err
    assert not key.exists()  # swept whole: the key file goes
    # The same status again, the key gone: a first status's peak can be half a later one's (66 against
    # 138 MB once in a loaded `make test`), so the sweep's cost is read against the larger of the two.
    rc, err, again_mb = _maxrss_mb(lo, ["status", "wide", "--ignore", "top"])
    assert rc == 0, err
    plain_mb = max(plain_mb, again_mb)
    assert swept_mb < plain_mb + 40 * SANITIZED, (plain_mb, swept_mb)  # +117 MB before


def test_apply_p_a_kept_yes_to_one_of_two_identical_hunks_never_goes_to_the_other(lo):
    # apply -p keeps its answers when the apply does not happen (a dry run here) and keys a hunk by its
    # lines without the "@@" line, and by its rank among the file's hunks of those very lines. Two such
    # hunks (the same change in two blocks that read alike): "y" to the first, "n" to the second. The
    # agent then took the first back; the second, now the only one, was the first of its lines and got
    # the "y", applied without a question. Such hunks are now keyed with their "@@" line too.
    from test_apply_interactive import HUNK, WHY, _apply_p, _finish
    block = "sep%d\na\nb\nc\nx = 1\nd\ne\nf\n"
    (lo.target / "code.txt").write_text("".join(block % i for i in range(3)))
    r = lo.run("cd '%s' && sed -i '5s/x = 1/x = 2/; 13s/x = 1/x = 2/' code.txt" % lo.target, session="twins")
    assert r.returncode == 0 and (lo.upper("twins") / "code.txt").read_text().count("x = 2") == 2
    c = _apply_p(lo, "twins", "--dry-run")
    c.expect(HUNK)
    assert "@@ -2,7 +2,7 @@" in c.before.decode(), c.before
    c.sendline("y")
    c.expect(HUNK)
    assert "@@ -10,7 +10,7 @@" in c.before.decode(), c.before
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    c.expect(r"your 2 answer\(s\) are kept")
    assert _finish(c) == 0
    r = lo.run("cd '%s' && sed -i '5s/x = 2/x = 1/' code.txt" % lo.target, session="twins")  # the first taken back
    assert r.returncode == 0
    c = _apply_p(lo, "twins")
    c.expect(r"reuse its 2 answers\? \[Y/n\] ")
    c.sendline("y")
    i = c.expect([HUNK, r"undo record: ", pexpect.EOF])
    assert i == 0, "the kept 'y' to the first hunk went to the second: %r" % c.before
    assert "@@ -10,7 +10,7 @@" in c.before.decode(), c.before
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    _finish(c)
    assert "x = 2" not in (lo.target / "code.txt").read_text()
