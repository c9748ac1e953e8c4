"""`pip install ./python` offline with Debian's pip and setuptools, in a
venv; the version is the one the binary reports."""
import shutil
import subprocess
from pathlib import Path

from conftest import BUILD, SOURCE, VERSION, sh


def test_pip_installs_the_package_offline_in_a_venv(tmp_path):
    src = tmp_path / "python"
    shutil.copytree(SOURCE / "python", src, ignore=shutil.ignore_patterns("tests", "__pycache__", "_install.py"))
    venv = tmp_path / "venv"
    sh("/usr/bin/python3", "-m", "venv", "--system-site-packages", venv)
    r = sh(venv / "bin/pip", "install", "--no-build-isolation", "--no-index", "--no-cache-dir",
           "--disable-pip-version-check", "-q", src, check=False)
    assert r.returncode == 0, r.stderr.decode()
    r = sh(venv / "bin/pip", "show", "layover", cwd="/")
    assert "Version: %s" % VERSION in r.stdout.decode()
    r = sh(venv / "bin/python", "-c",
           "import layover, os; print(layover.__version__); print(os.path.dirname(layover.__file__))",
           cwd="/", env={"PATH": "/usr/bin:/bin"})
    version, where = r.stdout.decode().split()
    assert version == VERSION
    assert where.startswith(str(venv))
    for f in ("py.typed", "_server.py", "_repl_io.py", "_repl_out.py", "_repl_exec.py", "_repl_result.py", "_repl_help.py", "_version.py"):
        assert (Path(where) / f).is_file(), f
    # The version is the binary's: one source, python/layover/_version.py.
    assert sh(BUILD / "layover", "--version").stdout.decode() == "layover %s\n" % VERSION
    out = subprocess.run([str(BUILD / "layover"), "version"], capture_output=True).stdout.decode()
    assert out == "layover %s\n" % VERSION
