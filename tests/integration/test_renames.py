"""Directory renames inside the sandbox (issue 15). Unprivileged overlayfs
refuses to rename a directory of the real tree (EXDEV: no redirect_dir with
userxattr); layover's supervisor does it instead (helper/sandbox/rename/rename_notify.cc). Each
case runs the rename for real too and compares the applied tree with it."""
import os
import shutil
import subprocess

import pytest

from conftest import LAYOVER
from test_real_tools import Bench, assert_same, bench, need  # noqa: F401  (fixture)

PY = "/usr/bin/python3"


def tree(root, n=3):
    (root / "src" / "pkg").mkdir(parents=True)
    for i in range(n):
        (root / "src" / "pkg" / ("m%d.py" % i)).write_text("x = %d\n" % i)
    (root / "src" / "link").symlink_to("pkg/m0.py")
    (root / "src" / "pkg" / "run.sh").write_text("#!/bin/sh\n")
    (root / "src" / "pkg" / "run.sh").chmod(0o755)


def test_python_os_rename_of_a_real_directory(bench):
    tree(bench.proj)
    want, got, session, changed = bench.differential('%s -c "import os; os.rename(\'src\', \'lib\')"\n' % PY, "py")
    assert_same(want, got, session, changed)
    assert (bench.proj / "lib" / "pkg" / "m1.py").read_text() == "x = 1\n"
    assert os.readlink(bench.proj / "lib" / "link") == "pkg/m0.py"
    assert os.stat(bench.proj / "lib" / "pkg" / "run.sh").st_mode & 0o777 == 0o755
    assert not (bench.proj / "src").exists()


def test_status_shows_a_move_as_deletions_and_additions(bench):
    tree(bench.proj)
    r = subprocess.run([LAYOVER, "run", "--target", str(bench.proj), "--session", "mv", "--", PY, "-c",
                        "import os; os.rename('src', 'lib')"], env=bench.env, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=60, cwd=str(bench.proj))
    assert r.returncode == 0, r.stderr
    st = subprocess.run([LAYOVER, "status", "mv", "--expand"], env=bench.env, capture_output=True).stdout.decode()
    assert "D  src/" in st and "A  lib/pkg/m2.py" in st


def test_git_mv_of_a_real_directory(bench):
    need("git")
    tree(bench.proj)
    subprocess.run(["git", "init", "-q", "-b", "main", "."], cwd=str(bench.proj), env=bench.env, check=True)
    subprocess.run(["git", "add", "."], cwd=str(bench.proj), env=bench.env, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=str(bench.proj), env=bench.env, check=True)
    want, got, session, changed = bench.differential("git mv src lib\ngit commit -qm moved\n", "git")
    assert_same(want, got, session, changed)
    assert (bench.proj / "lib" / "pkg" / "m0.py").exists() and not (bench.proj / "src").exists()


def test_node_rename_sync_of_a_real_directory(bench):
    need("node")
    tree(bench.proj)
    want, got, session, changed = bench.differential(
        "node -e \"require('fs').renameSync('src', 'lib')\"\n", "node")
    assert_same(want, got, session, changed)


def test_a_real_directory_of_10000_files_moves(bench):
    big = bench.proj / "big"
    big.mkdir()
    for d in range(10):
        sub = big / ("d%d" % d)
        sub.mkdir()
        for i in range(1000):
            (sub / ("f%d" % i)).write_text("%d-%d\n" % (d, i))
    want, got, session, changed = bench.differential('%s -c "import os; os.rename(\'big\', \'moved\')"\n' % PY,
                                                     "big")
    assert_same(want, got, session, changed)
    assert (bench.proj / "moved" / "d9" / "f999").read_text() == "9-999\n"


def test_noreplace_and_rename_rules_hold(bench):
    tree(bench.proj)
    (bench.proj / "taken").mkdir()
    (bench.proj / "taken" / "x").write_text("x\n")
    (bench.proj / "emptydir").mkdir()
    code = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def r2(a, b, flags):
    rc = libc.syscall(316, -100, a.encode(), -100, b.encode(), flags)
    return 0 if rc == 0 else ctypes.get_errno()
print(r2("src", "taken", 0) == errno.ENOTEMPTY)
print(r2("src", "emptydir", 1) == errno.EEXIST)          # RENAME_NOREPLACE
print(r2("src", "src/pkg/inside", 0) == errno.EINVAL)     # into itself
print(r2("src", "emptydir", 0) == 0)                      # over an empty dir: replaced
print(os.path.isdir("emptydir/pkg"), os.path.exists("src"))
"""
    r = subprocess.run([LAYOVER, "run", "--target", str(bench.proj), "--session", "rules", "--", PY, "-c", code],
                       env=bench.env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60, cwd=str(bench.proj))
    assert r.stdout.decode().split() == ["True"] * 5 + ["False"], (r.stdout, r.stderr)


def test_a_rename_through_a_symlink_out_of_the_target_changes_nothing_outside(bench):
    outside = bench.root / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "keep").write_text("keep\n")
    (bench.proj / "out").symlink_to(outside)
    code = ("import os\nfor a, b in (('out/dir', 'stolen'), ('out/dir', 'out/renamed')):\n"
            "    try:\n        os.rename(a, b); print('moved', a, b)\n"
            "    except OSError as e:\n        print('refused', e.errno)")
    r = subprocess.run([LAYOVER, "run", "--target", str(bench.proj), "--session", "sym", "--", PY, "-c", code],
                       env=bench.env, capture_output=True, stdin=subprocess.DEVNULL, timeout=60, cwd=str(bench.proj))
    assert b"moved" not in r.stdout, r.stdout
    assert (outside / "dir" / "keep").read_text() == "keep\n"
    assert not (outside / "renamed").exists()
    st = subprocess.run([LAYOVER, "status", "sym", "--json"], env=bench.env, capture_output=True).stdout
    assert b"stolen" not in st


def test_renames_of_files_and_of_new_dirs_still_work(bench):
    (bench.proj / "a.txt").write_text("a\n")
    want, got, session, changed = bench.differential(
        "mv a.txt b.txt\nmkdir new && echo n > new/f && mv new new2\n"
        "%s -c \"import os; [os.replace('b.txt', 'c.txt') for _ in range(1)]\"\n" % PY, "files")
    assert_same(want, got, session, changed)
    assert (bench.proj / "new2" / "f").read_text() == "n\n"
