"""`make deb`: the package's contents, and (as root in CI) dpkg -i, use as
an unprivileged user, then purge, leaving the system as it was."""
import os
import subprocess
from pathlib import Path

import pytest

from conftest import BUILD, ROOT, SOURCE, VERSION, as_user, sh


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    env = dict(os.environ, BUILD=str(BUILD), VERSION=VERSION, OUT=str(out))
    path = Path(sh(SOURCE / "helper/dist/deb.sh", env=env).stdout.decode().strip())
    assert path.is_file() and path.name.startswith("layover_%s_" % VERSION)
    return path


def test_deb_holds_the_install_tree_under_usr(deb):
    listing = sh("dpkg-deb", "-c", deb).stdout.decode()
    names = {line.split()[-1].lstrip(".") for line in listing.splitlines()}
    for f in ("/usr/bin/layover", "/usr/lib/layover/layover-patch", "/usr/lib/layover/install.conf",
              "/usr/share/man/man1/layover.1.gz", "/usr/share/bash-completion/completions/layover",
              "/usr/share/zsh/vendor-completions/_layover", "/etc/apparmor.d/usr.bin.layover",
              "/usr/lib/python3/dist-packages/layover/__init__.py",
              "/usr/lib/python3/dist-packages/layover/_install.py"):
        assert f in names, f
    assert "/usr/lib/layover/install-manifest" not in names
    assert all(" root/root " in line for line in listing.splitlines())
    info = sh("dpkg-deb", "-I", deb).stdout.decode()
    assert "Package: layover" in info and "Version: " + VERSION in info
    conffiles = sh("dpkg-deb", "--ctrl-tarfile", deb).stdout
    assert b"/etc/apparmor.d/usr.bin.layover" in conffiles


def installed():
    return subprocess.run(["dpkg-query", "-W", "-f=${Status}", "layover"], capture_output=True).stdout


def test_deb_installs_runs_as_a_user_and_purges_clean(deb):
    if not (ROOT and os.environ.get("CI") in ("true", "1")):
        # Installing a package changes the machine: only as root in CI.
        assert not ROOT or os.environ.get("CI") not in ("true", "1")
        return
    paths = [Path(p) for p in ("/usr/bin/layover", "/usr/lib/layover", "/usr/lib/python3/dist-packages/layover",
                               "/etc/apparmor.d/usr.bin.layover", "/usr/share/man/man1/layover.1.gz",
                               "/usr/share/bash-completion/completions/layover",
                               "/usr/share/zsh/vendor-completions/_layover")]
    assert b"install ok installed" not in installed(), "layover is already installed as a package here"
    assert not any(p.exists() for p in paths), "a layover is already installed in /usr"
    try:
        sh("dpkg", "-i", deb)
        assert installed() == b"install ok installed"
        r = as_user("/usr/bin/layover", "--version")
        assert r.stdout.decode() == "layover %s\n" % VERSION
        r = as_user("/usr/bin/layover", "doctor")
        assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
        r = as_user("/usr/bin/layover", "run", "--on-exit", "discard", "--", "true")
        assert r.returncode == 0, r.stderr.decode()
        r = as_user("/usr/bin/python3", "-c", "import layover, layover._helper as h; print(h.find_binary())")
        assert r.returncode == 0 and r.stdout.decode() == "/usr/bin/layover\n", r.stderr.decode()
        r = subprocess.run(["man", "-w", "layover"], capture_output=True)
        assert r.stdout.decode().strip() == "/usr/share/man/man1/layover.1.gz"
    finally:
        subprocess.run(["dpkg", "--purge", "layover"], capture_output=True, timeout=300)
    assert installed() in (b"", b"unknown ok not-installed")
    left = [str(p) for p in paths if p.exists()]
    assert left == []
    assert not Path("/etc/apparmor.d/disable/usr.bin.layover").exists()
