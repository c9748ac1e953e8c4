"""The per-hunk and merge rows of `make bench` (issue 24): save with the
originals against `save --no-originals` (time and size), a clean 3-way apply
against a plain one, and `apply -p` of a 10,000-hunk patch until its first
hunk is on the terminal (through a pty). Each rep checks its result."""
import json
import os
import pty
import select
import subprocess
import time

import core
from core import Contender, Failed, check

# 1,000 files of 640 lines x 64 B = 40 KiB; the agent edits lines 10 and 40.
TREE_CODE = r'''
import os, random, sys
n = int(sys.argv[1]); r = random.Random(5)
for i in range(n):
    d = "d%02d" % (i // 100)
    if i % 100 == 0:
        os.makedirs(d)
    with open("%s/t%05d.txt" % (d, i), "w") as f:
        f.writelines("%04d %s\n" % (j, r.randbytes(29).hex()) for j in range(640))
'''
EDIT_CODE = r'''
import sys
n, at, what = int(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")], sys.argv[3]
for i in range(n):
    p = "d%02d/t%05d.txt" % (i // 100, i)
    with open(p) as f:
        lines = f.readlines()
    for a in at:
        lines[a] = "%s line %d of file %d\n" % (what, a, i)
    with open(p, "w") as f:
        f.writelines(lines)
'''
# One file whose every 8th line the agent changes: one hunk each.
MANY_CODE = r'''
import sys
n = int(sys.argv[1])
lines = ["%06d a line of the base\n" % j for j in range(8 * n)]
if sys.argv[2] == "edit":
    for h in range(n):
        lines[8 * h + 4] = "%06d edited by the agent\n" % (8 * h + 4)
with open("many.txt", "w") as f:
    f.writelines(lines)
'''


def manifest(patch):
    out = subprocess.run(["tar", "--zstd", "-xOf", patch, ".layover/manifest.json"], capture_output=True)
    if out.returncode != 0:
        raise Failed("cannot read the manifest of %s" % patch)
    return json.loads(out.stdout)


def originals(b, n):
    """(a) save with originals vs --no-originals; (b) a clean 3-way apply vs a plain apply."""
    tree, moved = b.p("h40"), b.p("h40-moved")
    os.makedirs(tree)
    check(["python3", "-c", TREE_CODE, str(n)], cwd=tree)
    b.sandbox(tree, "h40", EDIT_CODE, str(n), "10,40", "edited")
    with_o, without = b.p("h40-orig.tar.zst"), b.p("h40-plain.tar.zst")

    def verify(path, want):
        def v():
            m = manifest(path)
            got = len(m.get("originals", []))
            if got != want or sum(1 for c in m["changes"] if c["kind"] == "modified") != n:
                raise Failed("%s: %d originals and %d changes, expected %d and %d" % (
                    os.path.basename(path), got, len(m["changes"]), want, n))
        return v

    lay = Contender("layover save", [b.lay, "save", "h40", "-o", with_o], prepare=lambda: core_rm(with_o),
                    verify=verify(with_o, n))
    peer = Contender("save --no-originals", [b.lay, "save", "h40", "--no-originals", "-o", without],
                     prepare=lambda: core_rm(without), verify=verify(without, 0))
    b.measure([lay, peer])
    goal = "save with originals, %s x 40 KiB modified" % b.thousands(n)
    b.res.ratio(goal, lay, peer, 1.3)
    core.size_ratio(b.res, "patch size with originals", os.path.getsize(with_o), os.path.getsize(without),
                    "--no-originals", 1.6)

    # The real tree moved on (line 600 of every file), no overlap with the agent's lines 10 and 40.
    check(["cp", "-a", tree, moved])
    check(["python3", "-c", EDIT_CODE, str(n), "600", "moved"], cwd=moved)
    cur = {}

    def fresh(kind, src):
        cur[kind] = b.p("h40-apply-%s" % kind)
        core_rm(cur[kind])
        check(["cp", "-a", src, cur[kind]])

    def expect(kind, moved_too):
        def v():
            for i in range(0, n, max(1, n // 50)):
                with open(os.path.join(cur[kind], "d%02d/t%05d.txt" % (i // 100, i))) as f:
                    text = f.read()
                if ("edited line 10 of file %d\n" % i) not in text or \
                        (("moved line 600 of file %d\n" % i) in text) != moved_too:
                    raise Failed("t%05d.txt does not hold the %s result" % (i, "merged" if moved_too else "applied"))
        return v

    merge = Contender("layover apply (3-way)", lambda: [b.lay, "apply", with_o, "--target", cur["m"], "--yes"],
                      prepare=lambda: fresh("m", moved), verify=expect("m", True))
    plain = Contender("layover apply (plain)", lambda: [b.lay, "apply", with_o, "--target", cur["p"], "--yes"],
                      prepare=lambda: fresh("p", tree), verify=expect("p", False))
    b.measure([merge, plain])
    b.res.ratio("clean 3-way apply, %s files" % b.thousands(n), merge, plain, 2.0)
    for k in ("m", "p"):
        core_rm(cur[k])


def first_hunk(argv):
    """Seconds from the start of argv on a pty until it asks about the first hunk; then `q`."""
    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    out, dt = b"", None
    try:
        while True:
            r, _, _ = select.select([fd], [], [], 60)
            if not r:
                raise Failed("apply -p asked nothing within 60 s")
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            out += chunk
            if dt is None and b"Apply this hunk" in out:
                dt = time.perf_counter() - t0
                os.write(fd, b"q\n")
    finally:
        os.close(fd)
        _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if dt is None or code != 0 or b"no change chosen" not in out or b"+000004 edited by the agent" not in out:
        raise Failed("apply -p exited %d: %s" % (code, out[-300:].decode(errors="replace")))
    return dt


def interactive(b, hunks):
    """(c) apply -p of a patch with `hunks` hunks in one file: time to the first question."""
    tree = b.p("hmany")
    os.makedirs(tree)
    check(["python3", "-c", MANY_CODE, str(hunks), "base"], cwd=tree)
    b.sandbox(tree, "hmany", MANY_CODE, str(hunks), "edit")
    patch = b.p("hmany.tar.zst")
    check([b.lay, "save", "hmany", "-o", patch])
    before = os.stat(os.path.join(tree, "many.txt"))

    def verify():
        st = os.stat(os.path.join(tree, "many.txt"))
        if (st.st_mtime_ns, st.st_size) != (before.st_mtime_ns, before.st_size):
            raise Failed("apply -p then q changed the real file")

    argv = [b.lay, "apply", patch, "--target", tree, "-p"]
    lay = Contender("layover apply -p", None, timer=lambda: first_hunk(argv), verify=verify)
    b.measure([lay])
    core.absolute(b.res, "apply -p, %s hunks: first hunk shown" % b.thousands(hunks), lay, 0.2)


def core_rm(path):
    if os.path.lexists(path):
        subprocess.run(["rm", "-rf", path], check=False)


def run(b, guarded):
    n = 20 if b.smoke else 300 if b.quick else 1000
    hunks = 50 if b.smoke else 2000 if b.quick else 10000
    guarded(b.res, "save with originals", originals, b, n)
    guarded(b.res, "apply -p first hunk", interactive, b, hunks)
