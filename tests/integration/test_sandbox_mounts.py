"""Mount-plan details: submounts under the target, the private tmpfs size,
foreign-owned files, and `layover doctor`."""
import os
import subprocess

import pytest

from conftest import LAYOVER


def test_submount_under_target_is_a_clear_error_and_touches_nothing(lo, home):
    """Since the CVE-2021-3732 fix the kernel refuses an unprivileged overlay
    whose lower tree has (locked) mounts below it. layover must say so, name
    the mount and the fix, and leave nothing behind. An outer user+mount
    namespace lets the unprivileged test own a submount."""
    (home / "mnt").mkdir()
    script = ('mount -t tmpfs none "$T/mnt" && echo data > "$T/mnt/f" && '
              '"$L" run --target "$T" --on-exit keep --session sub -- /bin/sh -c "echo top > top.txt"; '
              'echo rc=$?; "$L" doctor --target "$T"')
    env = dict(lo.env, T=str(home), L=LAYOVER)
    r = subprocess.run(["unshare", "-rm", "/bin/sh", "-c", script], capture_output=True, env=env,
                       stdin=subprocess.DEVNULL, cwd=str(home), timeout=60)
    assert b"rc=125" in r.stdout
    err = r.stderr.decode()
    assert "cannot overlay %s: other filesystems are mounted below it (%s/mnt)" % (home, home) in err
    assert "pick a --target with no mounts below it" in err
    assert "Invalid argument" not in err
    assert "FAIL  no other filesystems mounted below the target" in r.stdout.decode()
    assert not (home / "top.txt").exists()
    assert not lo.session_dir("sub").exists()  # a session that never ran is not left behind


def test_tmp_size_limits_the_private_tmp(lo):
    r = lo.run("df -k /tmp | tail -1 | awk '{print $2}'; head -c 3000000 /dev/zero > /tmp/big 2>/dev/null "
               "|| echo ENOSPC", "--tmp-size", "2M", on_exit="discard")
    total, verdict = r.stdout.decode().split()
    assert int(total) == 2048
    assert verdict == "ENOSPC"
    r = lo("run", "--tmp-size", "lots", "--", "true")
    assert r.returncode == 125 and b"bad --tmp-size" in r.stderr


def test_doctor_passes_here_and_lists_foreign_entries(lo, home):
    r = lo("doctor", "--target", str(home))
    out = r.stdout.decode()
    assert r.returncode == 0, out
    assert "FAIL" not in out
    for item in ("unprivileged user namespaces enabled", "overlayfs mounts with userxattr",
                 "a fresh /proc can be mounted", "state dir supports user.* xattrs",
                 "a fresh /sys can be mounted (the default network's own)"):
        assert "OK    " + item in out
    r = lo("doctor", "--target", "/etc")
    out = r.stdout.decode()
    assert r.returncode == 1
    assert "FAIL  target /etc exists and is yours" in out
    assert "not yours (uid 0): /etc/" in out


def test_foreign_owned_file_cannot_be_changed_and_stays_untouched(lo):
    foreign = os.environ.get("LAYOVER_TEST_FOREIGN")
    if not foreign:
        pytest.skip("needs a root-made fixture (make test as root provides LAYOVER_TEST_FOREIGN)")
    r = lo("run", "--target", foreign, "--on-exit", "discard", "--", "/bin/sh", "-c",
           "echo hacked >> rootfile; echo rc=$?; echo ok >> mine; cat mine", cwd=foreign)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().split()
    assert out[0] != "rc=0"
    assert out[1:] == ["mine", "ok"]
    assert open(os.path.join(foreign, "rootfile")).read() == "root's\n"
    d = lo("doctor", "--target", foreign).stdout.decode()
    assert "rootfile" in d and "not yours (uid 0)" in d
