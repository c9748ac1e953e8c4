"""The command's seccomp filter (issue 14): each denied group fails inside
with its errno, and the same call with the test-only LAYOVER_TEST_NO_SECCOMP=1
shows what the filter adds. Mount changes by every API fail either way: the
mounts are locked, not merely filtered."""
import os
import shutil
import subprocess

import pytest

from conftest import missing_feature

PY = "/usr/bin/python3"
EPERM, ENOSYS = 1, 38

# syscall(nr, args...) through ctypes; prints "ok" or the errno.
CALL = ("import ctypes,os,sys\nlibc=ctypes.CDLL(None,use_errno=True)\n"
        "args=[int(a,0) for a in sys.argv[1:]]\n"
        "rc=libc.syscall(*[ctypes.c_long(a) for a in args])\n"
        "print('ok' if rc!=-1 else 'errno=%d' % ctypes.get_errno())")

NR = {"ptrace": 101, "process_vm_readv": 310, "kcmp": 312, "keyctl": 250, "add_key": 248, "bpf": 321,
      "perf_event_open": 298, "userfaultfd": 323, "io_uring_setup": 425, "fsopen": 430, "open_tree": 428,
      "mount_setattr": 442, "open_by_handle_at": 304, "name_to_handle_at": 303, "unshare": 272, "clone3": 435,
      "kexec_load": 246, "init_module": 175, "reboot": 169, "swapon": 167, "acct": 163, "quotactl": 179}


@pytest.fixture(autouse=True)
def x86_64_only():
    if os.uname().machine != "x86_64":
        missing_feature("these cases use x86_64 syscall numbers")


def call(sh, name, *args, filtered=True):
    env = None if filtered else {"LAYOVER_TEST_NO_SECCOMP": "1"}
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", PY, "-c", CALL,
              str(NR[name]), *map(str, args), env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.decode().strip()


def test_ptrace_is_denied_and_would_work_without_the_filter(sh):
    # PTRACE_TRACEME: harmless, and succeeds for any unfiltered process.
    assert call(sh, "ptrace", 0, 0, 0, 0) == "errno=%d" % EPERM
    assert call(sh, "ptrace", 0, 0, 0, 0, filtered=False) == "ok"


def test_ptrace_of_a_sibling_fails(sh):
    r = sh.run("sleep 30 & p=$!; python3 -c 'import ctypes,sys;l=ctypes.CDLL(None,use_errno=True);"
               "print(l.ptrace(16, int(sys.argv[1]), 0, 0), ctypes.get_errno())' $p; kill $p",
               target=sh.project, on_exit="discard")
    assert r.stdout.split() == [b"-1", b"1"], r.stdout  # PTRACE_ATTACH: EPERM


def test_new_user_namespaces_are_denied_by_unshare_clone_and_clone3(sh):
    assert call(sh, "unshare", 0x10000000) == "errno=%d" % EPERM  # CLONE_NEWUSER
    assert call(sh, "unshare", 0x10000000, filtered=False) == "ok"
    assert call(sh, "clone3", 0, 0) == "errno=%d" % ENOSYS
    r = sh.run("unshare -U true; echo rc=$?; unshare -rm true; echo rc2=$?", target=sh.project, on_exit="discard")
    assert b"rc=0" not in r.stdout and b"rc2=0" not in r.stdout
    # Other namespaces are not user namespaces: still denied for lack of caps,
    # and ordinary forks work (clone without CLONE_NEWUSER).
    r = sh.run("sh -c 'echo child' ; echo rc=$?", target=sh.project, on_exit="discard")
    assert r.stdout == b"child\nrc=0\n"


@pytest.mark.parametrize("name,args", [
    ("process_vm_readv", (1, 0, 0, 0, 0, 0)), ("kcmp", (1, 1, 0, 0, 0)), ("keyctl", (0, 0, 0, 0, 0)),
    ("add_key", (0, 0, 0, 0, 0)), ("bpf", (0, 0, 0)), ("perf_event_open", (0, 0, -1, -1, 0)),
    ("userfaultfd", (0,)), ("io_uring_setup", (1, 0)), ("fsopen", (0, 0)), ("open_tree", (-100, 0, 0)),
    ("mount_setattr", (-100, 0, 0, 0, 0)), ("open_by_handle_at", (-100, 0, 0)),
    ("name_to_handle_at", (-100, 0, 0, 0, 0)), ("kexec_load", (0, 0, 0, 0)), ("init_module", (0, 0, 0)),
    ("reboot", (0, 0, 0, 0)), ("swapon", (0, 0)), ("acct", (0,)), ("quotactl", (0, 0, 0, 0)),
])
def test_denied_syscall_returns_eperm(sh, name, args):
    assert call(sh, name, *args) == "errno=%d" % EPERM


def test_userfaultfd_and_io_uring_work_without_the_filter(sh):
    # The control for two of the above: the kernel would have allowed them.
    assert call(sh, "io_uring_setup", 1, 0, filtered=False) != "errno=%d" % EPERM
    assert call(sh, "keyctl", 0, 0, 0, 0, 0, filtered=False) != "errno=%d" % EPERM


def test_tiocsti_is_denied_even_with_the_high_bits_set(sh):
    code = ("import ctypes,os,pty,sys\nlibc=ctypes.CDLL(None,use_errno=True)\nm,s=pty.openpty()\n"
            "c=ctypes.c_char(b'x')\nfor req in (0x5412, (1<<32)|0x5412):\n"
            " rc=libc.syscall(16, s, ctypes.c_ulong(req), ctypes.byref(c))\n"
            " print(rc, ctypes.get_errno())")
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--", PY, "-c", code)
    assert r.stdout.split() == [b"-1", b"1", b"-1", b"1"], (r.stdout, r.stderr)


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


@pytest.mark.parametrize("filtered", [True, False], ids=["filtered", "no-filter"])
def test_no_mount_api_changes_the_sandbox_mounts(sh, tmp_path, filtered):
    binary = _newmount(tmp_path)
    staged = sh.root / "newmount"  # the sandbox's /tmp is its own: stage it on a real path
    shutil.copy(binary, staged)
    env = None if filtered else {"LAYOVER_TEST_NO_SECCOMP": "1"}
    before = (sh.project / "main.py").read_bytes()
    r = sh.lo("run", "--target", sh.project, "--on-exit", "keep", "--session", "mnt", "--", "/bin/sh", "-c",
              "%s %s; echo after > %s/after.txt; ls /" % (staged, sh.project, sh.project), env=env)
    assert r.returncode == 0, r.stderr
    lines = dict(l.split(" ", 1) for l in r.stdout.decode().splitlines()
                 if l.endswith(" ok") or " errno=" in l)
    assert len(lines) >= 7, r.stdout
    assert "ok" not in lines.values(), lines
    if filtered:
        for api in ("fsopen", "open_tree", "mount_setattr_root_rw", "fspick"):
            assert lines[api] == "errno=%d" % EPERM, (api, lines)
    # Still the overlay: the write went to the upper layer, the real tree is as it was.
    assert (sh.project / "main.py").read_bytes() == before
    assert not (sh.project / "after.txt").exists()
    assert (sh.lo.upper("mnt") / "after.txt").read_text() == "after\n"
