"""The install suite: `make install` (helper/dist/install.sh), `make uninstall`,
`make deb`, pip, the man page and completion, tried as a user would. It runs
as the invoking user (root under `make test` in CI) and runs what it
installed as the throwaway uid run_all.sh made (LAYOVER_TEST_UID), with a
clean environment: no LAYOVER_BIN, no PYTHONPATH."""
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

SOURCE = Path(os.environ.get("LAYOVER_SOURCE_ROOT", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ["LAYOVER_BIN"]).parent  # layover, layover-patch, layover.1
VERSION = re.search(r'__version__ = "([^"]+)"', (SOURCE / "python/layover/_version.py").read_text()).group(1)
ROOT = os.geteuid() == 0


def sh(*args, env=None, check=True, **kw):
    r = subprocess.run([str(a) for a in args], capture_output=True, env=env, stdin=subprocess.DEVNULL,
                       timeout=300, **kw)
    if check:
        assert r.returncode == 0, (args, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace"))
    return r


def install_env(**settings):
    env = {k: v for k, v in os.environ.items() if k not in ("DESTDIR", "PREFIX", "PYTHONDIR")}
    env["BUILD"] = str(BUILD)
    env.update({k: str(v) for k, v in settings.items()})
    return env


def as_user(*cmd, cwd="/", extra=None):
    """Run cmd as the unprivileged user with a clean environment (the
    throwaway uid under root, else ourselves)."""
    home = os.environ.get("LAYOVER_TEST_HOME") or os.environ["HOME"]
    env = ["env", "-i", "HOME=" + home, "USER=layovertest", "PATH=/usr/bin:/bin", "LANG=C.UTF-8",
           "TERM=dumb"] + ["%s=%s" % kv for kv in (extra or {}).items()]
    pre = []
    if ROOT:
        uid = os.environ.get("LAYOVER_TEST_UID")
        assert uid, "as root, run_all.sh must give LAYOVER_TEST_UID (the throwaway uid)"
        pre = ["setpriv", "--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all"]
    return subprocess.run(pre + env + [str(c) for c in cmd], capture_output=True, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=120)


@pytest.fixture
def real_dir():
    """A fresh dir on a real path (not /tmp), readable by the throwaway uid."""
    base = os.environ.get("LAYOVER_TEST_NONTMP")
    d = Path(tempfile.mkdtemp(prefix="install.", dir=base))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def tree(root):
    """Every path under root (relative), dirs with a trailing /."""
    out = set()
    for dirpath, dirs, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for d in dirs:
            out.add(os.path.normpath(os.path.join(rel, d)) + "/")
        for f in files:
            out.add(os.path.normpath(os.path.join(rel, f)))
    return out
