"""Names chosen by the agent never control the reviewer's terminal (issue 21):
every verb that prints them, to a real pty and to a pipe, emits no raw
control byte, C1 control or bidi control; each is shown visibly escaped."""
import io
import json
import os
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
    "zero_width": b"notes.txt\xe2\x80\x8b",  # looks like notes.txt
    "tag_chars": b"t\xf3\xa0\x80\x81\xf3\xa0\x81\x81",  # invisible U+E0001 U+E0041 (hidden text)
    "trailing_space": b"notes.md ",  # looks like notes.md
}
RAW = [b"\x1b", b"\x08", b"\x9b", b"\xe2\x80\xae", b"\xe2\x81\xa6", b"\xe2\x81\xa9", b"\xff", b"\xe2\x80\x8b",
       b"\xf3\xa0\x80"]


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
                  b'"iso\\u2066x\\u2069"', b'"bad\\xff\\xfe"', b"-rf", b'"notes.txt\\u200b"',
                  b'"t\\U000e0001\\U000e0041"', b'"notes.md "'):
        assert shown in out, (shown, out)
    # JSON: terminal-steering code points as \u escapes, bytes that are not
    # UTF-8 kept losslessly in path_b64.
    doc = json.loads(subprocess.run([LAYOVER, "status", "h", "--json"], env=env, capture_output=True).stdout)
    paths = {c["path"] for c in doc["changes"]} if isinstance(doc, dict) else {c["path"] for c in doc}
    assert "c1\u009b31mx" in paths and "bidi\u202etxt.sh" in paths and "notes.txt\u200b" in paths


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


# --- undo and restore: one test per name class, exact bytes on a pty and a pipe ---

# How display_path shows each name (git's quotePath, extended to C1 and bidi).
SHOWN = {
    "newline": b'"nl\\nfake.txt"', "esc": b'"esc\\x1b[2Jx"', "cr": b'"cr\\rover"', "backspace": b'"bs\\x08\\x08x"',
    "c1_csi": b'"c1\\u009b31mx"', "bidi_rlo": b'"bidi\\u202etxt.sh"', "bidi_isolate": b'"iso\\u2066x\\u2069"',
    "invalid_utf8": b'"bad\\xff\\xfe"', "leading_dash": b"-rf", "zero_width": b'"notes.txt\\u200b"',
    "tag_chars": b'"t\\U000e0001\\U000e0041"', "trailing_space": b'"notes.md "',
}


@pytest.fixture(scope="module")
def undone(tmp_path_factory):
    """Once for the module: a session making every hostile name (at the top
    and inside a new dir d) is applied; then what `undo` writes to a pty and
    to a pipe: the dry run, the conflicts after each file was edited, the
    forced dry run and the forced undo."""
    from conftest import Layover, missing_feature, sandbox_works
    ok, why = sandbox_works()
    if not ok:
        missing_feature("unprivileged user namespaces: " + why)
    base = tmp_path_factory.mktemp("undo-names")
    (base / "state").mkdir(mode=0o700)
    (base / "home").mkdir()
    lo = Layover(base / "state", base / "home")
    script = "mkdir d\n" + "".join("printf x > \"$(printf -- '%s')\"; printf x > d/\"$(printf -- '%s')\"\n" %
                                   (_printf_arg(n), _printf_arg(n)) for n in NAMES.values())
    lo.run(script, session="u", check=True)
    env = dict(lo.env, TERM="xterm", NO_COLOR="1", PAGER="cat", HOME=str(lo.target))
    out = {"apply": subprocess.run([LAYOVER, "apply", "u", "--yes"], env=env, capture_output=True)}
    assert out["apply"].returncode == 0, out["apply"].stderr
    undo = [LAYOVER, "undo", "--last", "--target", str(lo.target)]

    def both(key, *extra):
        out[key + "-pipe"] = subprocess.run(undo + list(extra), env=env, capture_output=True)
        out[key + "-pty"] = _pty(undo[1:] + list(extra), env)

    both("dry", "--dry-run")
    for n in NAMES.values():  # every applied name edited since: a conflict each
        (lo.target / os.fsdecode(n)).write_bytes(b"edited")
        (lo.target / "d" / os.fsdecode(n)).write_bytes(b"edited")
    both("conflict")
    both("forced-dry", "--force", "--dry-run")
    out["forced-pty"] = _pty(undo[1:] + ["--force"], env)
    assert not (lo.target / "d").exists(), out["forced-pty"]  # the forced undo did run
    return out


def _lines(out, pty):
    raw = out if isinstance(out, bytes) else out.stdout + out.stderr
    return raw.split(b"\r\n" if pty else b"\n")


@pytest.mark.parametrize("cls", list(NAMES))
def test_undo_prints_each_hostile_name_class_escaped_on_a_pty_and_a_pipe(undone, cls):
    shown = SHOWN[cls]
    for key, out in undone.items():
        pty = key.endswith("pty")
        _assert_inert(out if pty else out.stdout + out.stderr, "undo %s" % key)
    # The list of what undo restores (or would): one line per path, exactly.
    for key, pty in (("dry-pipe", False), ("dry-pty", True), ("forced-dry-pipe", False), ("forced-pty", True)):
        lines = _lines(undone[key], pty)
        # (an added path is marked: "  NAME  (would be removed: the apply added it)")
        assert any(l == b"  " + shown or l.startswith(b"  " + shown + b"  (") for l in lines), (key, lines)
    # A conflict names the path (and, for d/, the entry inside it).
    for key, pty in (("conflict-pipe", False), ("conflict-pty", True)):
        lines = _lines(undone[key], pty)
        assert any(l.startswith(b"  " + shown + b": changed since it was applied") for l in lines), (key, lines)
        d_line = [l for l in lines if l.startswith(b"  d: ")]
        assert len(d_line) == 1 and b"inside it" in d_line[0], (key, lines)
    assert undone["conflict-pipe"].returncode == 1
    # --force names each conflict it overrides.
    assert (b"layover: undo: overriding conflict (--force): " + shown + b": changed since it was applied"
            in undone["forced-dry-pipe"].stderr), undone["forced-dry-pipe"].stderr


@pytest.mark.parametrize("cls", list(NAMES))
def test_restore_of_a_hostile_name_is_refused_inert_on_a_pty_and_a_pipe(lo, cls):
    name = NAMES[cls]
    env = dict(lo.env, TERM="xterm", NO_COLOR="1")
    piped = subprocess.run([LAYOVER.encode(), b"restore", name], env=env, capture_output=True)
    on_pty = _pty(["restore", os.fsdecode(name)], env)
    _assert_inert(piped.stdout + piped.stderr, "restore (pipe)")
    _assert_inert(on_pty, "restore (pty)")
    if cls == "leading_dash":  # an option, not a name: one line naming it and the help
        assert piped.returncode == 2 and piped.stderr.startswith(b"layover: restore: unknown option '"), piped.stderr
        assert b"see 'layover restore --help'" in piped.stderr and len(piped.stderr.splitlines()) == 1, piped.stderr
        assert on_pty.startswith(b"layover: restore: unknown option '"), on_pty
        return
    want = b"layover: invalid session name '" + SHOWN[cls] + b"'"
    assert piped.returncode == 1 and piped.stderr == want + b"\n", piped.stderr
    assert on_pty == want + b"\r\n", on_pty


def test_the_history_verbs_print_hostile_names_and_labels_inert(lo, home, tmp_path):
    # A stepped session: hostile names in two steps, a hostile checkpoint
    # label, a fork, a rejection; log, blame, compare, rejections and a saved
    # patch's step records print them escaped (docs/history.md).
    _make(lo)
    more = "".join("printf y >> \"$(printf -- '%s')\"\n" % _printf_arg(n) for n in NAMES.values())
    lo.run(more, session="h", check=True)  # the resume froze the first run as step 1
    label = "lbl\x1b[2J\u009bK\u202eend\r2nd"
    lo("checkpoint", "h", "-m", label, check=True)  # step 2, labelled
    lo("fork", "h", "h2", "--at", "1", check=True)
    lo("reject", "h", os.fsdecode(NAMES["esc"]), "-m", "no", check=True)
    patch = tmp_path / "hs.tar.zst"
    lo("save", "h", "-o", str(patch), "--include-rejected", check=True)
    env = dict(lo.env, TERM="xterm", NO_COLOR="1", PAGER="cat", HOME=str(home))
    runs = [["log", "h"], ["log", "h", "--json"], ["compare", "h", "h2"], ["diff", "h", "h2", "--stat"],
            ["rejections", "h"], ["rejections", "h", "--json"], ["log", str(patch)], ["show", "--steps", str(patch)],
            ["sessions"]]
    runs += [["blame", "h", "--", os.fsdecode(n)] for n in NAMES.values()]
    for args in runs:
        r = subprocess.run([LAYOVER, *args], env=env, capture_output=True)
        assert r.returncode in ((0,) if args[0] == "blame" else (0, 1)), (args, r.stderr)
        _assert_inert(r.stdout + r.stderr, " ".join(args) + " (pipe)")
    out = subprocess.run([LAYOVER, "log", "h"], env=env, capture_output=True).stdout
    assert b'"lbl\\x1b[2J\\u009bK\\u202eend\\r2nd"' in out, out
    _assert_inert(_pty(["log", "h"], env), "log (pty)")
    _assert_inert(_pty(["blame", "h", os.fsdecode(NAMES["c1_csi"])], env), "blame (pty)")
