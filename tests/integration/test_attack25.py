"""The attack pass of 27 Nov on this round's merged code (attack25): a
hostile agent inside the sandbox, a hostile patch or state. Each test
failed before its fix."""
import pexpect

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
