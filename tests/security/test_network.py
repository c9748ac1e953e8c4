"""--network loopback (default), none and host (issue 14)."""
import os
import socket
import subprocess

import pytest

from conftest import missing_feature

PY = "/usr/bin/python3"
CONNECT = ("import socket,sys\ns=socket.socket(%s)\ns.settimeout(3)\n"
           "try:\n s.connect(%r); print('CONNECTED')\nexcept OSError as e: print('refused', e.errno)")
SELF_TALK = ("import socket\nsrv=socket.socket(); srv.bind(('127.0.0.1',0)); srv.listen(1)\n"
             "c=socket.create_connection(srv.getsockname(), timeout=3); print('LOOPBACK-OK')")


def run_py(sh, code, network=None):
    extra = ["--network", network] if network else []
    return sh.lo("run", "--target", sh.project, "--on-exit", "discard", *extra, "--", PY, "-c", code)


@pytest.fixture
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    yield srv.getsockname()
    srv.close()


def test_default_is_loopback_up_and_the_host_unreachable(sh, listener):
    r = run_py(sh, SELF_TALK)
    assert r.stdout == b"LOOPBACK-OK\n", r.stderr
    r = run_py(sh, CONNECT % ("", listener))
    assert r.stdout.startswith(b"refused"), r.stdout


def test_network_none_has_no_interface_up(sh, listener):
    r = run_py(sh, SELF_TALK, "none")
    assert b"LOOPBACK-OK" not in r.stdout
    assert r.returncode != 0
    # SIOCGIFFLAGS of lo in the sandbox's namespace (/sys shows the host's).
    code = ("import socket,fcntl,struct\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
            "r=fcntl.ioctl(s.fileno(),0x8913,struct.pack('16sh14x',b'lo',0))\n"
            "print(struct.unpack('16sh14x',r)[1])")
    flags = {net: int(run_py(sh, code, net).stdout) for net in ("none", "loopback")}
    assert not flags["none"] & 0x1, flags  # IFF_UP clear
    assert flags["loopback"] & 0x1, flags
    r = run_py(sh, CONNECT % ("", listener), "none")
    assert r.stdout.startswith(b"refused")


def test_network_host_reaches_a_host_listener(sh, listener):
    r = run_py(sh, CONNECT % ("", listener), "host")
    assert r.stdout == b"CONNECTED\n", r.stderr


def test_network_host_keeps_resolver_config_readable(sh):
    if not os.path.exists("/etc/resolv.conf"):
        missing_feature("/etc/resolv.conf absent on this host")
    with open("/etc/resolv.conf", "rb") as f:
        want = f.read()
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--network", "host", "--", "cat",
              "/etc/resolv.conf")
    assert r.returncode == 0, r.stderr
    assert r.stdout == want


def _landlock_abi():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    v = libc.syscall(444, None, 0, 1)
    return v if v > 0 else 0


def test_network_host_cannot_reach_host_abstract_unix_sockets(sh):
    if _landlock_abi() < 6:
        missing_feature("Landlock ABI 6 (Linux 6.12+) for abstract unix socket scoping; "
                        "docs/security.md describes the gap")
    srv = socket.socket(socket.AF_UNIX)
    name = b"\0layover-test-%d" % os.getpid()
    srv.bind(name)
    srv.listen(1)
    try:
        code = CONNECT % ("socket.AF_UNIX", name)
        r = run_py(sh, code, "host")
        assert r.stdout == b"refused 1\n", r.stdout  # EPERM from Landlock
        # The same client outside connects: the socket is really there.
        out = subprocess.run([PY, "-c", code], capture_output=True, timeout=30)
        assert out.stdout == b"CONNECTED\n"
    finally:
        srv.close()


def test_abstract_sockets_inside_the_sandbox_still_work(sh):
    code = ("import socket\nname=b'\\0inside-only'\ns=socket.socket(socket.AF_UNIX); s.bind(name); s.listen(1)\n"
            "c=socket.socket(socket.AF_UNIX); c.connect(name); print('SAME-DOMAIN-OK')")
    r = run_py(sh, code, "host")
    assert r.stdout == b"SAME-DOMAIN-OK\n", r.stderr


def test_unknown_network_mode_is_a_usage_error(sh):
    r = sh.lo("run", "--target", sh.project, "--network", "bridge", "--", "true")
    assert r.returncode == 125
    assert b"--network 'bridge'" in r.stderr and b"loopback, none or host" in r.stderr
