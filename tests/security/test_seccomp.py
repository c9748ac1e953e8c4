"""The command's seccomp filter (issue 14): each denied syscall fails inside
with its errno, and the same call with the test-only LAYOVER_TEST_NO_SECCOMP=1
shows what the filter adds. Mount changes by every API fail either way: the
mounts are locked, not merely filtered (newmount.c, from a nested user
namespace the filter would have refused)."""
import os
import shutil
import subprocess

import pytest

from conftest import missing_feature

PY = "/usr/bin/python3"
EPERM, ENOENT, EBADF, EINVAL, ENOSYS = 1, 2, 9, 22, 38
NEWUSER = 0x10000000

# (name, x86_64 number, args, control). Each call runs in a forked child, so
# one that succeeds without the filter (unshare, clone, ptrace) changes
# nothing for the next. control: without the filter the kernel does not
# answer EPERM (args it refuses before any privilege check, or a call it
# allows); None where the kernel itself would refuse an unprivileged caller
# with EPERM first (tests/unit/test_seccomp.cc proves the filter's part there
# with a marker errno, and newmount.c does for the mount API from a nested
# user namespace).
CALLS = [
    ("ptrace", 101, (0, 0, 0, 0), True),  # PTRACE_TRACEME: allowed to anyone
    ("process_vm_readv", 310, (0, 0, 0, 0, 0, 1), True),  # flags 1: EINVAL
    ("process_vm_writev", 311, (0, 0, 0, 0, 0, 1), True),
    ("kcmp", 312, (0, 0, 0, 0, 0), True),  # pid 0: ESRCH
    ("keyctl", 250, (0, 0, 0, 0, 0), True),
    ("add_key", 248, (0, 0, 0, 0, 0), True),  # NULL type: EFAULT
    ("request_key", 249, (0, 0, 0, 0), True),
    ("bpf", 321, (0, 0, 0), None),  # kernel.unprivileged_bpf_disabled
    ("perf_event_open", 298, (0, 0, -1, -1, 0), True),  # NULL attr: EFAULT
    ("userfaultfd", 323, (3,), True),  # UFFD_USER_MODE_ONLY | a bad flag: EINVAL
    ("io_uring_setup", 425, (1, 0), "io_uring"),  # NULL params: EFAULT
    ("io_uring_enter", 426, (-1, 0, 0, 0, 0, 0), True),  # EBADF
    ("io_uring_register", 427, (-1, 0, 0, 0), True),
    ("fsopen", 430, (0, 0), None),
    ("fsconfig", 431, (-1, 0, 0, 0, 0), True),  # fd -1: EINVAL before any check
    ("fsmount", 432, (-1, 0, 0), None),
    ("fspick", 433, (-100, 0, 0), None),
    ("move_mount", 429, (-1, 0, -100, 0, 0), None),
    ("open_tree", 428, (-100, 0, 0), True),  # no clone, no privilege check: EFAULT
    ("mount_setattr", 442, (-100, 0, 0, 0, 0), True),  # size 0: EINVAL
    ("open_by_handle_at", 304, (-100, 0, 0), None),
    ("name_to_handle_at", 303, (-100, 0, 0, 0, 0), True),  # NULL path: EFAULT
    ("unshare", 272, (NEWUSER,), True),
    ("clone", 56, (NEWUSER | 17, 0, 0, 0, 0), True),  # SIGCHLD; the child exits at once
    ("clone3", 435, (0, 0), True),  # EINVAL without the filter
    ("kexec_load", 246, (0, 0, 0, 0), None),
    ("kexec_file_load", 320, (-1, -1, 0, 0, 0), None),
    ("init_module", 175, (0, 0, 0), None),
    ("finit_module", 313, (-1, 0, 0), None),
    ("delete_module", 176, (0, 0), None),
    ("reboot", 169, (0, 0, 0, 0), None),
    ("swapon", 167, (0, 0), None),
    ("swapoff", 168, (0,), None),
    ("acct", 163, (0,), None),
    ("quotactl", 179, (0, 0, 0, 0), True),  # no device: ENODEV
]
DENIED_WITH = {"clone3": ENOSYS}

# Each call in a forked child; prints "NAME ok" or "NAME errno=N".
BATCH = """import ctypes,os,sys
libc=ctypes.CDLL(None,use_errno=True)
for spec in sys.argv[1:]:
    name,nr,args=spec.split(':')
    args=[ctypes.c_long(int(a)) for a in [nr]+(args.split(',') if args else [])]
    pid=os.fork()
    if pid==0:
        rc=libc.syscall(*args)
        if rc==0 and name=='clone': os._exit(0)  # the clone's own child
        print(name, 'ok' if rc!=-1 else 'errno=%d' % ctypes.get_errno(), flush=True)
        os._exit(0)
    _,st=os.waitpid(pid,0)
    if st: print(name, 'status=%d' % st, flush=True)
"""

_batches = {}


@pytest.fixture(autouse=True)
def x86_64_only():
    if os.uname().machine != "x86_64":
        missing_feature("these cases use x86_64 syscall numbers")


def no_filter(filtered):
    return None if filtered else {"LAYOVER_TEST_NO_SECCOMP": "1"}


def batch(sh, filtered):
    """Every call of CALLS in one sandbox, with or without the filter."""
    if filtered not in _batches:
        specs = ["%s:%d:%s" % (n, nr, ",".join(map(str, a))) for n, nr, a, _ in CALLS]
        r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", PY, "-c", BATCH, *specs,
                  env=no_filter(filtered))
        assert r.returncode == 0, r.stderr
        lines = dict(l.split(" ", 1) for l in r.stdout.decode().splitlines())
        assert sorted(lines) == sorted(n for n, *_ in CALLS), r.stdout
        _batches[filtered] = lines
    return _batches[filtered]


@pytest.mark.parametrize("name", [c[0] for c in CALLS])
def test_denied_syscall_fails_with_its_errno(sh, name):
    assert batch(sh, True)[name] == "errno=%d" % DENIED_WITH.get(name, EPERM)


@pytest.mark.parametrize("name", [c[0] for c in CALLS if c[3]])
def test_without_the_filter_the_kernel_would_not_refuse(sh, name):
    control = dict((c[0], c[3]) for c in CALLS)[name]
    if control == "io_uring" and open("/proc/sys/kernel/io_uring_disabled").read().strip() != "0":
        pytest.fail("kernel.io_uring_disabled is set: io_uring_setup has no control here")
    got = batch(sh, False)[name]
    assert got != "errno=%d" % EPERM and got != "errno=%d" % DENIED_WITH.get(name, EPERM), got
    if name in ("ptrace", "unshare", "clone"):
        assert got == "ok", got  # a call the kernel allows: only the filter stands in the way


def test_ptrace_attach_of_a_sibling_and_of_a_child_is_denied(sh):
    # PTRACE_ATTACH (16) to a sibling (a background sleep) and to a child of
    # the caller (allowed by the kernel even under Yama's scope 1).
    code = ("import ctypes,os,subprocess,sys\nl=ctypes.CDLL(None,use_errno=True)\n"
            "c=subprocess.Popen(['sleep','30'])\n"
            "for p in (int(sys.argv[1]), c.pid):\n"
            " rc=l.ptrace(16, p, 0, 0); print(rc, ctypes.get_errno() if rc else 0, flush=True)\n"
            "c.kill()")
    script = "sleep 30 & p=$!; %s -c \"$1\" $p; kill $p" % PY
    out = {}
    for filtered in (True, False):
        r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", "/bin/sh", "-c", script, "sh", code,
                  env=no_filter(filtered))
        assert r.returncode == 0, r.stderr
        out[filtered] = r.stdout.split()
    assert out[True] == [b"-1", b"1", b"-1", b"1"], out  # EPERM, EPERM
    assert out[False][2:] == [b"0", b"0"], out  # the child: attached without the filter
    yama = "/proc/sys/kernel/yama/ptrace_scope"
    if not os.path.exists(yama) or open(yama).read().strip() == "0":
        assert out[False][:2] == [b"0", b"0"], out  # the sibling too


def test_unshare_user_namespace_fails_and_would_work_without_the_filter(sh):
    script = "unshare -U true; echo rc=$?; unshare -rm true; echo rc2=$?; sh -c 'echo child'"
    r = sh.run(script, target=sh.project, on_exit="discard")
    assert r.stdout == b"rc=1\nrc2=1\nchild\n", (r.stdout, r.stderr)  # ordinary forks still work
    assert b"Operation not permitted" in r.stderr
    r = sh.run(script, target=sh.project, on_exit="discard", env=no_filter(False))
    assert r.stdout == b"rc=0\nrc2=0\nchild\n", (r.stdout, r.stderr)


# TIOCSTI (0x5412), with the high half set (the kernel reads 32 bits), and
# TIOCLINUX (0x541C), on a pty made the caller's controlling terminal (else
# the kernel itself refuses TIOCSTI with EPERM).
TTY = """import ctypes,fcntl,os,pty,termios
libc=ctypes.CDLL(None,use_errno=True)
m,s=pty.openpty()
pid=os.fork()
if pid==0:
    os.setsid(); fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    c=ctypes.c_char(b'x')
    for req in (0x5412, (1<<32)|0x5412, 0x541C):
        rc=libc.syscall(16, s, ctypes.c_ulong(req), ctypes.byref(c))
        print(hex(req), 'ok' if rc==0 else 'errno=%d' % ctypes.get_errno(), flush=True)
    os._exit(0)
os.waitpid(pid,0)
"""


def test_tiocsti_and_tioclinux_are_denied_even_with_the_high_bits_set(sh):
    out = {}
    for filtered in (True, False):
        r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", PY, "-c", TTY,
                  env=no_filter(filtered))
        assert r.returncode == 0, r.stderr
        out[filtered] = dict(l.split(" ") for l in r.stdout.decode().splitlines())
    assert out[True] == {"0x5412": "errno=1", "0x100005412": "errno=1", "0x541c": "errno=1"}, out
    # Without the filter: injected (or EIO where dev.tty.legacy_tiocsti=0);
    # TIOCLINUX is no pty's ioctl.
    assert out[False]["0x5412"] in ("ok", "errno=5") and out[False]["0x100005412"] == out[False]["0x5412"], out
    assert out[False]["0x541c"] != "errno=1", out


def _newmount(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler (cc) to build tests/security/helpers/newmount.c: install gcc")
    src = os.path.join(os.path.dirname(__file__), "helpers", "newmount.c")
    out = tmp_path / "newmount"
    r = subprocess.run([cc, "-O1", "-o", str(out), src], capture_output=True)
    if r.returncode != 0:
        pytest.fail("building newmount.c failed: " + r.stderr.decode(errors="replace"))
    return out


def _run_newmount(sh, tmp_path, filtered):
    staged = sh.root / "newmount"  # the sandbox's /tmp is its own: stage it on a real path
    shutil.copy(_newmount(tmp_path), staged)
    before = (sh.project / "main.py").read_bytes()
    # After the helper, in the sandbox's own namespace: the target is still
    # the overlay (a write lands in the upper layer) and shows its files.
    r = sh.lo("run", "--target", sh.project, "--on-exit", "keep", "--session", "mnt", "--", "/bin/sh", "-c",
              "%s %s; echo after > %s/after.txt; cat %s/main.py" % (staged, sh.project, sh.project, sh.project),
              env=no_filter(filtered))
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode().splitlines()
    assert out[-1] == "print('hi')", out
    lines = dict(l.split(" ", 1) for l in out[:-1])
    assert (sh.project / "main.py").read_bytes() == before
    assert not (sh.project / "after.txt").exists()
    assert (sh.lo.upper("mnt") / "after.txt").read_text() == "after\n"
    return lines


def test_mounts_are_locked_without_the_filter_from_a_nested_user_namespace(sh, tmp_path):
    lines = _run_newmount(sh, tmp_path, filtered=False)
    assert lines["nested"] == "ok", lines  # full capabilities over a copy of the mounts
    locks = {k: v for k, v in lines.items() if k.startswith("lock:")}
    umounts = [k for k in locks if k.startswith("lock:umount:")]
    assert "lock:umount:%s" % sh.project in umounts and len(umounts) >= 5, locks
    failed = {k: v for k, v in locks.items() if v != "ok"}
    assert failed == locks, "a locked mount was changed: %s" % sorted(set(locks) - set(failed))
    for k in umounts + ["lock:bind_root_over_target", "lock:open_tree_clone_root", "lock:move_mount_target_away"]:
        # A host mount under /tmp, /var/tmp, /dev/shm or /dev (a helper's loop
        # mount in /tmp) is listed but covered by the sandbox's own dirs: its
        # path no longer reaches it (ENOENT), which locks it as well.
        covered = any(k.startswith("lock:umount:%s/" % d) for d in ("/tmp", "/var/tmp", "/dev/shm", "/dev"))
        assert locks[k] == "errno=%d" % EINVAL or (covered and locks[k] == "errno=%d" % ENOENT), (k, locks[k])
    for k in ("lock:remount_rw_root", "lock:mount_setattr_root_rw", "lock:mount_setattr_target_suid",
              "lock:reconfigure_root"):
        assert locks[k] == "errno=%d" % EPERM, (k, locks[k])  # locked flags, the host's superblock
    # The new mount API got past its capability check (the bad fd is what
    # failed), and a new mount over the target is the nested namespace's own.
    assert lines["api:fsmount"] == lines["api:move_mount"] == "errno=%d" % EBADF, lines
    assert lines["cover:move_mount_new"] == "ok", lines


def test_umount_and_remount_tools_fail_without_the_filter_even_in_a_nested_namespace(sh):
    t = sh.project
    tries = ("umount %s && echo UMOUNT-OK; umount -l %s && echo LAZY-UMOUNT-OK; "
             "mount -o remount,rw / && echo REMOUNT-RW-OK; mount -o remount,suid %s && echo REMOUNT-SUID-OK; "
             "mount --bind / %s && echo BIND-OK; mount --move %s /tmp && echo MOVE-OK; "
             "umount /home 2>/dev/null; test -e %s/main.py && echo STILL-THERE" % (t, t, t, t, t, t))
    script = "%s; unshare -rm sh -c 'echo NESTED; %s'; echo after > %s/after.txt" % (tries, tries, t)
    r = sh.run(script, target=t, session="tools", env=no_filter(False))
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"STILL-THERE\nNESTED\nSTILL-THERE\n", (r.stdout, r.stderr)  # the nested ns was entered
    assert (t / "main.py").read_text() == "print('hi')\n"
    assert not (t / "after.txt").exists()
    assert (sh.lo.upper("tools") / "after.txt").read_text() == "after\n"


def test_the_filter_refuses_every_mount_api_and_the_nested_namespace(sh, tmp_path):
    lines = _run_newmount(sh, tmp_path, filtered=True)
    assert lines["nested"] == "errno=%d" % EPERM, lines
    assert "ok" not in lines.values(), lines
    for k in ("step:open_tree_target", "step:fspick_root", "lock:open_tree_clone_root", "lock:mount_setattr_root_rw",
              "lock:mount_setattr_target_suid", "api:fsmount", "api:move_mount", "api:fsconfig", "cover:fsopen",
              "cover:open_tree_clone_all"):
        assert lines[k] == "errno=%d" % EPERM, (k, lines[k])
