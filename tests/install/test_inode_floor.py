"""--min-free's inode floor (docs/design.md, "The free-space floor"): a
command making empty files runs a filesystem out of inodes long before it
uses the bytes of the byte floor, and then every program on the machine
gets ENOSPC. Here on a real ext4 with few inodes (mkfs.ext4 -N), loop-mounted
as root (so in this suite, which runs as root under `make test`); layover
runs as the throwaway uid with its state dir and target on that filesystem."""
import json
import os
import re
import shutil

import pytest

from conftest import BUILD, ROOT, as_user, sh

# What the floors' refusals tell to do (helper/sandbox/limits/disk_floor.cc): a discarded session stays in the trash.
FREE_FIX = ("('layover discard NAME --now' deletes a session at once, one in the trash too; "
            "'layover gc --trash' empties the trash)")

# More files than the filesystem has inodes; "finished" only if nothing stopped it.
MAKER = "i=0; while [ $i -lt 20000 ]; do : > e$i; i=$((i+1)); done; echo finished"


def inode_floor(files):
    """The default: 5% of the filesystem's inodes, 10000-1000000, never over a quarter of them."""
    return min(max(files // 20, 10000), 1000000, files // 4)


def need_root():
    """Fail (or, with LAYOVER_ALLOW_SKIP=1, skip) when not root: mounts need root."""
    if not ROOT:
        if os.environ.get("LAYOVER_ALLOW_SKIP") == "1":
            pytest.skip("a mount needs root")
        pytest.fail("a mount needs root (set LAYOVER_ALLOW_SKIP=1 to skip)")


@pytest.fixture
def few_inodes(real_dir):
    """(state dir, target) on a fresh 128M ext4 of 16384 inodes, owned by the throwaway uid."""
    need_root()
    image, mnt = real_dir / "fs.img", real_dir / "mnt"
    with open(image, "wb") as f:
        f.truncate(128 << 20)
    sh("mkfs.ext4", "-q", "-N", "16384", "-m", "0", image)
    mnt.mkdir()
    sh("mount", "-o", "loop", image, mnt)
    try:
        state, target = mnt / "state", mnt / "home"
        state.mkdir(mode=0o700)
        target.mkdir(mode=0o755)
        (target / "notes.txt").write_text("one\n")
        uid = int(os.environ["LAYOVER_TEST_UID"])
        for p in (state, target, target / "notes.txt"):
            os.chown(p, uid, uid)
        yield state, target
    finally:
        sh("umount", mnt, check=False)
        shutil.rmtree(real_dir / "mnt", ignore_errors=True)
        image.unlink()


def layover(state, target, *args):
    return as_user(BUILD / "layover", *args, cwd=target, extra={"LAYOVER_STATE_DIR": state, "HOME": target})


def run(state, target, session, *extra):
    return layover(state, target, "run", "--target", target, "--on-exit", "keep", "--session", session, *extra,
                   "--", "/bin/sh", "-c", MAKER)


def test_a_maker_of_empty_files_is_stopped_at_the_inode_floor_and_its_session_kept(few_inodes):
    state, target = few_inodes
    st = os.statvfs(state)
    floor = inode_floor(st.f_files)
    assert 0 < floor < st.f_favail < 20000, (floor, st.f_favail)
    r = run(state, target, "many")
    err = r.stderr.decode()
    assert r.returncode == 125, err
    assert b"finished" not in r.stdout
    line = [ln for ln in err.splitlines() if "inode floor" in ln]
    assert len(line) == 1, err
    m = re.fullmatch(r"layover: the inode floor %d \(the default: 5%% of the filesystem's inodes, 10000-1000000\) "
                     r"reached \(([0-9]+) inodes free on the filesystem of %s, the state dir\): sandbox stopped; "
                     r"remove files there and resume the session, or turn the floors off with --min-free none"
                     % (floor, re.escape(str(state))), line[0])
    assert m, line
    assert int(m.group(1)) < floor
    assert "session 'many' kept" in err, err
    meta = json.loads((state / "sessions" / "many" / "meta.json").read_text())
    assert meta["stopped"] == line[0][len("layover: "):]
    assert meta["limits"]["min_free_inodes"] == floor
    # The files it made are in the session, not in the real tree.
    made = [p.name for p in (state / "sessions" / "many" / "upper").iterdir() if p.name.startswith("e")]
    assert 1000 < len(made) < 20000, len(made)
    assert all((state / "sessions" / "many" / "upper" / n).stat().st_size == 0 for n in made[:100])
    assert not (target / "e0").exists()
    # The filesystem kept inodes: the stop came within half the floor of it.
    left = os.statvfs(state).f_favail
    assert left > floor // 2, (left, floor)
    r = layover(state, target, "status", "many")
    assert r.returncode == 0 and b"e0" in r.stdout, r.stdout + r.stderr
    # Below the floor now: the next run refuses to start, and says what to do.
    r = run(state, target, "more")
    assert r.returncode == 125, r.stderr
    assert r.stderr.decode() == (
        "layover: only %d inodes free on the filesystem of %s (the state dir, which holds the sessions), below the "
        "inode floor %d (the default: 5%% of the filesystem's inodes, 10000-1000000); remove files there %s, or pass "
        "--min-free none\n" % (left, state, floor, FREE_FIX))
    assert not (state / "sessions" / "more").exists()
    # Discarding the session gives the inodes back.
    assert layover(state, target, "discard", "many", "--now").returncode == 0
    assert os.statvfs(state).f_favail > left + 1000


def test_min_free_none_turns_the_inode_floor_off_too(few_inodes):
    state, target = few_inodes
    r = run(state, target, "none", "--min-free", "none")
    # Nothing stops it: it makes files until the filesystem has no inode left (ENOSPC; sh exits 2 on a failed
    # redirection of ':').
    assert r.returncode == 2 and b"No space left on device" in r.stderr, r.stderr
    assert b"inode floor" not in r.stderr and b"finished" not in r.stdout
    assert os.statvfs(state).f_favail < 100
    meta = json.loads((state / "sessions" / "none" / "meta.json").read_text())
    assert meta["limits"]["min_free"] == 0 and meta["limits"]["min_free_inodes"] == 0


def test_an_explicit_byte_floor_keeps_the_inode_floor(few_inodes):
    state, target = few_inodes
    r = run(state, target, "bytes", "--min-free", "1M")
    assert r.returncode == 125 and b"layover: the inode floor " in r.stderr, r.stderr
    meta = json.loads((state / "sessions" / "bytes" / "meta.json").read_text())
    assert meta["limits"]["min_free"] == 1 << 20
    assert meta["limits"]["min_free_inodes"] == inode_floor(os.statvfs(state).f_files)


def test_a_filesystem_without_an_inode_count_gets_no_inode_floor(real_dir):
    """tmpfs with nr_inodes=0 reports f_files 0, as btrfs and some FUSE filesystems do: no inode floor, the run goes."""
    need_root()
    mnt = real_dir / "mnt"
    mnt.mkdir()
    sh("mount", "-t", "tmpfs", "-o", "size=512m,nr_inodes=0,mode=755", "none", mnt)
    try:
        assert os.statvfs(mnt).f_files == 0
        state, target = mnt / "state", mnt / "home"
        state.mkdir(mode=0o700)
        target.mkdir()
        uid = int(os.environ["LAYOVER_TEST_UID"])
        for p in (state, target):
            os.chown(p, uid, uid)
        r = layover(state, target, "run", "--target", target, "--on-exit", "keep", "--session", "plain", "--",
                    "/bin/sh", "-c", "echo x > x.txt")
        assert r.returncode == 0, r.stderr
        meta = json.loads((state / "sessions" / "plain" / "meta.json").read_text())
        assert meta["limits"]["min_free_inodes"] == 0 and meta["limits"]["min_free"] > 0
        assert (state / "sessions" / "plain" / "upper" / "x.txt").read_text() == "x\n"
    finally:
        sh("umount", mnt, check=False)
