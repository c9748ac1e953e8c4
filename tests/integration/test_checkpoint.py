"""`layover checkpoint` (docs/history.md, issue 23): a kept session's live
upper becomes the next frozen step; a running session is asked through its
supervisor's control socket."""
import json
import os
import socket
import stat
import subprocess
import time
from pathlib import Path

from capture_util import status_json
from conftest import LAYOVER


def run_ok(lo, cmd, session):
    r = lo.run(cmd, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def layers(lo, name):
    d = lo.session_dir(name) / "steps"
    return sorted(p.name for p in d.iterdir() if p.is_dir()) if d.exists() else []


def test_checkpoint_of_a_kept_session_freezes_the_live_upper(lo):
    run_ok(lo, "echo a > a.txt; echo changed > notes.txt", "k")
    before = status_json(lo, "k")
    r = lo("checkpoint", "k", "-m", "first part")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert r.stdout.decode() == "session 'k': step 1\n"
    d = lo.session_dir("k")
    assert layers(lo, "k") == ["0001"]
    assert (d / "steps" / "0001" / "a.txt").read_text() == "a\n"
    assert list((d / "upper").iterdir()) == []
    # The freeze is O(1): the record's paths are left pending, computed
    # (and written) by the first reader that needs them, here `log`.
    rec = json.loads((d / "steps" / "0001.json").read_text())
    assert rec["label"] == "first part" and rec["pending"] is True and rec["paths"] == []
    log = json.loads(lo("log", "k", "--json").stdout)["steps"]
    assert {(p["path"], p["kind"]) for p in log[0]["paths"]} == {("a.txt", "A"), ("notes.txt", "M")}
    rec = json.loads((d / "steps" / "0001.json").read_text())
    assert rec["label"] == "first part" and "pending" not in rec
    assert {(p["path"], p["kind"]) for p in rec["paths"]} == {("a.txt", "A"), ("notes.txt", "M")}
    # The flattened view is the same; the real tree never changed.
    assert status_json(lo, "k") == before
    assert not (Path(lo.target) / "a.txt").exists() and (Path(lo.target) / "notes.txt").read_text() == "one\ntwo\nthree\n"
    # Nothing new: no step, said so, exit 0; --json says null.
    r = lo("checkpoint", "k", "--json")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert json.loads(r.stdout) == {"session": "k", "step": None, "label": ""}
    # The next run sees step 1 and its own work lands in a fresh upper;
    # without -m the step's label is the run's command line.
    run_ok(lo, "test -f a.txt && echo b > b.txt", "k")
    r = lo("checkpoint", "k", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["step"] == 2
    # blame settles a pending record too.
    r = lo("blame", "k", "b.txt")
    assert r.returncode == 0 and "A" in r.stdout.decode().split(), r.stderr.decode(errors="replace")
    rec = json.loads((d / "steps" / "0002.json").read_text())
    assert rec["label"].startswith("/bin/sh -c test -f a.txt") and rec["paths"] == [{"path": "b.txt", "kind": "A"}]
    log = json.loads(lo("log", "k", "--json").stdout)
    assert [s["step"] for s in log["steps"]] == [2, 1] and log["steps"][1]["label"] == "first part"


def test_checkpoint_errors_change_nothing(lo):
    r = lo("checkpoint", "nosuch")
    assert r.returncode == 1 and b"nosuch" in r.stderr
    run_ok(lo, "echo a > a.txt", "e")
    for bad in (["checkpoint"], ["checkpoint", "e", "--bogus"], ["checkpoint", "e", "-m", ""], ["checkpoint", "e", "x"]):
        assert lo(*bad).returncode == 2, bad
    assert layers(lo, "e") == [] and (lo.upper("e") / "a.txt").exists()


def test_a_checkpoint_whose_writes_fail_leaves_no_temp_file(lo):
    # A full disk (ENOSPC while writing .meta.json.tmp, steps/live.json.tmp...)
    # left the empty temp files in the session dir; every write that fails
    # now removes its own. The fault point fails the N-th such write after
    # its data went in, as ENOSPC at the close would.
    run_ok(lo, "echo a > a.txt", "t")
    d = lo.session_dir("t")
    failed = 0
    for n in range(1, 6):
        r = lo("checkpoint", "t", env={"LAYOVER_FAULT": "replace:written:%d" % n})
        temps = [str(p.relative_to(d)) for p in d.rglob("*.tmp")]
        assert temps == [], (n, temps, r.stderr.decode(errors="replace"))
        if r.returncode != 0:
            failed += 1
            assert b"injected fault at replace:written" in r.stderr, r.stderr
    assert failed, "no checkpoint reached a replaced file"
    assert lo("status", "t").returncode == 0


def test_checkpoint_killed_at_each_point_leaves_the_session_before_or_after(lo):
    for point, after in (("record", False), ("layer", False), ("renamed", True)):
        name = "f" + point
        run_ok(lo, "echo a > a.txt; rm notes.txt", name)
        before = status_json(lo, name)
        r = lo("checkpoint", name, env={"LAYOVER_FAULT": "checkpoint:%s:1:kill" % point})
        # The freeze runs in a child as the session's owner: that is what dies.
        assert r.returncode == 1 and b"died" in r.stderr, r.stderr.decode(errors="replace")
        # Cut short before the commit, an empty layer may be left: the view
        # is the same, and the next freeze reuses it.
        assert layers(lo, name) == (["0001"] if after or point == "layer" else [])
        assert status_json(lo, name) == before
        # A `log` in between computes pending paths, but leaves an empty
        # layer's record pending: the rerun still reuses that layer.
        assert lo("log", name).returncode == 0
        # A rerun finishes it (after) or makes it (before): one step, recorded.
        r = lo("checkpoint", name)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        assert r.stdout.decode() == ("session '%s': %s\n" % (name, "no changes since the last step; no step made"
                                                             if after else "step 1"))
        assert layers(lo, name) == ["0001"] and status_json(lo, name) == before
        assert lo("log", name).returncode == 0  # computes the record's pending paths
        rec = json.loads((lo.session_dir(name) / "steps" / "0001.json").read_text())
        assert {p["path"] for p in rec["paths"]} == {"a.txt", "notes.txt"}
        run_ok(lo, "test -f a.txt && test ! -e notes.txt", name)


def start_running(lo, name, script="echo a > a.txt; exec sleep 30", extra=()):
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), "--session", name, "--on-exit", "keep",
                          *extra, "--", "/bin/sh", "-c", script],
                         env=lo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sock = lo.session_dir(name) / "control.sock"
    deadline = time.monotonic() + 60  # a session's start on a loaded machine (it had 4 s)
    while time.monotonic() < deadline:
        if sock.exists() and (lo.upper(name) / "a.txt").exists():
            return p, sock
        time.sleep(0.02)
    p.kill()
    raise AssertionError("the session did not start: %r" % (p.communicate(),))


def ask(sock, payload):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    fd = os.open(str(sock.parent), os.O_PATH)
    try:
        s.connect("/proc/self/fd/%d/control.sock" % fd)
    finally:
        os.close(fd)
    s.send(payload)
    reply = s.recv(65536)
    s.close()
    return json.loads(reply)


def wait_for(path, what):
    deadline = time.monotonic() + 60  # the command's next step on a loaded machine (it had 6 s)
    while time.monotonic() < deadline:
        if path.exists():
            return
        time.sleep(0.02)
    raise AssertionError("no " + what)


def test_checkpoint_of_a_running_session_goes_through_its_supervisor(lo):
    p, sock = start_running(lo, "run")
    try:
        st = os.lstat(sock)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        # Malformed requests: a clear error each, and the supervisor serves on.
        for bad in (b"{", b"[]", b'{"op": "rm -rf"}', b'{"op": "checkpoint", "label": 7}', b"x" * 20000):
            r = ask(sock, bad)
            assert r["ok"] is False and r["error"].startswith("malformed control message"), (bad, r)
        # The command's shell sits in the target: refused, named, nothing changed.
        r = lo("checkpoint", "run", "-m", "mid-run")
        assert r.returncode == 1
        err = r.stderr.decode()
        assert "checkpoint of session 'run'" in err and "would stay on the frozen view" in err, err
        assert "(sleep) has its working directory in " + str(lo.target) in err, err
        assert layers(lo, "run") == [] and (lo.upper("run") / "a.txt").read_text() == "a\n"
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert not sock.exists()
    r = lo("checkpoint", "run")
    assert r.returncode == 0 and r.stdout.decode() == "session 'run': step 1\n"


def test_live_checkpoint_freezes_and_the_sandbox_goes_on_in_a_fresh_upper(lo):
    t = str(lo.target)
    sig = Path(lo.state).parent / "sig"
    sig.mkdir()
    script = ("cd /; echo a > {t}/a.txt; exec 3>{t}/held.txt; echo held >&3; "
              "while [ ! -e {s}/close ]; do sleep 0.02; done; exec 3>&-; touch {s}/closed; "
              "while [ ! -e {s}/go ]; do sleep 0.02; done; echo b > {t}/b.txt; cat {t}/a.txt > {t}/seen.txt; "
              "mv {t}/a.txt {t}/a2.txt; touch {s}/done; exec sleep 30").format(t=t, s=sig)
    p, sock = start_running(lo, "live", script, ("--rw", str(sig)))
    d = lo.session_dir("live")
    deadline = time.monotonic() + 60  # 6 s before, then on as if held.txt were written
    while not ((d / "upper" / "held.txt").exists() and (d / "upper" / "held.txt").read_text() == "held\n"):
        assert time.monotonic() < deadline, "the command never wrote held.txt"
        time.sleep(0.02)
    try:
        # A writer open: refused, naming the process and the path; nothing changes.
        r = lo("checkpoint", "live")
        assert r.returncode == 1, r.stdout
        err = r.stderr.decode()
        assert "(sh) has " + t + "/held.txt open for writing" in err and "nothing changed" in err, err
        assert layers(lo, "live") == []
        (sig / "close").touch()
        wait_for(sig / "closed", "close")
        r = lo("checkpoint", "live", "-m", "first")
        assert r.returncode == 0, (r.stderr.decode(), os.listdir(d / "work"), os.listdir(d))
        assert r.stdout.decode() == "session 'live': step 1\n"
        assert (d / "steps" / "0001" / "a.txt").read_text() == "a\n"
        assert sorted(x.name for x in (d / "upper").iterdir()) == []
        (sig / "go").touch()
        wait_for(sig / "done", "second part")
        # The sandbox wrote through the next overlay: the new upper, step 1 untouched.
        assert (d / "upper" / "b.txt").read_text() == "b\n"
        assert (d / "upper" / "seen.txt").read_text() == "a\n"
        assert (d / "upper" / "a2.txt").read_text() == "a\n"
        assert (d / "steps" / "0001" / "a.txt").read_text() == "a\n"
        assert sorted(x.name for x in (d / "steps" / "0001").iterdir()) == ["a.txt", "held.txt"]
    finally:
        p.terminate()
        p.communicate(timeout=30)
    ch = {c["path"]: c["kind"] for c in status_json(lo, "live")}
    assert ch == {"a2.txt": "added", "b.txt": "added", "held.txt": "added", "seen.txt": "added"}
    assert not (Path(t) / "a.txt").exists() and not (Path(t) / "b.txt").exists()


def digest(layer):
    """Every entry of a frozen layer: type, mode, size, device, content, link, xattrs."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(layer):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            xattrs = {k: os.getxattr(p, k, follow_symlinks=False) for k in os.listxattr(p, follow_symlinks=False)}
            content = open(p, "rb").read() if stat.S_ISREG(st.st_mode) else None
            link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
            out[os.path.relpath(p, layer)] = (st.st_mode, st.st_size, st.st_rdev, content, link, xattrs)
    return out


HOSTILE = r'''
import mmap, os, subprocess, sys, time
T, S = sys.argv[1], sys.argv[2]
def wait(n):
    while not os.path.exists(os.path.join(S, n)):
        time.sleep(0.02)
def mark(n):
    open(os.path.join(S, n), "w").close()
os.chdir("/")
os.mkdir(T + "/sub")
with open(T + "/m.bin", "wb") as f:
    f.write(b"0" * 4096)
fd = os.open(T + "/m.bin", os.O_RDWR)
mm = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)
mm[0:5] = b"hello"
mark("mapped"); wait("unmap")
mm[0:5] = b"HELLO"
mm.close()
mark("unmapped"); wait("bg")
bg = subprocess.Popen(["sleep", "30"], cwd=T + "/sub")
mark("bgup"); wait("killbg")
bg.kill(); bg.wait()
dfd = os.open(T + "/sub", os.O_RDONLY | os.O_DIRECTORY)
mark("dirfd"); wait("closedir")
os.close(dfd)
with open(T + "/sub/x", "w") as f:
    f.write("x")
os.setxattr(T + "/sub/x", "user.k", b"v")
mark("dirclosed"); wait("final")
os.rename(T + "/m.bin", T + "/sub/m2.bin")
with open(T + "/sub/m2.bin", "r+b") as f:
    f.write(b"later")
os.setxattr(T + "/sub/x", "user.k", b"changed")
os.chmod(T + "/sub/x", 0o600)
mark("done")
time.sleep(30)
'''


def test_frozen_layers_never_change_whatever_the_processes_inside_do(lo):
    t = str(lo.target)
    sig = Path(lo.state).parent / "sig"
    sig.mkdir()
    (sig / "hostile.py").write_text(HOSTILE)
    p = subprocess.Popen([LAYOVER, "run", "--target", t, "--session", "h", "--on-exit", "keep", "--rw", str(sig),
                          "--", "python3", str(sig / "hostile.py"), t, str(sig)],
                         env=lo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    d = lo.session_dir("h")

    def refused(word):
        r = lo("checkpoint", "h")
        assert r.returncode == 1 and word in r.stderr.decode() and "nothing changed" in r.stderr.decode(), r.stderr
        assert not (d / "steps" / "0002").exists()

    try:
        wait_for(sig / "mapped", "mapping")
        refused("(python3) has " + t + "/m.bin mapped shared and writable")
        (sig / "unmap").touch()
        wait_for(sig / "unmapped", "unmapping")
        r = lo("checkpoint", "h", "-m", "one")
        assert r.returncode == 0 and r.stdout.decode() == "session 'h': step 1\n", r.stderr
        first = digest(d / "steps" / "0001")
        assert first["m.bin"][3][:5] == b"HELLO" and "sub" in first
        (sig / "bg").touch()
        wait_for(sig / "bgup", "the background job")
        time.sleep(0.1)
        refused("(sleep) has its working directory in " + t + "/sub")
        (sig / "killbg").touch()
        wait_for(sig / "dirfd", "the dir fd")
        refused("(python3) has the directory " + t + "/sub open")
        (sig / "closedir").touch()
        wait_for(sig / "dirclosed", "the dir fd closed")
        r = lo("checkpoint", "h", "-m", "two")
        assert r.returncode == 0 and r.stdout.decode() == "session 'h': step 2\n", r.stderr
        second = digest(d / "steps" / "0002")
        assert second["sub/x"][5] == {"user.k": b"v"}
        (sig / "final").touch()
        wait_for(sig / "done", "the last writes")
        # Renamed across steps, written, chmod and xattr changed: all in the live upper.
        assert (d / "upper" / "sub" / "m2.bin").read_bytes()[:5] == b"later"
        assert digest(d / "steps" / "0001") == first and digest(d / "steps" / "0002") == second
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert digest(d / "steps" / "0001") == first and digest(d / "steps" / "0002") == second
    ch = {c["path"]: c["kind"] for c in status_json(lo, "h")}
    assert ch == {"sub": "added", "sub/x": "added", "sub/m2.bin": "added"}, ch
    assert not os.path.exists(t + "/sub") and not os.path.exists(t + "/m.bin")


def test_a_live_checkpoint_that_fails_midway_leaves_the_session_as_it_was(lo):
    t = str(lo.target)
    sig = Path(lo.state).parent / "sig"
    sig.mkdir()
    script = ("cd /; echo a > {t}/a.txt; while [ ! -e {s}/go ]; do sleep 0.02; done; "
              "echo b > {t}/b.txt && touch {s}/done; exec sleep 30").format(t=t, s=sig)
    p, sock = start_running(lo, "mid", script, ("--rw", str(sig)))
    d = lo.session_dir("mid")
    try:
        # The next overlay's work dir cannot be made: the freeze is taken back.
        (d / "work" / "ck0001").write_text("in the way")
        r = lo("checkpoint", "mid")
        assert r.returncode == 1 and "ck0001" in r.stderr.decode() and "nothing changed" in r.stderr.decode()
        assert layers(lo, "mid") == [] and not (d / "steps" / "0001.json").exists()
        assert (d / "upper" / "a.txt").read_text() == "a\n"
        # The overlay is writable again, and the same: the sandbox goes on.
        (sig / "go").touch()
        wait_for(sig / "done", "the write after the failed checkpoint")
        assert (d / "upper" / "b.txt").read_text() == "b\n"
        (d / "work" / "ck0001").unlink()
        r = lo("checkpoint", "mid")
        assert r.returncode == 0 and r.stdout.decode() == "session 'mid': step 1\n", r.stderr
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert sorted(x.name for x in (d / "steps" / "0001").iterdir()) == ["a.txt", "b.txt"]


def test_live_checkpoints_past_the_depth_limit_squash_and_the_view_keeps_every_step(lo):
    """A running session's checkpoints past --max-steps squash its oldest steps,
    as a resume does, instead of being refused: the replaced layers are moved
    aside while the covered overlays may still read them, and removed at the
    next resume. The command sees every step's files throughout."""
    t = str(lo.target)
    sig = Path(lo.state).parent / "sig"
    sig.mkdir()
    script = ("cd /; echo a > {t}/a.txt; i=1; while [ $i -le 6 ]; do "
              "while [ ! -e {s}/go$i ]; do sleep 0.02; done; echo $i > {t}/f$i.txt; touch {s}/done$i; "
              "i=$((i+1)); done; cat {t}/a.txt {t}/f1.txt {t}/f2.txt {t}/f3.txt {t}/f4.txt {t}/f5.txt > {t}/all.txt; "
              "touch {s}/end; exec sleep 30").format(t=t, s=sig)
    p, sock = start_running(lo, "deep", script, ("--rw", str(sig), "--max-steps", "3"))
    d = lo.session_dir("deep")
    try:
        for i in range(1, 6):
            (sig / ("go%d" % i)).touch()
            wait_for(sig / ("done%d" % i), "step %d" % i)
            r = lo("checkpoint", "deep", "-m", "part %d" % i)
            assert r.returncode == 0, r.stderr.decode(errors="replace")
            assert r.stdout.decode() == "session 'deep': step %d\n" % i
        # Five steps, at most three layers: steps 1 and 2 were squashed.
        assert layers(lo, "deep") == ["0003", "0004", "0005"]
        assert (d / "retired").is_dir() and len(list((d / "retired").iterdir())) >= 2
        log = json.loads(lo("log", "deep", "--json", check=True).stdout)
        squashed = {s["step"]: s.get("squashed", False) for s in log["steps"]}
        assert squashed[1] and squashed[2] and not squashed[3] and not squashed[5], log
        (sig / "go6").touch()
        wait_for(sig / "end", "the last part")
        assert (d / "upper" / "all.txt").read_text() == "a\n1\n2\n3\n4\n5\n"
    finally:
        p.terminate()
        p.communicate(timeout=30)
    ch = {c["path"]: c["kind"] for c in status_json(lo, "deep")}
    assert ch == dict({"a.txt": "added", "all.txt": "added"}, **{"f%d.txt" % i: "added" for i in range(1, 7)})
    # The next resume removes what the running squashes moved aside.
    run_ok(lo, "true", "deep")
    assert not (d / "retired").exists()
    assert not (Path(t) / "a.txt").exists()
