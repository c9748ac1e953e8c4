"""attack34: the C++ of the last stop, attacked from inside the sandbox and
by a hostile patch (the free-space floor, the seccomp refusal of allocating
fallocate, rename notes, the merge budget, recovery of killed runs)."""
from conftest import fs_space

MIB = 1 << 20

# The same space reservation as fallocate(2), by ioctl: the kernel's generic
# FS_IOC_RESVSP/RESVSP64 and FS_IOC_ZERO_RANGE (fs/ioctl.c) call
# vfs_fallocate on any regular file, overlayfs's too. struct space_resv:
# l_type, l_whence, l_start, l_len, l_sysid, l_pid, l_pad[4] (48 bytes).
RESERVE = r'''
import fcntl, os, struct, sys
reqs = {"resvsp": 0x40305828, "resvsp64": 0x4030582a, "zero": 0x40305839}
for name, req in reqs.items():
    f = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.ioctl(f, req, struct.pack("@hhqqiI4i", 0, 0, 0, 1 << 30, 0, 0, 0, 0, 0, 0))
        print(name, "ok", flush=True)
    except OSError as e:
        print(name, "errno=%d" % e.errno, flush=True)
'''


def test_an_ioctl_reservation_cannot_take_the_disk_past_the_floor(disk_lo):
    # attack32 refused an allocating fallocate(2); the kernel's ioctls that
    # reserve space (FS_IOC_RESVSP, FS_IOC_RESVSP64, FS_IOC_ZERO_RANGE) are
    # the same call by another door: 1 GiB at once, 64 MiB above the floor,
    # between two looks of the floor.
    (disk_lo.target / "reserve.py").write_text(RESERVE)
    floor = fs_space(disk_lo.state)[1] - 64 * MIB
    r = disk_lo.run("/usr/bin/python3 reserve.py", "--min-free", str(floor), session="resv", timeout=300)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert out.splitlines() == ["resvsp errno=95", "resvsp64 errno=95", "zero errno=95"], (out, err)
    assert r.returncode == 0, err
    upper = disk_lo.upper("resv")
    for name in ("resvsp", "resvsp64", "zero"):
        assert (upper / name).stat().st_blocks * 512 < 64 * MIB, name
        assert not (disk_lo.target / name).exists()
