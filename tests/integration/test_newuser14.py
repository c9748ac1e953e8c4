"""An ordinary user following README.md from a fresh clone (newuser14):
`make install` without root, `make demo`'s log. Each test fails before its
fix; each checks the real files afterwards."""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import LAYOVER

ROOT = Path(os.environ.get("LAYOVER_SOURCE_ROOT") or Path(__file__).resolve().parents[2])
BUILD = Path(LAYOVER).parent  # layover, layover-patch, layover.1 (dev_pytest.sh and run_all.sh copy them there)


def _install(tmp_path, **settings):
    if os.geteuid() == 0:
        pytest.skip("a user's install: root may write anywhere (run as the throwaway uid)")
    if not (BUILD / "layover.1").exists():
        pytest.skip("no layover.1 beside the binary (make man)")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "h"), "BUILD": str(BUILD),
           "PYTHON": "/usr/bin/python3", "LANG": "C.UTF-8"}
    env.update({k: str(v) for k, v in settings.items()})
    return subprocess.run([str(ROOT / "helper/dist/install.sh")], capture_output=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=120)


def _tree(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*"))


def test_a_users_make_install_into_a_prefix_it_cannot_write_names_sudo_and_a_home_prefix(tmp_path):
    # Before: "install: cannot create regular file '/usr/local/bin/layover':
    # Permission denied" and make's "Error 1"; README said plain `make install`.
    usr = tmp_path / "usr"
    (usr / "bin").mkdir(parents=True)
    (usr / "bin").chmod(0o555)
    try:
        r = _install(tmp_path, PREFIX=usr, PYTHONDIR=usr / "site", APPARMOR="no")
        assert r.returncode == 1 and r.stdout == b"", r
        assert r.stderr.decode() == (
            "layover install: %s/bin is not writable by you; run 'sudo make install', or 'make install "
            "PREFIX=%s/h/.local' to install for yourself alone\n" % (usr, tmp_path)), r.stderr
        assert _tree(usr) == ["bin"]  # nothing written
    finally:
        (usr / "bin").chmod(0o755)
    # The command it names works: PREFIX under the home, made as needed.
    prefix = tmp_path / "h" / ".local"
    r = _install(tmp_path, PREFIX=prefix, APPARMOR="no")
    assert r.returncode == 0, r.stderr
    assert os.access(prefix / "bin" / "layover", os.X_OK)
    readme = (ROOT / "README.md").read_text()
    assert "    sudo make install " in readme and "    make install PREFIX=$HOME/.local " in readme, readme


def test_a_users_install_where_apparmor_needs_root_installs_the_rest_and_says_what_to_check(tmp_path):
    # Before: with an AppArmor that knows userns (abi/4.0), `make install
    # PREFIX=~/.local` installed the binary and the Python package, then died
    # on "install: cannot create ... /etc/apparmor.d/...: Permission denied"
    # with no manifest: `make uninstall` could not remove what it wrote.
    aa = tmp_path / "apparmor.d"
    (aa / "abi").mkdir(parents=True)
    (aa / "abi" / "4.0").write_text("")
    aa.chmod(0o555)
    prefix = tmp_path / "h" / ".local"
    try:
        r = _install(tmp_path, PREFIX=prefix, APPARMORDIR=aa)
    finally:
        aa.chmod(0o755)
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().endswith(
        "no AppArmor profile installed: %s is not writable by you; if 'layover doctor' then fails its AppArmor "
        "check (Ubuntu 23.10+), install as root: sudo make install\n" % aa), r.stdout
    assert _tree(aa) == ["abi", "abi/4.0"]
    manifest = (prefix / "lib/layover/install-manifest").read_text()
    assert "f %s/bin/layover\n" % prefix in manifest and " %s" % aa not in manifest, manifest
    env = {"PATH": "/usr/bin:/bin", "PREFIX": str(prefix)}
    r = subprocess.run([str(ROOT / "helper/dist/uninstall.sh")], capture_output=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not prefix.exists() or _tree(prefix) == [], _tree(prefix)


def test_make_demos_mcp_client_prints_its_lines_before_the_servers_closing_line_in_a_log(require_sandbox, tmp_path):
    # Before: `make demo > log` held the server's "session ... kept" line
    # above every line of the client (its stdout was block-buffered in a pipe).
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "README").write_text("hello\nworld\n")
    (tmp_path / "proj" / "src" / "main.c").write_text("int main() { return 0; }\n")
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    r = subprocess.run(["/usr/bin/python3", str(ROOT / "tests/mcp_demo.py"), LAYOVER, str(tmp_path / "proj"),
                        "demo-nu14"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       stdin=subprocess.DEVNULL, timeout=120)
    assert r.returncode == 0, r.stdout
    lines = r.stdout.decode().splitlines()
    kept = [i for i, line in enumerate(lines) if line.startswith("layover mcp: session demo-nu14 kept")]
    assert kept == [len(lines) - 1], lines  # the server's last word comes last
    assert lines[0].startswith("-> ") and any(line.startswith("   tools: ") for line in lines), lines
    assert (tmp_path / "proj" / "README").read_text() == "hello\nworld\n"  # the real tree is untouched
    assert (state / "sessions" / "demo-nu14").is_dir()


def test_readme_installs_the_python_package_in_a_venv_and_says_why():
    # Before: "pip install ./python" alone, which Debian 12 and Ubuntu 23.04+
    # refuse outside a venv (externally-managed-environment, PEP 668).
    readme = (ROOT / "README.md").read_text()
    lines = [line for line in readme.splitlines() if "pip install ./python" in line]
    assert lines and all("python3 -m venv ~/venv && ~/venv/bin/pip install ./python" in line for line in lines), lines
    assert "`externally-managed-environment`" in readme and "--no-build-isolation --no-index" in readme
    # The tour says where `layover` comes from before its first command.
    tour = readme.split("## A 5-minute tour", 1)[1].split("<!-- runnable -->", 1)[0]
    assert "sudo make install" in tour and "PREFIX=$HOME/.local" in tour, tour


def test_sessions_help_says_what_the_verb_and_each_flag_do_as_the_other_verbs_do(lo):
    # Before: its usage line alone, the one verb (with restore) that did not say
    # what it lists or what --trash is.
    help_text = ("usage: layover sessions [--json] [--trash]\n"
                 "List the sessions: name, state, age, size, steps, changes, and what started each.\n"
                 "  --json   the same as JSON, one object per session\n"
                 "  --trash  the discarded sessions instead (kept 24 hours; 'layover restore NAME')\n"
                 "States: running, crashed (its supervisor died), applied, saved, empty, kept.\n")
    for args in (("sessions", "--help"), ("help", "sessions")):
        r = lo(*args)
        assert r.returncode == 0 and r.stdout.decode() == help_text and r.stderr == b"", (args, r)
    r = lo("sessions", "--bogus")  # a usage error stays the short usage
    assert r.returncode == 2 and b"List the sessions" not in r.stderr, r.stderr


def test_save_to_a_directory_suggests_a_file_in_it_without_a_double_slash(lo, tmp_path):
    # Before: `layover save s -o ~/` said "e.g. -o /home/me//patch.tar.zst".
    assert lo.run("echo n > new.txt", session="nu14-dir").returncode == 0
    out = tmp_path / "out"
    out.mkdir()
    for given in (str(out) + "/", str(out)):
        r = lo("save", "nu14-dir", "-o", given)
        assert r.returncode == 1 and r.stdout == b"", r
        assert r.stderr.decode() == "layover: %s is a directory; name a file, e.g. -o %s/patch.tar.zst\n" % (
            given, out), r.stderr
    assert list(out.iterdir()) == []  # nothing written there
    r = lo("save", "nu14-dir", "-o", out / "patch.tar.zst")  # the file it suggests is saved
    assert r.returncode == 0 and (out / "patch.tar.zst").is_file(), r.stderr
