"""Helpers for the apply/undo integration tests: rich trees, exact tree
comparison (types, modes, bytes, link targets, xattrs, hard-link groups,
optionally mtimes), and hostile patches built from a real one."""
import io
import json
import os
import shutil
import stat
import subprocess
import tarfile
import time
from pathlib import Path

SKIP_TOP = {".layover-undo"}


def edit(lo, script, session=None, *extra):
    """A kept session whose command runs `script` in the target (extra: run's options)."""
    r = lo.run("cd '%s' && %s" % (lo.target, script), *extra, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def status_json(lo, name):
    """`status NAME --json`, by path."""
    r = lo("status", name, "--json", check=True)
    return {c["path"]: c for c in json.loads(r.stdout.decode())}


def paced(lo, layover, name, before, after, host, ready="ready"):
    """One kept run of `before`, then a line read from stdin, then `after`:
    once the session's live upper holds `ready`, the host changes the real
    tree (host()) in between, then the run goes on and must end with 0."""
    script = "cd '%s' && %s && read go && %s" % (lo.target, before, after)
    p = subprocess.Popen([layover, "run", "--target", str(lo.target), "--on-exit", "keep", "--session", name,
                          "--", "/bin/sh", "-c", script], env=lo.env, cwd=str(lo.target),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    marker = lo.upper(name) / ready
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.02)
    assert marker.exists(), p.communicate(timeout=30)
    host()
    out, err = p.communicate(b"go\n", timeout=60)
    assert p.returncode == 0, err


def host_writes(lo, files):
    """A host() for paced(): writes each {relative path: text} in the real tree."""
    def host():
        for rel, text in files.items():
            (lo.target / rel).write_text(text)
    return host


def host_removes(lo, *paths):
    """A host() for paced(): deletes each relative path from the real tree."""
    def host():
        for rel in paths:
            os.remove(lo.target / rel)
    return host


def apply_json(lo, *args):
    """`apply ARGS --target TARGET --yes --json`: (result, parsed output)."""
    r = lo("apply", *args, "--target", lo.target, "--yes", "--json")
    # A failure seen once in CI printed no JSON: show what apply said then.
    assert r.stdout.strip(), (r.returncode, r.stderr.decode(errors="replace"))
    return r, json.loads(r.stdout.decode())


def tree(root, mtimes=False):
    """Every entry under root (bytes paths), as comparable tuples."""
    root = os.fsencode(str(root))
    out = {}
    inodes = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == b".":
            dirnames[:] = [d for d in dirnames if os.fsdecode(d) not in SKIP_TOP]
            filenames = [f for f in filenames if os.fsdecode(f) not in SKIP_TOP]
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(p)
            mode = stat.S_IMODE(st.st_mode)
            try:
                xs = {} if stat.S_ISLNK(st.st_mode) else {
                    k: os.getxattr(p, k, follow_symlinks=False) for k in os.listxattr(p, follow_symlinks=False)
                    if k.startswith("user.")}
            except OSError:
                xs = {}
            if stat.S_ISLNK(st.st_mode):
                entry = ("l", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                entry = ("d", mode, xs)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    entry = ("f", mode, f.read(), xs) + ((st.st_mtime_ns,) if mtimes else ())
                if st.st_nlink > 1:
                    inodes.setdefault(st.st_ino, []).append(rel)
            elif stat.S_ISFIFO(st.st_mode):
                entry = ("p", mode)
            else:
                entry = ("o", st.st_mode)
            out[rel] = entry
    groups = sorted(sorted(g) for g in inodes.values() if len(g) > 1)
    return out, groups


def copy_tree(src, dst):
    """cp -a: keeps fifos, hard links, modes, mtimes and user xattrs."""
    subprocess.run(["cp", "-a", str(src), str(dst)], check=True)
    return dst


def read_patch(path):
    """(manifest dict, [(TarInfo, bytes|None)]) of a layover patch."""
    raw = subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True).stdout
    out = []
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tf:
        for m in tf.getmembers():
            data = tf.extractfile(m).read() if m.isfile() else None
            out.append((m, data))
    manifest = json.loads(out[0][1])
    return manifest, out


def write_patch(path, members):
    """Write (TarInfo, data) pairs as a pax tar through `zstd --check`."""
    from patch_builder import compress, tar_bytes
    return compress(tar_bytes(members), path)


def replace_manifest(members, manifest):
    info, _ = members[0]
    data = json.dumps(manifest, indent=1).encode()
    return [(info, data)] + members[1:]


def saved_patch(lo, tmp_path, script, name="h"):
    """Run script in a session over lo's target and save it as a patch file."""
    r = lo.run("cd '%s' && %s" % (lo.target, script), session=name)
    assert r.returncode == 0, r.stderr
    patch = tmp_path / (name + ".tar.zst")
    lo("save", name, "-o", patch, check=True)
    return patch


def python_session_stopping_at_commit(home, state_dir, session):
    """A stopped python Sandbox whose session rewrote f1..f12 over the
    originals, its helper's next apply set to stop itself (SIGSTOP) at its
    second commit rename (LAYOVER_FAULT apply:commit:2:stop)."""
    from layover import Sandbox
    for i in range(1, 13):
        (home / ("f%d" % i)).write_text("orig%d\n" % i)
    sb = Sandbox(home, session=session, state_dir=state_dir)
    sb.run("for i in range(1, 13): open('f%d' % i, 'w').write('new%d\\n' % i)")
    sb.close()
    sb.helper.env["LAYOVER_FAULT"] = "apply:commit:2:stop"
    return sb


def stopped_apply(session):
    """The pid of a `layover apply` of `session` a fault point stopped (state T), else None."""
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError):
            continue
        if b"apply" in argv and session.encode() in argv and state == "T":
            return int(pid)
    return None


def dir_mover(lo, moved, swap="moved", name="docs"):
    """A function that moves TARGET/name out to `moved` and leaves in its
    place a new empty dir (swap "moved") or a symlink to it ("symlink"):
    what a person (or stow) does while an apply runs."""
    def move_out():
        os.rename(str(lo.target / name), str(moved))
        if swap == "symlink":
            os.symlink(str(moved), str(lo.target / name))
        else:
            os.mkdir(str(lo.target / name))
    return move_out


def saved_patch_and_copy(lo, tmp_path, cmd, session):
    """`cmd` run in a new session, saved to TMP/SESSION.tar.zst, and a copy of
    the target beside it (a reviewer's tree elsewhere): (patch, copy)."""
    assert lo.run(cmd, session=session).returncode == 0
    patch = tmp_path / (session + ".tar.zst")
    assert lo("save", session, "-o", patch).returncode == 0
    copy = tmp_path / (session + "-copy")
    shutil.copytree(lo.target, copy, symlinks=True)
    return patch, copy
