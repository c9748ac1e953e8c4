"""attack51: a new tree's files are created with their own permission bits
(apply's fifth pass): set-id bits in the patch are never created, a 0000
file is written whole, and an umask of 000 or 077 or a default ACL on the
target leave the applied modes exactly the patch's. Checked on the real
filesystem."""
import os
import stat
import subprocess

import pytest
from conftest import real_dir

SCRIPT = ("mkdir -p new/sub new/sticky && echo suid > new/suid && chmod 4755 new/suid && "
          "echo sgid > new/sub/sgid && chmod 2750 new/sub/sgid && echo none > new/sub/none && chmod 0 new/sub/none && "
          "echo all > new/all && chmod 777 new/all && chmod 1777 new/sticky && chmod 2775 new/sub && "
          "echo in > new/sticky/f && chmod 604 new/sticky/f")
WANT = {"suid": 0o755, "sub/sgid": 0o750, "sub/none": 0o000, "all": 0o777, "sticky": 0o1777, "sub": 0o775,
        "sticky/f": 0o604}


def _modes(top):
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            out[os.path.relpath(p, top)] = stat.S_IMODE(os.lstat(p).st_mode)
    return out


@pytest.mark.parametrize("umask,acl", [(0o000, False), (0o077, False), (0o022, True)])
def test_a_new_trees_modes_are_the_patchs_and_no_set_id_bit_is_created(lo, umask, acl):
    proj = real_dir("modes-")
    if acl:
        r = subprocess.run(["setfacl", "-d", "-m", "u::rwx,g::---,o::---,u:nobody:rwx,m::rwx", str(proj)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip("no ACLs here: " + r.stderr)
    r = lo("run", "--target", proj, "--session", "s", "--on-exit", "keep", "--", "/bin/sh", "-c",
           "cd %s && %s" % (proj, SCRIPT))
    assert r.returncode == 0, r.stderr
    old = os.umask(umask)
    try:
        r = lo("apply", "s", "--target", proj, "--yes")
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stderr
    modes = _modes(proj / "new")
    for path, mode in WANT.items():
        assert modes[path] == mode, (path, oct(modes[path]), oct(mode))
    assert not any(m & (stat.S_ISUID | stat.S_ISGID) for m in modes.values()), modes
    os.chmod(proj / "new/sub/none", 0o600)
    assert (proj / "new/sub/none").read_text() == "none\n"
    assert (proj / "new/suid").read_text() == "suid\n"
