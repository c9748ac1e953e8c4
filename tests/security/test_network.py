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
    # SIOCGIFFLAGS of lo in the sandbox's namespace.
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


# What the sandbox's /sys shows of the network, and that cpu counts and the
# cgroup tree still read as on the host.
SYS_VIEW = ("import os,json\nnet='/sys/class/net'\nnames=sorted(os.listdir(net))\n"
            "macs=sorted(open(net+'/'+n+'/address').read().strip() for n in names)\n"
            "print(json.dumps({'names':names,'macs':macs,'cpus':os.cpu_count(),"
            "'nproc':os.popen('nproc').read().strip(),'cgroup':sorted(os.listdir('/sys/fs/cgroup')),"
            "'paths':[p for p in %r if os.path.exists(p)]}))")


def _host_net():
    names = sorted(os.listdir("/sys/class/net"))
    real = {n: os.path.realpath("/sys/class/net/" + n) for n in names if n != "lo"}
    macs = {open(p + "/address").read().strip() for p in real.values()} - {"00:00:00:00:00:00"}
    return names, real, macs


def test_sys_shows_only_the_sandbox_network_devices(sh):
    import json
    names, real, macs = _host_net()
    code = SYS_VIEW % sorted(real.values())
    for net in (None, "none"):
        r = run_py(sh, code, net)
        assert r.returncode == 0, r.stderr
        seen = json.loads(r.stdout)
        assert seen["names"] == ["lo"], seen
        assert not macs & set(seen["macs"]), seen
        assert seen["paths"] == [], seen  # e.g. /sys/devices/pci0000:00/.../net/eth0
        assert seen["cpus"] == os.cpu_count() and int(seen["nproc"]) == len(os.sched_getaffinity(0))
        assert seen["cgroup"] == sorted(os.listdir("/sys/fs/cgroup"))
    r = run_py(sh, code, "host")
    seen = json.loads(r.stdout)
    assert seen["names"] == names and set(seen["paths"]) == set(real.values()), seen
    assert macs <= set(seen["macs"])


def test_sys_stays_read_only_and_nodev_inside(sh):
    code = ("import os\nfor p in ('/sys/kernel/uevent_helper','/sys/fs/cgroup/x'):\n"
            " try: open(p,'w'); print('WROTE',p)\n except OSError as e: print(e.errno)\n"
            "opts=[l.split()[5] for l in open('/proc/self/mountinfo') if l.split()[4]=='/sys']\n"
            "print(opts[-1])")
    r = run_py(sh, code)
    lines = r.stdout.decode().split()
    assert "WROTE" not in r.stdout.decode(), r.stdout
    assert lines[0] == lines[1] == "30", lines  # EROFS
    assert set(lines[2].split(",")) >= {"ro", "nosuid", "nodev", "noexec"}, lines


def test_hide_under_sys_covers_the_fresh_one_too(sh):
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--hide", "/sys/class/block", "--", "/bin/sh",
              "-c", "ls -A /sys/class/block | wc -l; ls /sys/class/net")
    assert r.stdout.split() == [b"0", b"lo"], (r.stdout, r.stderr)


def test_a_refused_fresh_sys_fails_the_run_clearly(sh):
    # A partly covered /sys (as in some containers): the kernel refuses a new
    # sysfs; the run must not fall back to the host's and its interfaces.
    from conftest import LAYOVER
    cover = 'mount -t tmpfs none /sys/kernel && exec "$0" "$@"'
    cmd = ["unshare", "-rm", "/bin/sh", "-c", cover, LAYOVER, "run", "--target", str(sh.project), "--on-exit",
           "discard"]
    r = subprocess.run(cmd + ["--", "/bin/sh", "-c", "ls /sys/class/net"], capture_output=True, env=sh.lo.env,
                       cwd=str(sh.project), timeout=60)
    assert r.returncode == 125 and r.stdout == b"", (r.stdout, r.stderr)
    assert b"mounting a fresh /sys" in r.stderr and b"--network host" in r.stderr, r.stderr
    r = subprocess.run(cmd + ["--network", "host", "--", "/bin/true"], capture_output=True, env=sh.lo.env,
                       cwd=str(sh.project), timeout=60)
    assert r.returncode == 0, r.stderr


def test_unknown_network_mode_is_a_usage_error(sh):
    r = sh.lo("run", "--target", sh.project, "--network", "bridge", "--", "true")
    assert r.returncode == 125
    assert b"--network 'bridge'" in r.stderr and b"loopback, none or host" in r.stderr
