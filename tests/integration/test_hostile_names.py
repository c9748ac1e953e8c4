"""Names chosen by the agent never control the reviewer's terminal (issue 21):
every verb that prints them, to a real pty and to a pipe, emits no raw
control byte, C1 control or bidi control; each is shown visibly escaped."""
import io
import json
import re
import subprocess

import pexpect
import pytest

from conftest import LAYOVER

# One name per hostile class; the content is plain so that only names matter.
NAMES = {
    "newline": b"nl\nfake.txt",
    "esc": b"esc\x1b[2Jx",
    "cr": b"cr\rover",
    "backspace": b"bs\x08\x08x",
    "c1_csi": b"c1\xc2\x9b" b"31mx",
    "bidi_rlo": b"bidi\xe2\x80\xaetxt.sh",
    "bidi_isolate": b"iso\xe2\x81\xa6x\xe2\x81\xa9",
    "invalid_utf8": b"bad\xff\xfe",
    "leading_dash": b"-rf",
}
RAW = [b"\x1b", b"\x08", b"\x9b", b"\xe2\x80\xae", b"\xe2\x81\xa6", b"\xe2\x81\xa9", b"\xff"]


def _make(lo):
    script = "".join("printf x > \"$(printf -- '%s')\"\n" % _printf_arg(n) for n in NAMES.values())
    lo.run(script, session="h", check=True)


def _printf_arg(raw):
    return "".join(chr(b) if 0x20 < b < 0x7F and chr(b) not in "'\\%" else "\\%03o" % b for b in raw)


def _assert_inert(out, what):
    for bad in RAW:
        assert bad not in out, "%s printed %r raw: %r" % (what, bad, out[:400])
    # A carriage return only as the pty's own line ending (\r\n).
    assert re.search(rb"\r(?!\n)", out) is None, "%s printed a bare CR" % what


def _pty(args, env, cwd=None, send=None):
    child = pexpect.spawn(LAYOVER, args, env=env, cwd=cwd, timeout=30)
    child.logfile_read = seen = io.BytesIO()  # everything, not just what followed the last expect
    if send:
        for expect, line in send:
            child.expect(expect)
            child.sendline(line)
    child.expect(pexpect.EOF)
    child.close()
    return seen.getvalue()


@pytest.fixture
def hostile(lo, home, tmp_path):
    _make(lo)
    env = dict(lo.env, TERM="xterm", NO_COLOR="1", PAGER="cat", HOME=str(home))
    patch = tmp_path / "h.tar.zst"
    assert lo("save", "h", "-o", str(patch)).returncode == 0
    return env, patch


VERBS = [
    ["status", "h"], ["status", "h", "--expand"], ["status", "h", "--json"],
    ["diff", "h"], ["diff", "h", "--stat"], ["diff", "h", "--name-status"],
    ["apply", "h", "--dry-run"], ["apply", "h", "--dry-run", "--json"],
    ["sessions"], ["sessions", "--json"],
]


@pytest.mark.parametrize("args", VERBS, ids=lambda a: "-".join(a).replace("--", ""))
def test_every_verb_prints_hostile_names_inert_to_a_pty_and_a_pipe(lo, hostile, args):
    env, _ = hostile
    _assert_inert(_pty(args, env), " ".join(args) + " (pty)")
    r = subprocess.run([LAYOVER, *args], env=env, capture_output=True)
    _assert_inert(r.stdout + r.stderr, " ".join(args) + " (pipe)")


def test_show_of_the_patch_is_inert(lo, hostile):
    env, patch = hostile
    for extra in ([], ["--json"], ["--expand"]):
        _assert_inert(_pty(["show", str(patch), *extra], env), "show %s" % extra)
        r = subprocess.run([LAYOVER, "show", str(patch), *extra], env=env, capture_output=True)
        _assert_inert(r.stdout + r.stderr, "show %s (pipe)" % extra)


def test_names_are_escaped_visibly_not_dropped(lo, hostile):
    env, _ = hostile
    out = subprocess.run([LAYOVER, "status", "h", "--expand"], env=env, capture_output=True).stdout
    for shown in (b'"nl\\nfake.txt"', b'"esc\\x1b[2Jx"', b'"cr\\rover"', b'"c1\\u009b31mx"', b'"bidi\\u202etxt.sh"',
                  b'"iso\\u2066x\\u2069"', b'"bad\\xff\\xfe"', b"-rf"):
        assert shown in out, (shown, out)
    # JSON: terminal-steering code points as \u escapes, bytes that are not
    # UTF-8 kept losslessly in path_b64.
    doc = json.loads(subprocess.run([LAYOVER, "status", "h", "--json"], env=env, capture_output=True).stdout)
    paths = {c["path"] for c in doc["changes"]} if isinstance(doc, dict) else {c["path"] for c in doc}
    assert "c1\u009b31mx" in paths and "bidi\u202etxt.sh" in paths


def test_exit_prompt_and_pick_list_are_inert(lo, hostile):
    env, _ = hostile
    out = _pty(["on-exit", "prompt", "h"], env, cwd=str(lo.target),
               send=[(r"\[r/a/s/p/K/d\] ", "p"), (r"[:?] $", ""), (r"\[r/a/s/p/K/d\] ", "k")])
    assert b"c1\\u009b31mx" in out
    _assert_inert(out, "exit prompt")


def test_an_error_naming_a_hostile_path_is_inert(lo, hostile, tmp_path):
    env, _ = hostile
    r = subprocess.run([LAYOVER, "diff", "h", "--", "/elsewhere/\x1b[2J\u009b\u202e"], env=env, capture_output=True)
    assert r.returncode == 2 and b"not beneath the target" in r.stderr
    _assert_inert(r.stderr, "diff error")
