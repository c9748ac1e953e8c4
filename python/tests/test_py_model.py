"""Pure parts: defensive parsing of the helper's JSON, error lines, binary
lookup, the install script."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from layover import PatchError, Sandbox, SandboxError, UnsupportedKernelError
from layover._helper import error_for, find_binary, one_line
from layover.model import parse_change, parse_session

ROOT = Path(__file__).resolve().parents[2]


def test_change_parsing_keeps_exact_bytes_of_non_utf8_names():
    c = parse_change({"path": "bad\\xff.txt", "path_b64": "YmFk/y50eHQ=", "kind": "added", "type": "file",
                      "size": 3, "mode": 420, "old_type": None, "old_mode": 0, "link_target": None,
                      "captured": True})
    assert c.raw_path == b"bad\xff.txt"
    assert c.fspath == os.fsdecode(b"bad\xff.txt")
    assert c.type == "file" and c.size == 3
    # The name as str is os.fsdecode of the bytes (as os.listdir returns it),
    # never the display form: os.fsencode gives the bytes back.
    assert c.path == "bad\udcff.txt" and os.fsencode(c.path) == b"bad\xff.txt"


def test_change_parsing_decodes_link_targets_the_same_way():
    c = parse_change({"path": "l", "kind": "added", "type": "symlink", "link_target": "t\\xfe",
                      "link_target_b64": "dP4="})
    assert c.raw_link_target == b"t\xfe" and c.link_target == os.fsdecode(b"t\xfe")
    c = parse_change({"path": "caf\u00e9", "kind": "added", "type": "symlink", "link_target": "x\u009by"})
    assert c.path == "caf\u00e9" and c.raw_path == "caf\u00e9".encode()
    assert c.link_target == "x\u009by" and c.raw_link_target == b"x\xc2\x9by"


@pytest.mark.parametrize("bad", [
    [], "x", {"kind": "added"}, {"path": 5, "kind": "added"},
    {"path": "a", "kind": "added", "size": "big"}, {"path": "a", "kind": "added", "size": True},
    {"path": "a", "kind": "added", "path_b64": "!!!"},
])
def test_malformed_change_records_raise_patch_error(bad):
    with pytest.raises(PatchError):
        parse_change(bad)


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -float("inf")])
def test_a_non_finite_number_from_the_helper_is_a_patch_error_not_overflow(value):
    # json.loads reads 1e400 as inf and NaN as nan: int() of one raised
    # OverflowError / ValueError out of list_sessions() (attack pass of 27 Nov).
    with pytest.raises(PatchError, match="a bad 'age_days'"):
        parse_session({"name": "s1", "age_days": value})
    with pytest.raises(PatchError, match="a bad 'size'"):
        parse_change({"path": "a", "kind": "added", "size": value})


def test_session_record_tolerates_missing_optional_fields():
    s = parse_session({"name": "s1", "target": "/t", "status": "crashed", "pid": "x"})
    assert (s.name, s.status, s.pid, s.command) == ("s1", "crashed", None, [])
    assert (s.changes, s.changes_exact) == (-1, False)


def test_session_record_says_whether_its_change_count_is_exact():
    # `sessions` shows an estimate as ~N; SessionInfo.changes alone read as exact.
    s = parse_session({"name": "s1", "target": "/t", "status": "running", "changes": 3, "changes_exact": False})
    assert (s.changes, s.changes_exact) == (3, False)
    s = parse_session({"name": "s1", "target": "/t", "status": "kept", "changes": 3, "changes_exact": True})
    assert (s.changes, s.changes_exact) == (3, True)
    assert parse_session({"name": "s", "changes_exact": "yes"}).changes_exact is False


def test_one_line_picks_the_helper_message_and_escapes_controls():
    err = b"warning: noise\nlayover: run: user namespaces are disabled\x1b[31m; enable them\n"
    line = one_line(err, "fallback")
    assert line.startswith("layover: run: user namespaces") and "\x1b" not in line
    assert one_line(b"", "fallback") == "fallback"
    assert isinstance(error_for(line, SandboxError, kernel_hints=True), UnsupportedKernelError)
    assert type(error_for(line, PatchError)) is PatchError


def test_binary_lookup_prefers_layover_bin(monkeypatch):
    monkeypatch.setenv("LAYOVER_BIN", "/some/where/layover")
    assert find_binary() == "/some/where/layover"


def test_install_script_installs_a_package_that_finds_the_recorded_binary(tmp_path):
    dest = tmp_path / "root"
    env = dict(os.environ, DESTDIR=str(dest))
    r = subprocess.run([str(ROOT / "tests" / "install_python.sh"), str(dest / "opt" / "lo")], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    inits = list(dest.rglob("layover/__init__.py"))
    assert len(inits) == 1
    site = inits[0].parent.parent
    fake = tmp_path / "fakebin"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    recorded = (site / "layover" / "_install.py").read_text()
    assert "'/opt/lo/bin/layover'" in recorded  # DESTDIR stripped
    (site / "layover" / "_install.py").write_text("BINARY = %r\n" % str(fake))
    # The install byte-compiled the package: a _install.py rewritten within
    # the same second at the same size (91 bytes with make test's basetemp
    # of pytest-1NN) would be read from the old .pyc.
    shutil.rmtree(str(site / "layover" / "__pycache__"), ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "LAYOVER_BIN"}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", "import layover, layover._helper as h; "
                          "print(layover.__file__); print(h.find_binary())"],
                         env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [str(site / "layover" / "__init__.py"), str(fake)]


def test_change_risks_are_a_tuple_of_phrases_and_empty_by_default():
    c = parse_change({"path": "p/.env", "kind": "added", "type": "file",
                      "risks": ["secret: GitHub token on line 1 (ghp_\u2026)"]})
    assert c.risks == ("secret: GitHub token on line 1 (ghp_\u2026)",)
    assert parse_change({"path": "a", "kind": "added"}).risks == ()
    with pytest.raises(PatchError):
        parse_change({"path": "a", "kind": "added", "risks": [1]})
    with pytest.raises(PatchError):
        parse_change({"path": "a", "kind": "added", "risks": "x"})


def test_rejection_records_parse_strictly():
    from layover.model import parse_rejection
    r = parse_rejection({"seq": 3, "path": "p/\\xff", "path_b64": "cC//", "hunk": 2, "hunk_now": 1,
                         "reason": "keep it", "time": "2026-11-25T23:00:00Z", "state": "rejected"})
    assert (r.seq, r.path, r.hunk, r.hunk_now, r.reason, r.state) == (3, os.fsdecode(b"p/\xff"), 2, 1, "keep it",
                                                                       "rejected")
    for bad in ({"path": "a", "state": "rejected"}, {"seq": 1, "path": "a", "state": "maybe"},
                {"seq": "1", "path": "a", "state": "rejected"}, {"seq": 1, "path": 5, "state": "rejected"}, []):
        with pytest.raises(PatchError):
            parse_rejection(bad)


def test_sandbox_reads_its_session_back_under_the_name_it_was_given(tmp_path):
    # Sandbox(session=...) read back as sb.session, as well as sb.name (what
    # resume(), fork() and SessionInfo call it); read-only, so the two never differ.
    sb = Sandbox(str(tmp_path), session="mywork", start=False)
    assert (sb.session, sb.name) == ("mywork", "mywork")
    with pytest.raises(AttributeError):
        sb.session = "other"


def test_a_bad_session_name_is_refused_before_anything_starts(tmp_path):
    # Sandbox(session="my work") started the helper, which refused "invalid --session name ...; see
    # 'layover run --help'" (a flag the caller never typed); with start=False it passed unnoticed.
    for bad in ("my work", "", "-x", "a/b", "x" * 65):
        with pytest.raises(ValueError, match="session must be 1-64 of A-Z a-z 0-9 . _ -"):
            Sandbox(str(tmp_path), session=bad, start=False)
    with pytest.raises(TypeError, match=r"^session must be a session name \(a str\), not int 5$"):  # a type: python3
        Sandbox(str(tmp_path), session=5, start=False)
    assert Sandbox(str(tmp_path), session="ok-1.x_y", start=False).name == "ok-1.x_y"


def test_a_labelled_sessions_repr_leaves_its_bootstrap_program_out():
    from layover.model import SessionInfo
    prog = "import sys\n" * 200
    labelled = SessionInfo("s", "/t", "kept", command=["python3", "-c", prog], label="python: Sandbox('~/proj')")
    assert "import sys" not in repr(labelled) and "label=\"python: Sandbox('~/proj')\"" in repr(labelled)
    assert labelled.command[2] == prog  # the field itself is whole
    plain = SessionInfo("s", "/t", "kept", command=["make", "test"])
    assert "command=['make', 'test']" in repr(plain) and repr(plain).startswith("SessionInfo(name='s', ")
