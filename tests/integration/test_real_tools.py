"""Real tools inside `layover run` (issue 15), as differential tests: the
same script runs for real on the tree, then, on the same tree restored, inside
the sandbox followed by `apply`. The session must hold exactly the changes the
real run made, and the applied tree must equal the real run's, byte for byte
(files that only cache stat data or compile times are left out, and said so).
Offline: every package comes from a local file."""
import json
import os
import shutil
import subprocess
import zipfile

import pytest

from conftest import LAYOVER, snapshot, real_dir

# Caches of stat data or of compile times: they legitimately differ.
IGNORED = (".git/index", "__pycache__", ".pytest_cache")
GIT_ENV = {"GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}


def kept(snap):
    return {k: v for k, v in snap.items() if not any(part in k.split("/") or k.startswith(part) for part in IGNORED)}


class Bench:
    def __init__(self, root, state):
        self.root = root  # a real path (not /tmp): the home, with the project below it
        self.home = root / "home"
        self.proj = self.home / "proj"
        self.proj.mkdir(parents=True)
        self.state = state
        self.env = dict(os.environ, HOME=str(self.home), LAYOVER_STATE_DIR=str(state), **GIT_ENV)

    def differential(self, script, name):
        """Run `script` for real, then in the sandbox on the restored tree;
        returns (real snapshot, applied snapshot, the session's changed paths,
        the paths the real run changed)."""
        backup = self.root / "backup"
        shutil.copytree(self.proj, backup, symlinks=True)
        before = kept(snapshot(self.proj))
        real = subprocess.run(["/bin/sh", "-ec", script], cwd=str(self.proj), env=self.env, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=300)
        assert real.returncode == 0, real.stderr.decode(errors="replace")
        want = kept(snapshot(self.proj))
        shutil.rmtree(self.proj)
        shutil.copytree(backup, self.proj, symlinks=True)
        shutil.rmtree(backup)
        r = subprocess.run([LAYOVER, "run", "--target", str(self.proj), "--session", name, "--on-exit", "keep",
                            "--", "/bin/sh", "-ec", script], cwd=str(self.proj), env=self.env, capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=300)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        st = subprocess.run([LAYOVER, "status", name, "--json"], env=self.env, capture_output=True, timeout=120)
        assert st.returncode == 0, st.stderr
        session = {c["path"] for c in json.loads(st.stdout)}
        a = subprocess.run([LAYOVER, "apply", name, "--yes"], env=self.env, capture_output=True, timeout=300)
        assert a.returncode == 0, a.stderr.decode(errors="replace")
        got = kept(snapshot(self.proj))
        got.pop(".layover-undo", None)
        got = {k: v for k, v in got.items() if not k.startswith(".layover-undo")}
        changed = {k for k in set(before) | set(want) if before.get(k) != want.get(k)}
        return want, got, {p for p in session if not any(i in p for i in IGNORED)}, changed


@pytest.fixture
def bench(require_sandbox, state_dir):
    root = real_dir("tools-")
    yield Bench(root, state_dir)
    subprocess.run(["chmod", "-R", "u+rwX", str(root)])
    subprocess.run(["rm", "-rf", str(root)])


def need(cmd):
    if not shutil.which(cmd):
        pytest.fail("%s is not installed: make test installs it (tests/deps.sh)" % cmd)


def assert_same(want, got, session, changed):
    assert got == want
    # The session holds every path the real run changed (dirs count as
    # changed when something below them did, so compare the leaves).
    def covered(p):
        parts = p.split("/")
        ancestors = {"/".join(parts[:i]) for i in range(1, len(parts))}
        return p in session or bool(ancestors & session) or any(s.startswith(p + "/") for s in session)
    missing = {p for p in changed if not covered(p)}
    assert not missing, sorted(missing)[:10]


def test_git_workflow(bench):
    need("git")
    (bench.proj / "src").mkdir()
    (bench.proj / "src" / "app.py").write_text("v1\n")
    (bench.proj / "README").write_text("readme\n")
    script = """
git init -q -b main .
git add . && git commit -qm init
git checkout -qb feature && echo v2 > src/app.py && git commit -qam feature
git checkout -q main && echo more >> README && git commit -qam main-work
git checkout -q feature && git rebase -q main
echo wip >> README && git stash -q && git stash pop -q && git commit -qam wip
mkdir lib2 && echo x > lib2/x && git add lib2 && git commit -qm lib2 && git mv lib2 lib3 && git commit -qm mv
git gc -q --aggressive
git log --format=%s > log.txt
"""
    want, got, session, changed = bench.differential(script, "git")
    assert_same(want, got, session, changed)
    assert (bench.proj / "log.txt").read_text().splitlines()[0] == "mv"


def _wheel(path):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("tinypkg/__init__.py", "def answer():\n    return 42\n")
        z.writestr("tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n")
        z.writestr("tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                   "Tag: py3-none-any\n")
        z.writestr("tinypkg-1.0.dist-info/RECORD", "")


def test_python_venv_pip_install_and_pytest(bench):
    r = subprocess.run(["/usr/bin/python3", "-c", "import ensurepip, venv"], capture_output=True)
    if r.returncode != 0:
        pytest.fail("python3-venv is missing: make test installs it (tests/deps.sh)")
    wheel = bench.root / "tinypkg-1.0-py3-none-any.whl"
    _wheel(wheel)
    (bench.proj / "test_it.py").write_text("import tinypkg\n\ndef test_answer():\n    assert tinypkg.answer() == 42\n")
    script = """
/usr/bin/python3 -m venv --system-site-packages venv
venv/bin/python -m pip install -q --no-index --no-cache-dir --disable-pip-version-check %s
venv/bin/python -m pytest -q -p no:cacheprovider test_it.py > pytest.out
grep -q "1 passed" pytest.out
""" % wheel
    want, got, session, changed = bench.differential(script, "venv")
    # pytest's timing line differs between two runs; everything else must not.
    want.pop("pytest.out"), got.pop("pytest.out")
    assert_same(want, got, session, changed - {"pytest.out"})
    assert any(k.endswith("site-packages/tinypkg/__init__.py") for k in got)


def test_npm_install_of_a_local_tarball_with_home_outside_the_target(bench):
    need("node")
    need("npm")
    pkg = bench.root / "pkgsrc"
    pkg.mkdir()
    (pkg / "package.json").write_text(json.dumps({"name": "tinynpm", "version": "1.0.0", "main": "index.js"}))
    (pkg / "index.js").write_text("module.exports = () => 42;\n")
    packed = subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(bench.root)], cwd=str(pkg),
                            env=bench.env, capture_output=True, timeout=120)
    assert packed.returncode == 0, packed.stderr
    tarball = bench.root / "tinynpm-1.0.0.tgz"
    (bench.proj / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0"}))
    script = ("npm install --offline --no-audit --no-fund --silent %s\n"
              "node -e \"console.log(require('tinynpm')())\" > out.txt\n" % tarball)
    want, got, session, changed = bench.differential(script, "npm")
    assert_same(want, got, session, changed)
    assert (bench.proj / "out.txt").read_text() == "42\n"
    assert (bench.proj / "node_modules" / "tinynpm" / "index.js").exists()
    # npm's cache went to the home's scratch layer, listed and never applied.
    outside = subprocess.run([LAYOVER, "status", "npm", "--outside"], env=bench.env, capture_output=True)
    assert b"~/.npm/" in outside.stdout, outside.stdout[:200]


def test_make_cc_and_sed_in_place(bench):
    need("cc")
    need("make")
    (bench.proj / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("hi");return 0;}\n')
    (bench.proj / "Makefile").write_text("hello: hello.c\n\tcc -O0 -o hello hello.c\n")
    (bench.proj / "conf.ini").write_text("mode=old\nkeep=1\n")
    script = "make -s\n./hello > run.txt\nsed -i 's/old/new/' conf.ini\n"
    want, got, session, changed = bench.differential(script, "make")
    want.pop("hello"), got.pop("hello")  # the linker's output may embed the build id of its inputs' times
    assert_same(want, got, session, changed - {"hello"})
    assert (bench.proj / "conf.ini").read_text() == "mode=new\nkeep=1\n"
    assert (bench.proj / "run.txt").read_text() == "hi\n"


def test_sqlite_in_wal_mode(bench):
    code = ("import sqlite3\nc=sqlite3.connect('app.db')\nc.execute('pragma journal_mode=wal')\n"
            "c.execute('create table if not exists t(x)')\nc.executemany('insert into t values(?)', "
            "[(i,) for i in range(1000)])\nc.commit()\nc.close()\n")
    script = "/usr/bin/python3 -c \"%s\"\n" % code.replace('"', '\\"')
    want, got, session, changed = bench.differential(script, "sqlite")
    assert_same(want, got, session, changed)
    import sqlite3
    c = sqlite3.connect(str(bench.proj / "app.db"))
    assert c.execute("select count(*), sum(x) from t").fetchone() == (1000, 499500)
    c.close()


SPECIAL = r'''
import ctypes, fcntl, os, struct
libc = ctypes.CDLL(None, use_errno=True)
# inotify sees a write in the target
fd = libc.inotify_init1(os.O_NONBLOCK)
open("watched", "w").close()
wd = libc.inotify_add_watch(fd, b"watched", 0x2)  # IN_MODIFY
with open("watched", "a") as f:
    f.write("x")
ev = os.read(fd, 4096)
assert struct.unpack_from("iIII", ev)[1] & 0x2
# O_TMPFILE: an unnamed file in the target (linking it in is left out: the
# host's own filesystem may refuse that, which would make the runs differ)
t = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o644)
os.write(t, b"tmpfile\n")
assert os.pread(t, 64, 0) == b"tmpfile\n"
open("from_tmpfile", "wb").write(os.pread(t, 64, 0))
# flock
with open("locked", "w") as f:
    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    f.write("locked\n")
# fallocate
with open("alloc", "wb") as f:
    os.posix_fallocate(f.fileno(), 0, 1 << 20)
# a file deleted while open keeps its data
with open("gone", "w+") as f:
    os.unlink("gone")
    f.write("still here")
    f.seek(0)
    assert f.read() == "still here"
open("special.ok", "w").write("ok\n")
'''


def test_inotify_o_tmpfile_flock_fallocate_and_deleted_open_files(bench):
    (bench.proj / "special.py").write_text(SPECIAL)
    want, got, session, changed = bench.differential("/usr/bin/python3 special.py\n", "special")
    assert_same(want, got, session, changed)
    assert (bench.proj / "from_tmpfile").read_text() == "tmpfile\n"
    assert (bench.proj / "alloc").stat().st_size == 1 << 20
    assert not (bench.proj / "gone").exists()
