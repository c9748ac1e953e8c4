"""attack32: a hostile agent against the code merged in the recovery2,
attack31 and diskguard passes. State dir and target on a real filesystem
under /home (the free-space floor watches the state dir's)."""
import os
import shutil

import pytest

from conftest import Layover, real_dir

MIB = 1 << 20


@pytest.fixture
def alo(require_sandbox):
    state, target = real_dir("a32-state-"), real_dir("a32-home-")
    os.chmod(state, 0o700)
    (target / "notes.txt").write_text("one\n")
    yield Layover(state, target)
    shutil.rmtree(state, ignore_errors=True)
    shutil.rmtree(target, ignore_errors=True)


def avail(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


# fallocate(2) itself (util-linux's fallocate calls it, no fallback), then
# glibc's posix_fallocate, which writes a byte per block where the call is
# refused.
ALLOC = ('fallocate -l 1G big; echo "fallocate=$?"; '
         '/usr/bin/python3 -c "import os; f = os.open(\'small\', os.O_WRONLY | os.O_CREAT, 0o644); '
         'os.posix_fallocate(f, 0, 1 << 20)"; echo "posix=$?"; '
         'fallocate -p -o 0 -l 4096 small; echo "punch=$?"')


def test_one_fallocate_cannot_take_the_disk_past_the_floor(alo):
    # The floor is looked at every 25-250 ms: one fallocate(2) reserved any
    # size at once (1 GiB here, 64 MiB above the floor: the whole free space
    # with a size of avail), between two looks, and the disk stayed full
    # after the stop, the file kept in the session. A call that allocates is
    # now refused (EOPNOTSUPP): a writer allocates by writing, one
    # interval's writing at a time, as docs/security.md says.
    if not shutil.which("fallocate"):
        pytest.skip("no fallocate(1)")
    floor = avail(alo.state) - 64 * MIB
    r = alo.run(ALLOC, "--min-free", str(floor), session="alloc", timeout=300)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert "fallocate=1" in out, (out, err)
    assert "Operation not supported" in err, err
    assert "posix=0" in out and "punch=0" in out, (out, err)
    assert r.returncode == 0, err
    upper = alo.upper("alloc")
    st = (upper / "big").stat()
    assert st.st_blocks * 512 < 64 * MIB, st
    assert (upper / "small").stat().st_size == MIB
    assert not (alo.target / "big").exists()
