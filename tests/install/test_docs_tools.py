"""The man page (made from docs/cli.md), shell completion asking the
binary, `--version` and `VERB --help` for every verb."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import BUILD, SOURCE, VERSION, sh

LAYOVER = BUILD / "layover"


def verbs():
    out = sh(LAYOVER, "--help").stdout.decode()
    return [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)", out, re.M)]


def test_every_verb_has_help_on_stdout_with_exit_0():
    vs = verbs()
    assert {"run", "sessions", "status", "save", "show", "diff", "apply", "undo", "discard", "restore",
            "doctor"} <= set(vs)
    for v in vs:
        r = subprocess.run([str(LAYOVER), v, "--help"], capture_output=True, timeout=30)
        assert r.returncode == 0, (v, r.stderr)
        assert r.stdout.decode().startswith("usage: layover " + v), (v, r.stdout)


def test_version_comes_from_the_one_source():
    assert sh(LAYOVER, "--version").stdout.decode() == "layover %s\n" % VERSION
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert "dynamic = [\"version\"]" in (SOURCE / "python/pyproject.toml").read_text()


def test_man_page_renders_clean_and_covers_every_verb(tmp_path):
    page = BUILD / "layover.1"
    made = sh("/usr/bin/python3", SOURCE / "helper/dist/man.py", SOURCE / "docs/cli.md", VERSION).stdout
    # What `make man` makes, from docs/cli.md (the .TH line holds the date).
    assert page.read_bytes().split(b"\n")[1:] == made.split(b"\n")[1:]
    assert re.match(rb'\.TH LAYOVER 1 \d{4}-\d\d-\d\d "layover %s"' % VERSION.encode(), made)
    r = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True,
                       env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"), timeout=60)
    assert r.returncode == 0 and r.stderr == b"", r.stderr.decode()
    text = r.stdout.decode()
    for v in verbs():
        assert re.search(r"layover %s\b" % re.escape(v), text), v
    # No font escape leaked through as text (the docs may quote "\f" itself).
    assert "--target" in text and re.search(r"\\f[BIRP(]", text) is None
    mandoc = shutil.which("mandoc")
    assert mandoc, "mandoc is missing (tests/deps.sh installs it)"
    r = subprocess.run([mandoc, "-T", "lint", "-W", "warning", str(page)], capture_output=True)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()


def complete(words, cword, path_dir):
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=%d; _layover; '
              'printf "%%s\\n" "${COMPREPLY[@]}"' % cword)
    r = subprocess.run(["bash", "-c", script, "complete", str(SOURCE / "helper/dist/layover.bash")] + words,
                       capture_output=True, env=dict(os.environ, PATH="%s:/usr/bin:/bin" % path_dir), timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode().split()


def test_bash_completion_asks_the_binary(tmp_path, monkeypatch):
    assert set(complete(["layover", ""], 1, BUILD)) >= {"run", "doctor", "apply", "restore"}
    assert complete(["layover", "do"], 1, BUILD) == ["doctor"]
    assert "--target" in complete(["layover", "run", "--ta"], 2, BUILD)
    assert "--dry-run" in complete(["layover", "apply", "--"], 2, BUILD)
    # Session names from `layover sessions`, and patch files.
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("LAYOVER_STATE_DIR", str(state))
    target = tmp_path / "t"
    target.mkdir()
    r = subprocess.run([str(LAYOVER), "run", "--target", str(target), "--session", "compl-one", "--on-exit",
                        "keep", "--keep-empty", "--", "true"], capture_output=True, timeout=60)
    if r.returncode != 0:
        pytest.fail("layover run failed: %s" % r.stderr.decode())
    (tmp_path / "p.tar.zst").write_text("")
    (tmp_path / "notes.txt").write_text("")
    monkeypatch.chdir(tmp_path)
    got = complete(["layover", "apply", ""], 2, BUILD)
    assert "compl-one" in got and "p.tar.zst" in got and "notes.txt" not in got
    assert complete(["layover", "status", "comp"], 2, BUILD) == ["compl-one"]
    assert complete(["layover", "show", "p"], 2, BUILD) == ["p.tar.zst"]


def test_zsh_completion_is_valid_zsh():
    text = (SOURCE / "helper/dist/_layover").read_text()
    assert text.startswith("#compdef layover")
    zsh = shutil.which("zsh")
    if zsh:
        r = subprocess.run([zsh, "-n", str(SOURCE / "helper/dist/_layover")], capture_output=True)
        assert r.returncode == 0, r.stderr.decode()
    r = subprocess.run(["bash", "-n", str(SOURCE / "helper/dist/layover.bash")], capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
