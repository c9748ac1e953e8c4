"""Huge and deep trees from someone else (issue 21): each works in bounded
memory and time or stops early with a one-line limit error and nothing
half-written. Patches built by hand (patch_builder.py); the largest cases
are marked stress (`make test-stress`), each with a smaller twin here."""
import os
import subprocess
import tarfile
import time

import pytest

from apply_util import tree
from patch_builder import PatchBuilder


def err_line(r):
    return r.stderr.decode(errors="replace").strip().splitlines()[-1]


def test_a_manifest_claiming_more_changes_than_the_payload_holds_is_refused(lo, tmp_path):
    b = PatchBuilder(lo.target).file("a.txt", b"a\n").file("ghost.txt", b"g\n", member=False)
    patch = b.write(tmp_path / "p.tar.zst")
    r = lo("show", patch)
    assert r.returncode == 1 and "ghost.txt" in err_line(r), err_line(r)
    assert lo("apply", patch, "--target", lo.target, "--yes").returncode == 1
    assert not (lo.target / "a.txt").exists()


def test_a_member_larger_than_its_manifest_size_is_refused(lo, tmp_path):
    b = PatchBuilder(lo.target).file("a.txt", b"a\n")
    info, _ = b.members[0]
    b.members[0] = (info, b"much more than the manifest says\n")
    patch = b.write(tmp_path / "p.tar.zst")
    r = lo("show", patch)
    assert r.returncode == 1 and "a.txt" in err_line(r), err_line(r)


class _Zeros:
    """A file object of n zero bytes, read in chunks (never held whole)."""

    def __init__(self, n):
        self.left = n

    def read(self, size=-1):
        size = self.left if size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def _bomb(path, target, size):
    """A patch whose one file is `size` zero bytes: a few KB of zstd."""
    b = PatchBuilder(target).file("bomb", b"")
    b.manifest["changes"][0]["size"] = size
    text = __import__("json").dumps(b.manifest).encode()
    man = tarfile.TarInfo(".layover/manifest.json")
    man.size = len(text)
    info = b.members[0][0]
    info.size = size
    with open(str(path), "wb") as out:
        z = subprocess.Popen(["zstd", "-q", "-c", "--check", "-19"], stdin=subprocess.PIPE, stdout=out)
        with tarfile.open(fileobj=z.stdin, mode="w|", format=tarfile.PAX_FORMAT) as tf:
            import io
            tf.addfile(man, io.BytesIO(text))
            tf.addfile(info, _Zeros(size))
            # no sums member: the stored-bytes limit must stop the read first
        z.stdin.close()
        assert z.wait() == 0
    return path


@pytest.mark.parametrize("size,limit", [(256 << 20, "100M"),
                                        pytest.param(100 << 30, None, marks=pytest.mark.stress)])
def test_a_zstd_bomb_stops_at_the_stored_bytes_limit_before_anything_is_written(lo, tmp_path, size, limit):
    # 100 GB of zeros in a few MB (stress; the default 64 GiB limit stops
    # it); 256 MiB against --max-stored-bytes 100M here.
    bomb = _bomb(tmp_path / "bomb.tar.zst", lo.target, size)
    assert bomb.stat().st_size < max(size // 1000, 64 << 10)
    before = tree(lo.target, mtimes=True)
    flags = ["--max-stored-bytes", limit] if limit else []
    t0 = time.monotonic()
    r = lo("show", bomb, *flags, timeout=600)
    assert r.returncode == 1 and r.stderr.count(b"\n") == 1, r.stderr
    assert "a zstd bomb?" in err_line(r) and "--max-stored-bytes" in err_line(r), err_line(r)
    # apply takes no limit flags: the default stops the 100 GB one; the twin
    # is refused for its missing sums, after the data was read.
    r = lo("apply", bomb, "--target", lo.target, "--yes", timeout=600)
    assert r.returncode == 1 and ("zstd bomb" in err_line(r) if limit is None else "no .layover/sums" in err_line(r))
    assert tree(lo.target, mtimes=True) == before
    assert time.monotonic() - t0 < 600


@pytest.mark.parametrize("depth", [1000, pytest.param(5000, marks=pytest.mark.stress)])
def test_a_deep_directory_chain_shows_diffs_and_applies(lo, tmp_path, depth):
    b = PatchBuilder(lo.target)
    path = ""
    for _ in range(depth):
        path = path + "/d" if path else "d"
        b.dir(path)
    b.file(path + "/leaf", b"bottom\n")
    patch = b.write(tmp_path / "p.tar.zst")
    r = lo("show", patch, "--no-pager")
    assert r.returncode == 0, err_line(r)
    r = lo("diff", patch, "--stat", "--no-pager")
    assert r.returncode == 1 and b"leaf" in r.stdout, r.stderr[-300:]
    r = lo("apply", patch, "--target", lo.target, "--yes", timeout=600)
    assert r.returncode == 0, err_line(r)
    fd = os.open(str(lo.target), os.O_RDONLY)
    for _ in range(depth):
        nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    with open(os.open("leaf", os.O_RDONLY, dir_fd=fd), "rb") as f:
        assert f.read() == b"bottom\n"
    os.close(fd)


@pytest.mark.parametrize("n", [5000, pytest.param(200_000, marks=pytest.mark.stress)])
def test_many_files_in_one_directory_show_and_apply(lo, tmp_path, n):
    b = PatchBuilder(lo.target).dir("many")
    for i in range(n):
        b.file("many/f%06d" % i, b"")
    patch = b.write(tmp_path / "p.tar.zst")
    r = lo("show", patch, "--no-pager")
    assert r.returncode == 0 and ("%d files" % n).encode() in r.stdout.replace(b",", b""), r.stdout[-300:]
    r = lo("apply", patch, "--target", lo.target, "--yes", timeout=1200)
    assert r.returncode == 0, err_line(r)
    assert len(os.listdir(str(lo.target / "many"))) == n


@pytest.mark.parametrize("n", [2000, pytest.param(100_000, marks=pytest.mark.stress)])
def test_many_hard_links_to_one_inode_show_and_apply(lo, tmp_path, n):
    b = PatchBuilder(lo.target).dir("h").file("h/0", b"shared\n")
    for i in range(1, n):
        info = tarfile.TarInfo("h/%d" % i)
        info.type, info.linkname = tarfile.LNKTYPE, "h/0"
        b.file("h/%d" % i, b"shared\n", member=False).raw_member(info)
    patch = b.write(tmp_path / "p.tar.zst")
    assert lo("show", patch, "--no-pager").returncode == 0
    before = tree(lo.target)
    r = lo("apply", patch, "--target", lo.target, "--yes", timeout=1200)
    if r.returncode != 0:
        # More links than the filesystem allows (ext4: 65,000): one line,
        # found while staging, and nothing applied.
        assert r.stderr.count(b"\n") == 1 and "Too many links; nothing was applied" in err_line(r), r.stderr
        assert tree(lo.target) == before
        return
    st = os.stat(str(lo.target / "h" / "0"))
    assert st.st_nlink == n and os.stat(str(lo.target / "h" / str(n - 1))).st_ino == st.st_ino
