"""Shared fixtures for the integration suites (run as an unprivileged user).

Every test runs the real binary. A missing kernel feature fails the test with
a clear reason; it is skipped only when LAYOVER_ALLOW_SKIP=1.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_configure(config):
    config.addinivalue_line("markers", "stress: huge cases, only in make test-stress")


def _find_bin():
    env = os.environ.get("LAYOVER_BIN")
    if env:
        return env
    cand = ROOT / "build" / "layover"
    if cand.exists():
        return str(cand)
    found = shutil.which("layover")
    if found:
        return found
    raise RuntimeError("layover binary not found: build it with 'make' or set LAYOVER_BIN")


LAYOVER = _find_bin()


# The floor, in seconds, of every pexpect child's timeout (what each `expect`
# waits for a prompt or EOF unless it passes timeout= of its own): a starved
# 2-core CI pool can take longer than the 15-30 s the spawn sites name before
# a prompt appears. A wait only ends sooner when the text arrives, so a higher
# floor never weakens an assertion; an `expect(..., timeout=N)` that
# deliberately bounds a wait keeps its own N.
PEXPECT_TIMEOUT_FLOOR = 60


def _floor_pexpect_timeouts():
    try:
        import pexpect
    except ImportError:
        return
    init = pexpect.spawn.__init__
    if getattr(init, "layover_floor", False):
        return

    def __init__(self, *args, **kw):
        init(self, *args, **kw)
        if self.timeout is not None and self.timeout < PEXPECT_TIMEOUT_FLOOR:
            self.timeout = PEXPECT_TIMEOUT_FLOOR

    __init__.layover_floor = True
    pexpect.spawn.__init__ = __init__


_floor_pexpect_timeouts()


def proc_stat(pid):
    """The fields of /proc/PID/stat after the command's name (the state
    letter first, then the parent's pid, ...); [] once the process is gone."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return []


def kill9_and_reap(p):
    """SIGKILL the Popen `p` (a supervisor: what a crash or `kill -9` does)
    and reap it; used in a `finally:`, it also reaps `p` when the test failed first."""
    try:
        if p.poll() is None:
            os.kill(p.pid, 9)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


def missing_feature(reason):
    """Fail (or, with LAYOVER_ALLOW_SKIP=1, skip) a test that cannot run here."""
    if os.environ.get("LAYOVER_ALLOW_SKIP") == "1":
        pytest.skip(reason)
    pytest.fail("kernel feature missing: " + reason + " (set LAYOVER_ALLOW_SKIP=1 to skip)")


_probe_cache = {}


def sandbox_works():
    """Probe once: can an unprivileged user mount an overlay in a userns?"""
    if "ok" not in _probe_cache:
        r = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
        _probe_cache["ok"] = r.returncode == 0
        _probe_cache["why"] = r.stderr.decode(errors="replace").strip()
    return _probe_cache["ok"], _probe_cache.get("why", "")


# Under `make asan` (LAYOVER_SANITIZED=1): the lines ASan prints once when a
# process that runs on a stack of its own (init's clone, the command before its
# exec) calls a noreturn function; no ASAN_OPTIONS flag silences them.
_ASAN_STACK_NOTE = re.compile(rb"==\d+==WARNING: ASan is ignoring requested __asan_handle_no_return[^\n]*\n"
                              rb"(?:[^\n]*False positive error reports may follow\r?\n)?"
                              rb"(?:[^\n]*google/sanitizers/issues/189\r?\n)?")


def without_sanitizer_notes(out):
    """`out` (bytes) without ASan's stack-switch warning, when sanitized."""
    return _ASAN_STACK_NOTE.sub(b"", out) if os.environ.get("LAYOVER_SANITIZED") else out


def real_dir(prefix):
    """A fresh dir on a real path (under /home in CI), not in the private /tmp
    the sandbox replaces: a target there meets what a real home meets."""
    import tempfile
    base = os.environ.get("LAYOVER_TEST_NONTMP")
    if not base:
        pytest.fail("LAYOVER_TEST_NONTMP (a dir outside /tmp) is not set: run through tests/run_all.sh")
    return Path(tempfile.mkdtemp(prefix=prefix, dir=base))


@pytest.fixture
def require_sandbox():
    ok, why = sandbox_works()
    if not ok:
        missing_feature("unprivileged user namespaces: " + why)


@pytest.fixture
def state_dir(tmp_path):
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    return d


@pytest.fixture
def home(tmp_path):
    """A small scratch target tree."""
    h = tmp_path / "home"
    (h / "docs").mkdir(parents=True)
    (h / "docs" / "readme.txt").write_text("hello\nworld\n")
    (h / "notes.txt").write_text("one\ntwo\nthree\n")
    (h / "old").mkdir()
    (h / "old" / "a.txt").write_text("a\n")
    (h / "old" / "sub").mkdir()
    (h / "old" / "sub" / "b.txt").write_text("b\n")
    (h / "link").symlink_to("notes.txt")
    return h


class Layover:
    def __init__(self, state, target):
        self.state = state
        self.target = target
        self.env = dict(os.environ)
        self.env["LAYOVER_STATE_DIR"] = str(state)
        # No config file of the developer's: tests that want one write it here.
        self.env["XDG_CONFIG_HOME"] = str(Path(state).parent / "xdg-config")

    def __call__(self, *args, input=None, timeout=60, check=False, env=None, cwd=None):
        """Run `layover ARGS` (cwd: the target, so relative paths land in it)."""
        e = dict(self.env)
        if env:
            e.update(env)
        kw = {} if input is not None else {"stdin": subprocess.DEVNULL}
        r = subprocess.run([LAYOVER, *map(str, args)], input=input, capture_output=True,
                           timeout=timeout, env=e, cwd=str(cwd or self.target), **kw)
        if check and r.returncode != 0:
            raise AssertionError("layover %s failed (%d): %s" % (args, r.returncode, r.stderr.decode(errors="replace")))
        return r

    def run(self, cmd, *extra, session=None, on_exit="keep", **kw):
        """`layover run` of a shell snippet over the target."""
        args = ["run", "--target", self.target, "--on-exit", on_exit]
        if session:
            args += ["--session", session]
        args += list(extra)
        args += ["--", "/bin/sh", "-c", cmd]
        return self(*args, **kw)

    def session_dir(self, name):
        return Path(self.state) / "sessions" / name

    def upper(self, name):
        return self.session_dir(name) / "upper"


@pytest.fixture
def victim(tmp_path):
    """A directory outside the target that hostile input must never touch."""
    out = tmp_path / "outside"
    out.mkdir()
    (out / "victim.txt").write_text("precious\n")
    return out


@pytest.fixture
def lo(require_sandbox, state_dir, home):
    return Layover(state_dir, home)


@pytest.fixture
def disk_lo(require_sandbox):
    """A Layover whose state dir and target both lie on a real filesystem
    under /home: for what the state dir's filesystem decides (the free-space
    floor, docs/design.md)."""
    state, target = real_dir("disk-state-"), real_dir("disk-home-")
    os.chmod(state, 0o700)
    (target / "notes.txt").write_text("one\n")
    yield Layover(state, target)
    shutil.rmtree(state, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)


def fs_space(path):
    """(size, free to an unprivileged user) of the filesystem holding path, in bytes (statvfs, as --min-free reads it)."""
    st = os.statvfs(path)
    return st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize


def snapshot(root):
    """A tree's full state (types, modes, contents, link targets) for equality checks."""
    out = {}
    root = Path(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            st = p.lstat()
            if p.is_symlink():
                out[rel] = ("l", os.readlink(p))
            elif p.is_dir():
                out[rel] = ("d", st.st_mode & 0o7777)
            elif p.is_file():
                out[rel] = ("f", st.st_mode & 0o7777, p.read_bytes())
            else:
                out[rel] = ("o", st.st_mode)
    return out
