"""`make install` into a DESTDIR stage and into a real PREFIX, and `make
uninstall` reversing it exactly."""
import os
import stat
import subprocess

from conftest import BUILD, SOURCE, VERSION, as_user, install_env, sh, tree


def site_of(prefix):
    return sh(SOURCE / "tests/install_python.sh", "--site", prefix).stdout.decode().strip()


def test_destdir_stage_holds_every_file_and_uninstall_empties_it(tmp_path):
    stage = tmp_path / "stage"
    stage.mkdir()
    env = install_env(DESTDIR=stage, PREFIX="/usr/local", PYTHONDIR="/usr/local/lib/py/site",
                      APPARMOR="yes", APPARMORDIR="/etc/apparmor.d")
    sh(SOURCE / "helper/dist/install.sh", env=env)
    pkg = ["usr/local/lib/py/site/layover/" + p.name for p in (SOURCE / "python/layover").iterdir()
           if p.suffix == ".py" or p.name == "py.typed"]
    files = {"usr/local/bin/layover", "usr/local/lib/layover/layover-patch", "usr/local/lib/layover/install.conf",
             "usr/local/lib/layover/python",
             "usr/local/lib/layover/install-manifest", "usr/local/share/man/man1/layover.1",
             "usr/local/share/bash-completion/completions/layover", "usr/local/share/zsh/site-functions/_layover",
             "etc/apparmor.d/usr.local.bin.layover", "usr/local/lib/py/site/layover/_install.py"} | set(pkg)
    got = tree(stage)
    assert {p for p in got if not p.endswith("/") and "__pycache__" not in p} == files
    assert any(p.endswith(".pyc") for p in got)  # compiled at install, listed in the manifest
    # Modes and contents.
    for exe in ("usr/local/bin/layover", "usr/local/lib/layover/layover-patch"):
        assert stat.S_IMODE((stage / exe).stat().st_mode) == 0o755
    assert (stage / "usr/local/bin/layover").read_bytes() == (BUILD / "layover").read_bytes()
    assert stat.S_IMODE((stage / "usr/local/share/man/man1/layover.1").stat().st_mode) == 0o644
    assert "BINARY = '/usr/local/bin/layover'" in (stage / "usr/local/lib/py/site/layover/_install.py").read_text()
    conf = (stage / "usr/local/lib/layover/install.conf").read_text().splitlines()
    assert conf == ["version=" + VERSION, "python=/usr/bin/python3", "pythonpath=/usr/local/lib/py/site"]
    profile = (stage / "etc/apparmor.d/usr.local.bin.layover").read_text()
    assert "profile usr.local.bin.layover /usr/local/bin/layover flags=" in profile
    assert "@" not in profile.replace("abi <abi/4.0>", "")  # every placeholder filled
    assert "allow userns," in profile and "audit deny capability," in profile
    # The manifest names every file and dir made, final paths (no DESTDIR).
    manifest = (stage / "usr/local/lib/layover/install-manifest").read_text().splitlines()
    listed = {line[2:].lstrip("/") + ("/" if line[0] == "d" else "") for line in manifest}
    assert listed == got
    assert all(str(stage) not in line for line in manifest)
    sh(SOURCE / "helper/dist/uninstall.sh", env=env)
    assert tree(stage) == set()


def test_installed_to_a_real_prefix_works_as_a_user_from_anywhere(real_dir):
    prefix = real_dir / "prefix"
    prefix.mkdir()
    prefix.chmod(0o755)
    env = install_env(PREFIX=prefix)
    out = sh(SOURCE / "helper/dist/install.sh", env=env).stdout.decode()
    assert "installed layover in %s" % prefix in out
    layover = prefix / "bin/layover"
    site = site_of(prefix)

    r = as_user(layover, "--version")
    assert r.returncode == 0 and r.stdout.decode() == "layover %s\n" % VERSION
    r = as_user(layover, "doctor")
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    assert "FAIL" not in r.stdout.decode()
    r = as_user(layover, "run", "--on-exit", "discard", "--", "true")
    assert r.returncode == 0, r.stderr.decode()
    # A patch verb: layover finds layover-patch in PREFIX/lib/layover.
    home = os.environ.get("LAYOVER_TEST_HOME") or os.environ["HOME"]
    patch = os.path.join(home, "install-test.tar.zst")
    r = as_user(layover, "run", "--on-exit", "save:" + patch, "--", "sh", "-c", "echo hi > installed.txt",
                cwd=home)
    assert r.returncode == 0, r.stderr.decode()
    r = as_user(layover, "show", patch)
    assert r.returncode == 0 and b"installed.txt" in r.stdout, r.stderr
    os.unlink(patch)
    assert not os.path.exists(os.path.join(home, "installed.txt"))
    # Python, from another dir, no LAYOVER_BIN: the recorded binary is used.
    r = as_user("/usr/bin/python3", "-c",
                "import layover, layover._helper as h; print(h.find_binary()); print(layover.__version__); "
                "print(layover.list_sessions())", extra={"PYTHONPATH": site})
    assert r.returncode == 0, r.stderr.decode()
    lines = r.stdout.decode().splitlines()
    assert lines[:2] == [str(layover), VERSION]

    sh(SOURCE / "helper/dist/uninstall.sh", env=env)
    assert tree(prefix) == set()


def test_reinstall_replaces_and_uninstall_keeps_foreign_files(real_dir):
    prefix = real_dir / "p"
    env = install_env(PREFIX=prefix)
    sh(SOURCE / "helper/dist/install.sh", env=env)
    sh(SOURCE / "helper/dist/install.sh", env=env)  # over itself: the old manifest is reversed first
    (prefix / "bin/other-tool").write_text("mine")
    r = sh(SOURCE / "helper/dist/uninstall.sh", env=env, check=False)
    assert r.returncode == 1 and b"kept %s/bin" % str(prefix).encode() in r.stderr
    assert tree(prefix) == {"bin/", "bin/other-tool"}
    r = sh(SOURCE / "helper/dist/uninstall.sh", env=env, check=False)
    assert r.returncode == 1 and b"no %s/lib/layover/install-manifest" % str(prefix).encode() in r.stderr


def test_install_refuses_without_the_build(tmp_path):
    env = install_env(PREFIX=tmp_path / "p", BUILD=tmp_path / "nobuild")
    r = sh(SOURCE / "helper/dist/install.sh", env=env, check=False)
    assert r.returncode == 1
    assert b"nobuild/layover is missing; run 'make all man' first" in r.stderr
    assert not (tmp_path / "p").exists()


def test_make_install_and_uninstall_use_the_scripts(tmp_path):
    """The Makefile's targets pass PREFIX, DESTDIR and the rest through."""
    stage = tmp_path / "s"
    mk = ["make", "-C", SOURCE, "--no-print-directory", "-o", "all", "-o", "man", "BUILD=" + str(BUILD),
          "DESTDIR=" + str(stage), "PREFIX=/opt/lo", "APPARMOR=no"]
    r = subprocess.run([str(a) for a in mk + ["install"]], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert (stage / "opt/lo/bin/layover").is_file()
    assert not (stage / "etc").exists()
    r = subprocess.run([str(a) for a in mk + ["uninstall"]], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode()
    assert tree(stage) == set()
