"""Deterministic trees for make bench (stdlib only).

The *_CODE strings run inside the sandbox as `python3 -c CODE ARGS` with the
target as working directory (tests/ is not visible in there: it lies under a
private /tmp or /var/tmp). The host builds the diff peer's tree with the same
code, so both sides see identical edits.
"""
import os
import random

# Text-like content that zstd -1 compresses about 2:1 (hex of random bytes),
# neither a best nor a worst case for the compressor.
SMALL_CODE = r'''
import os, random, sys
n = int(sys.argv[1]); r = random.Random(7)
for i in range(n):
    d = "gen/d%02d" % (i // 100)
    if i % 100 == 0:
        os.makedirs(d)
    with open("%s/f%05d.txt" % (d, i), "wb") as f:
        f.write(r.randbytes(2048).hex().encode())
'''

BIG_EDIT_AT = 512 << 20  # the middle of the 1 GiB file (of any size: size // 2)
BIG_EDIT = b"edited inside the sandbox"
MODIFY_BIG_CODE = r'''
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(os.path.getsize(sys.argv[1]) // 2); f.write(%r)
''' % (BIG_EDIT,)

# Edits 2 lines in each of N files spread over the TOTAL-file text tree.
# With STEP and STEPS (a step of a stepped session): only its share, every
# STEPS-th of those files, so all steps together make the same change.
MODIFY_TEXT_CODE = r'''
import sys
n = int(sys.argv[1]); total = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
step, steps = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (0, 1)
for k in range(step, n, steps):
    i = k * (total // n)
    p = "d%02d/t%05d.txt" % (i // 100, i)
    with open(p) as f:
        lines = f.readlines()
    lines[10] = "edited line ten of file %d\n" % i
    lines[40] = "edited line forty of file %d\n" % i
    with open(p, "w") as f:
        f.writelines(lines)
'''

# Inside the sandbox: lstat every file of the tree; prints the seconds it took.
STAT_TREE_CODE = r'''
import os, time
names = [os.path.join(d, f) for d, _, fs in os.walk(".") for f in fs]
t0 = time.perf_counter()
for p in names:
    os.lstat(p)
print(time.perf_counter() - t0)
'''

# Copies every file up without changing it (mtime only): not a change.
TOUCH_CODE = r'''
import os
for d, _, fs in os.walk("."):
    for f in fs:
        os.utime(os.path.join(d, f))
'''


def big_file(path, size):
    r = random.Random(1)
    with open(path, "wb") as f:
        for _ in range(size >> 20):
            f.write(r.randbytes(512 << 10).hex().encode())


def text_tree(root, n):
    r = random.Random(3)
    for i in range(n):
        d = os.path.join(root, "d%02d" % (i // 100))
        if i % 100 == 0:
            os.makedirs(d)
        lines = ["%04d %s\n" % (j, r.randbytes(29).hex()) for j in range(64)]  # 64 x 64 B = 4 KiB
        with open(os.path.join(d, "t%05d.txt" % i), "w") as f:
            f.writelines(lines)


def project_tree(root, files, dirs):
    """An `npm install`-like tree: `files` small files (200 B - 4 KiB, one in
    100 of 64 KiB) spread over `dirs` package dirs of node_modules/."""
    r = random.Random(5)
    per = max(1, files // dirs)
    made = 0
    for d in range(dirs):
        pkg = os.path.join(root, "node_modules", "pkg%04d" % d)
        os.makedirs(pkg)
        for k in range(per if d < dirs - 1 else files - made):
            size = 64 << 10 if (made % 100) == 99 else r.randrange(200, 4096)
            with open(os.path.join(pkg, "m%03d.js" % k), "wb") as f:
                f.write(r.randbytes(size // 2).hex().encode())
            made += 1


def git_repo(root, commits):
    """A git repo of `commits` commits (each edits one of 50 files), packed
    (`git repack -ad`), with its work tree checked out. Needs git."""
    import subprocess
    os.makedirs(root)
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "-c", "init.defaultBranch=main", "init", "-q", root], check=True, env=env)
    out = []
    for i in range(commits):
        body = ("commit %d\n" % i).encode() * 20
        msg = b"change %d\n" % i
        out.append(b"commit refs/heads/main\ncommitter Bench <bench@example.org> %d +0000\n" % (1700000000 + i))
        out.append(b"data %d\n%s" % (len(msg), msg))
        out.append(b"M 100644 inline src/f%02d.txt\ndata %d\n%s\n" % (i % 50, len(body), body))
    subprocess.run(["git", "fast-import", "--quiet"], input=b"".join(out), cwd=root, check=True, env=env)
    subprocess.run(["git", "repack", "-adq"], cwd=root, check=True, env=env)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True, env=env)
