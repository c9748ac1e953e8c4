"""attack38: the private /tmp's inodes. /tmp, /var/tmp and /dev/shm share one
tmpfs of --tmp-size bytes, but an empty file, dir or short symlink there takes
no page of it: only kernel memory (the inode and its dentry, ~1 KB). With the
kernel's default inode count (half of RAM's pages: 3,085,511 on a 24 GiB
machine) a command made 1,000,000 empty files in /tmp in 3 s: 20 KB of the
2 GiB budget used, ~1 GB more kernel memory (Slab 0.66 -> 1.65 GB), charged
to no process; 3 million would have held ~3 GB, past the budget. The tmpfs
now has one inode per 8 KiB of its size (the kernel's own ratio to RAM)."""

PY = "/usr/bin/python3"

MAKER = ("import os, errno\n"
         "st = os.statvfs('/tmp')\n"
         "n = 0\n"
         "try:\n"
         "    while n < 100000:\n"
         "        os.mknod('/tmp/e%d' % n)\n"
         "        n += 1\n"
         "except OSError as e:\n"
         "    print('stopped', errno.errorcode[e.errno])\n"
         "print(st.f_files, n)\n")


def test_empty_files_in_the_private_tmp_are_bounded_by_its_size(lo):
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--tmp-size", "16M", "--", PY, "-c", MAKER)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().split()
    assert out[:2] == ["stopped", "ENOSPC"], out
    files, made = int(out[2]), int(out[3])
    # 16 MiB / 8 KiB: 2048 inodes, the tmpfs's root and its three dirs among them.
    assert files == 2048, files
    assert 2000 < made < 2048, made


def test_the_default_tmp_size_gets_its_inodes_too(lo):
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", PY, "-c",
           "import os; st = os.statvfs('/tmp'); print(st.f_files, st.f_blocks * st.f_frsize)")
    assert r.returncode == 0, r.stderr
    files, size = map(int, r.stdout.split())
    assert files == size // 8192, (files, size)
