"""`layover mcp` run from a binary that cannot find its Python package
(moved out of test_mcp_server.py, which had passed 500 lines)."""
import shutil
import subprocess

from conftest import LAYOVER


def test_a_binary_without_the_python_package_says_where_it_looked_and_the_fix(tmp_path):
    # A copy of the binary with no python/ beside it (and none installed for
    # /usr/bin/python3): one line naming each place looked in, and the fix.
    (tmp_path / "bin").mkdir()
    shutil.copy(LAYOVER, tmp_path / "bin" / "layover")
    if subprocess.run(["/usr/bin/python3", "-I", "-c", "import layover"], capture_output=True).returncode == 0:
        # Installed for the interpreter (make install on this host): the copy finds that one.
        r = subprocess.run([str(tmp_path / "bin" / "layover"), "mcp", "--help"], capture_output=True, timeout=30)
        assert r.returncode == 0 and b"not found" not in r.stderr, r.stderr
        return
    # --help needs no package: the usage, exit 0 (it was this error, exit 1).
    r = subprocess.run([str(tmp_path / "bin" / "layover"), "mcp", "--help"], capture_output=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith(b"usage: layover mcp ") and r.stderr == b"", r
    r = subprocess.run([str(tmp_path / "bin" / "layover"), "mcp"], stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=30)
    err = r.stderr.decode()
    assert r.returncode == 1 and err.count("\n") == 1 and r.stdout == b"", err
    b = str(tmp_path / "bin")
    assert err.startswith("layover mcp: the layover Python package was not found (No module named 'layover') "
                          "in %s/../python, %s/../lib/layover/python or the site-packages of /usr/bin/python3 "
                          "(run with -I: no PYTHONPATH, no user site); run make install" % (b, b)), err
