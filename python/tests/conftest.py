"""Fixtures for the Python binding tests (run by `make test` as an
unprivileged user, with LAYOVER_BIN and PYTHONPATH set by tests/run_all.sh).

A missing kernel feature fails the test with a clear reason; it is skipped
only when LAYOVER_ALLOW_SKIP=1 (the pattern of tests/integration/conftest.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# No config file of the developer's reaches the sandboxes these tests start.
os.environ["XDG_CONFIG_HOME"] = str(HERE / "no-such-config-dir")
sys.path.insert(0, str(HERE.parent))  # the package from this checkout/stage

from layover import Sandbox  # noqa: E402
from layover.repl import Repl, default_python, python_argv  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "stress: huge cases, only in make test-stress")


def missing_feature(reason):
    if os.environ.get("LAYOVER_ALLOW_SKIP") == "1":
        pytest.skip(reason)
    pytest.fail("kernel feature missing: " + reason + " (set LAYOVER_ALLOW_SKIP=1 to skip)")


_probe = {}


@pytest.fixture
def require_sandbox():
    if "ok" not in _probe:
        r = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
        _probe["ok"] = r.returncode == 0
        _probe["why"] = r.stderr.decode(errors="replace").strip()
    if not _probe["ok"]:
        missing_feature("unprivileged user namespaces: " + _probe["why"])


@pytest.fixture
def state_dir(tmp_path):
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    return d


@pytest.fixture
def target(tmp_path):
    """A small scratch tree to sandbox."""
    t = tmp_path / "project"
    (t / "src").mkdir(parents=True)
    (t / "README.md").write_text("# demo\n")
    (t / "src" / "app.py").write_text("print('v1')\n")
    (t / "old.txt").write_text("obsolete\n")
    return t


@pytest.fixture
def repl():
    """The REPL server run directly on the host through the same bootstrap
    (no sandbox): protocol tests that need no kernel features."""
    r = Repl.spawn(lambda fd: python_argv(default_python()), env=dict(os.environ), set_ipc_env=True,
                   describe="REPL", max_output=256 * 1024 * 1024)
    yield r
    r.close(timeout=5)


@pytest.fixture
def make_sandbox(require_sandbox, state_dir, target):
    made = []

    def make(**kw):
        kw.setdefault("state_dir", state_dir)
        sb = Sandbox(kw.pop("target", target), **kw)
        made.append(sb)
        return sb

    yield make
    for sb in made:
        sb.close()


@pytest.fixture
def sb(make_sandbox):
    return make_sandbox()
