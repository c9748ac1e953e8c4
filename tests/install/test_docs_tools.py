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


def zsh_complete(lines, cwd, fpath_dir=SOURCE / "helper/dist"):
    """What zsh offers for each `line<TAB>`: one real interactive `zsh -f`
    under zpty with compinit (tests/install/zsh_complete.zsh), the binary on
    PATH. A list of candidate lists, one per line."""
    zsh = shutil.which("zsh")
    assert zsh, "zsh is missing (tests/deps.sh installs it)"
    out = cwd / ".zsh-complete.out"
    r = subprocess.run([zsh, "-f", str(SOURCE / "tests/install/zsh_complete.zsh"), str(fpath_dir), str(out)] + lines,
                       capture_output=True, cwd=cwd, timeout=60,
                       env=dict(os.environ, PATH="%s:/usr/bin:/bin" % BUILD, HOME=str(cwd)))
    assert r.returncode == 0, r.stderr.decode()
    got = out.read_text()
    out.unlink()
    assert got.endswith("END\n"), got
    return [part.split() for part in ("\n" + got).split("\nEND\n")[:-1]]


def test_zsh_completion_runs_in_zsh_with_compinit(tmp_path):
    assert (SOURCE / "helper/dist/_layover").read_text().startswith("#compdef layover")
    (tmp_path / "p.tar.zst").write_text("")
    (tmp_path / "notes.txt").write_text("")
    all_verbs, ap, apply_flags, run_ti, show = zsh_complete(
        ["layover ", "layover ap", "layover apply --", "layover run --ti", "layover show "], tmp_path)
    assert set(all_verbs) == set(verbs()) and len(all_verbs) == len(verbs())
    assert ap == ["apply"]
    assert {"--dry-run", "--target", "--only", "--exclude", "--yes", "--undo-to"} <= set(apply_flags)
    assert all(f.startswith("--") for f in apply_flags) and "--timeout" not in apply_flags  # run's, not apply's
    assert run_ti == ["--timeout"]
    assert "p.tar.zst" in show and "notes.txt" not in show
    r = subprocess.run(["bash", "-n", str(SOURCE / "helper/dist/layover.bash")], capture_output=True)
    assert r.returncode == 0, r.stderr.decode()


def test_apparmor_profile_parses(tmp_path):
    """The profile as install.sh fills it, compiled by apparmor_parser without
    loading it (-Q: no kernel load, -K: no cache; this kernel has no AppArmor).
    Debian 12's AppArmor 3.0 has no abi/4.0 and does not know the three 4.0
    rules (userns, io_uring, mqueue): there the rest of the profile is parsed
    with those lines taken out, and only those."""
    parser = shutil.which("apparmor_parser") or next(
        (p for p in ("/usr/sbin/apparmor_parser", "/sbin/apparmor_parser") if os.access(p, os.X_OK)), None)
    assert parser, "apparmor_parser is missing (tests/deps.sh installs Debian's apparmor)"
    template = (SOURCE / "helper/dist/apparmor.profile").read_text()
    assert set(re.findall(r"@[A-Z]+@", template)) == {"@NAME@", "@BIN@", "@FILE@"}
    name = "usr.local.bin.layover"
    text = template.replace("@NAME@", name).replace("@BIN@", "/usr/local/bin/layover").replace(
        "@FILE@", "/etc/apparmor.d/" + name)
    version = re.search(r"version (\d+)\.", sh(parser, "--version").stdout.decode()).group(1)
    if int(version) < 4 and not os.path.exists("/etc/apparmor.d/abi/4.0"):
        assert text.count("abi <abi/4.0>,") == 1
        text = text.replace("abi <abi/4.0>,", "abi <abi/3.0>,")
        for rule in ("userns", "io_uring", "mqueue"):
            line = "  allow %s,\n" % rule
            assert text.count(line) == 2, rule  # layover's profile and its child's
            text = text.replace(line, "")

    def parse(body):
        path = tmp_path / name
        path.write_text(body)
        return subprocess.run([parser, "-Q", "-K", str(path)], capture_output=True, timeout=60)

    r = parse(text)
    assert r.returncode == 0, r.stderr.decode()
    assert "profile %s /usr/local/bin/layover flags=" % name in text and "profile %s_child flags=" % name in text
    # The parser does check: a rule it does not know fails.
    assert parse(text.replace("  allow signal,\n", "  allow signal,\n  allow nonsense,\n", 1)).returncode != 0
