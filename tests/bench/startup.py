"""The start-up rows of `make bench`: `layover run` of /bin/true against
bwrap with the same isolation (and our seccomp filter), bwrap minimal, and
the floor (unshare + maps + one overlay mount + exec, compiled here).
b is bench.py's Bench."""
import os
import shutil
import subprocess

from core import Contender, Failed, compile_c

# The tiny start-up floor: unshare + maps + one overlay mount + exec.
FLOOR_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
static void put(const char *p, const char *s) { int f = open(p, O_WRONLY); if (f < 0 || write(f, s, 0 + __builtin_strlen(s)) < 0) _exit(90); close(f); }
int main(int argc, char **argv) {
    char m[64]; uid_t u = getuid(); gid_t g = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) return 91;
    put("/proc/self/setgroups", "deny");
    snprintf(m, sizeof m, "0 %d 1", u); put("/proc/self/uid_map", m);
    snprintf(m, sizeof m, "0 %d 1", g); put("/proc/self/gid_map", m);
    char opts[4096];
    snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", argv[1], argv[2], argv[3]);
    if (mount("overlay", argv[1], "overlay", 0, opts)) return 92;
    execv(argv[4], argv + 4);
    return 93;
}
"""


def rows(b):
    target = b.p("small")
    reps = 1 if b.smoke else b.reps * 3
    lay = Contender("layover run", [b.lay, "run", "--quiet", "--target", target, "--on-exit", "discard", "--",
                                    "/bin/true"])
    bwrap = shutil.which("bwrap")
    if bwrap:
        bwrap_rows(b, bwrap, lay, target, reps)
    elif b.smoke:
        print("  (smoke: bwrap not installed; its rows are left out)", flush=True)
    else:
        raise Failed("bwrap not installed (tests/bench.sh installs it; no root or network?)")
    floor = floor_binary(b)
    if floor:
        lower, upper, work = b.p("fl-lower"), b.p("fl-upper"), b.p("fl-work")
        for d in (lower, upper, work):
            os.makedirs(d, exist_ok=True)
        fl = Contender("unshare + maps + overlay + exec", [floor, lower, upper, work, "/bin/true"])
        b.measure([lay, fl], reps)
        b.res.ratio("start-up vs the floor (info)", lay, fl, None)


def bwrap_rows(b, bwrap, lay, target, reps):
    same = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    if bwrap_has_overlay(bwrap):
        os.makedirs(b.p("bw-upper"), exist_ok=True)
        same += ["--overlay-src", target, "--tmp-overlay", target]
    else:
        same += ["--tmpfs", target]
    # Our command's seccomp filter, handed to bwrap as it takes one: an fd
    # opened afresh for each rep (bwrap reads it to the end).
    bpf, fd = seccomp_file(b), {}

    def open_bpf():
        if "fd" in fd:
            os.close(fd.pop("fd"))
        fd["fd"] = os.open(bpf, os.O_RDONLY)

    if bpf:
        peer = Contender("bwrap, same isolation + our seccomp",
                         lambda: same + ["--seccomp", str(fd["fd"]), "/bin/true"], prepare=open_bpf,
                         pass_fds=lambda: (fd["fd"],))
    else:
        peer = Contender("bwrap, same isolation", same + ["/bin/true"])
    minimal = Contender("bwrap minimal", [bwrap, "--unshare-all", "--dev-bind", "/", "/", "/bin/true"])
    b.measure([lay, peer, minimal], reps)
    if "fd" in fd:
        os.close(fd.pop("fd"))
    b.res.ratio("start-up vs bwrap, same isolation", lay, peer, 1.0,
                   note="" if bpf else "bwrap without our seccomp filter (layover --export-seccomp failed)")
    b.res.ratio("start-up vs bwrap minimal", lay, minimal, 1.2)


def seccomp_file(b):
    """The command's seccomp deny table as BPF (`layover --export-seccomp`), or None."""
    path = b.p("filter.bpf")
    with open(path, "wb") as f:
        r = subprocess.run([b.lay, "--export-seccomp"], stdout=f, stderr=subprocess.DEVNULL)
    return path if r.returncode == 0 and os.path.getsize(path) > 0 else None


def floor_binary(b):
    return compile_c(FLOOR_C, b.p("floor"))


def bwrap_has_overlay(bwrap):
    out = subprocess.run([bwrap, "--help"], capture_output=True).stdout
    return b"--tmp-overlay" in out
