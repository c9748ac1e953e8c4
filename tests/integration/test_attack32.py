"""attack32: a hostile agent against the code merged in the recovery2,
attack31 and diskguard passes. State dir and target on a real filesystem
under /home (the free-space floor watches the state dir's)."""
import os
import resource
import shutil
import signal
import subprocess
import time


from conftest import LAYOVER, fs_space, missing_feature

MIB = 1 << 20


# fallocate(2) itself (util-linux's fallocate calls it, no fallback), then
# glibc's posix_fallocate, which writes a byte per block where the call is
# refused.
ALLOC = ('fallocate -l 1G big; echo "fallocate=$?"; '
         '/usr/bin/python3 -c "import os; f = os.open(\'small\', os.O_WRONLY | os.O_CREAT, 0o644); '
         'os.posix_fallocate(f, 0, 1 << 20)"; echo "posix=$?"; '
         'fallocate -p -o 0 -l 4096 small; echo "punch=$?"')


def test_one_fallocate_cannot_take_the_disk_past_the_floor(disk_lo):
    # The floor is looked at every 25-250 ms: one fallocate(2) reserved any
    # size at once (1 GiB here, 64 MiB above the floor: the whole free space
    # with a size of avail), between two looks, and the disk stayed full
    # after the stop, the file kept in the session. A call that allocates is
    # now refused (EOPNOTSUPP): a writer allocates by writing, one
    # interval's writing at a time, as docs/security.md says.
    if not shutil.which("fallocate"):
        missing_feature("fallocate(1) (util-linux) is not installed: apt-get install util-linux")
    floor = fs_space(disk_lo.state)[1] - 64 * MIB
    r = disk_lo.run(ALLOC, "--min-free", str(floor), session="alloc", timeout=300)
    out, err = r.stdout.decode(), r.stderr.decode()
    assert "fallocate=1" in out, (out, err)
    assert "Operation not supported" in err, err
    assert "posix=0" in out and "punch=0" in out, (out, err)
    assert r.returncode == 0, err
    upper = disk_lo.upper("alloc")
    st = (upper / "big").stat()
    assert st.st_blocks * 512 < 64 * MIB, st
    assert (upper / "small").stat().st_size == MIB
    assert not (disk_lo.target / "big").exists()


# The agent: a directory move the rename worker copies (it stops itself at
# its first file, LAYOVER_FAULT), then, on the test's word, a second
# directory rename, then what it sees of the first call's temporary copy.
MOVER = r'''
import os, sys, threading
os.mkdir("d1")
res = {}
def mv():
    try:
        os.rename("old", "moved")
        res["mv"] = "ok"
    except OSError as e:
        res["mv"] = "errno=%d" % e.errno
t = threading.Thread(target=mv)
t.start()
sys.stdin.readline()
try:
    os.rename("d1", "d2")
    res["d1"] = "ok"
except OSError as e:
    res["d1"] = "errno=%d" % e.errno
t.join()
print(res["mv"], res["d1"], sorted(n for n in os.listdir(".") if n.startswith(".layover-rename-")), flush=True)
'''


def proc_stat(pid):
    try:
        text = open("/proc/%d/stat" % pid).read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1])  # state, ppid


RENAMES = ("82", "264", "316")


def stopped_child(ppid):
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = proc_stat(int(name))
            if s and s[1] == ppid and s[0] == "T":
                return int(name)
    return None


def wait_for(cond, what, tries=3000):
    for _ in range(tries):
        v = cond()
        if v:
            return v
        time.sleep(0.01)
    raise AssertionError("timed out waiting for " + what)


def run_mover(disk_lo, session, script, **kw):
    """`layover run` of a Python script whose move of the real dir old/ (3
    files) the rename worker copies, stopping itself at its first file."""
    (disk_lo.target / "old").mkdir()
    for i in range(3):
        (disk_lo.target / "old" / ("f%d.txt" % i)).write_text("%d\n" % i)
    env = dict(disk_lo.env, LAYOVER_FAULT="rename:file:1:stop")
    return subprocess.Popen([LAYOVER, "run", "--target", str(disk_lo.target), "--session", session, "--on-exit", "keep",
                             "--", "/usr/bin/python3", "-c", script], cwd=str(disk_lo.target), env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_a_worker_dead_when_the_next_call_comes_still_has_its_copy_removed(disk_lo):
    # recovery2: a worker's death is met by a successor that removes the
    # half-made copy before the call gets EXDEV. But the supervisor's loop
    # reads the sandbox's next call before the worker's hang-up: handing
    # that call to the dead worker failed (EPIPE), which stopped the worker
    # without the successor, and the agent saw (and could take into a commit
    # or move a dir into) the half copy until the run's end.
    p = run_mover(disk_lo, "dead", MOVER)
    try:
        upper = disk_lo.upper("dead")

        wpid = wait_for(lambda: stopped_child(p.pid), "the rename worker stopped mid-copy")
        assert any(n.startswith(".layover-rename-") for n in os.listdir(upper))
        os.kill(p.pid, signal.SIGSTOP)
        os.kill(wpid, signal.SIGKILL)
        # Dead, its socket closed (a zombie: its stopped parent cannot reap
        # it), before the next call comes: else, on a loaded machine, the
        # call went to the dying worker, and a call in a worker's hands when
        # it dies gets EXDEV (it may have been half done) as designed.
        wait_for(lambda: (proc_stat(wpid) or ("X",))[0] in ("Z", "X"), "the killed worker to be dead")
        p.stdin.write(b"go\n")
        p.stdin.flush()

        def in_rename():
            for name in os.listdir("/proc"):
                if not name.isdigit():
                    continue
                try:
                    # The agent's main thread (its mover thread waits in a rename already).
                    if (b"layover-rename-" in open("/proc/%s/cmdline" % name, "rb").read() and
                            open("/proc/%s/syscall" % name).read().split()[0] in RENAMES):
                        return True
                except OSError:
                    continue
            return False

        wait_for(in_rename, "the agent's second rename to wait on the supervisor")
        os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert out.decode().strip() == "errno=18 ok []", (out, err)


# While the worker copies (stopped at its first file), 600 directory
# renames wait on the supervisor, then the worker goes on.
FLOOD = r'''
import os, sys, threading
N = 600
for i in range(N):
    os.mkdir("d%d" % i)
t = threading.Thread(target=os.rename, args=("old", "moved"))
t.start()
sys.stdin.readline()
got = {}
lock = threading.Lock()
def one(i):
    try:
        os.rename("d%d" % i, "e%d" % i)
        r = "ok"
    except OSError as e:
        r = "errno=%d" % e.errno
    with lock:
        got[r] = got.get(r, 0) + 1
ts = [threading.Thread(target=one, args=(i,)) for i in range(N)]
for x in ts:
    x.start()
print("started", flush=True)
sys.stdin.readline()
for x in ts:
    x.join()
t.join()
print(" ".join("%s:%d" % kv for kv in sorted(got.items())), flush=True)
'''


def settled():
    """The flood's threads (all but its main one) each in a rename."""
    for name in os.listdir("/proc"):
        try:
            cmd = open("/proc/%s/cmdline" % name, "rb").read() if name.isdigit() else b""
            if not cmd.startswith(b"/usr/bin/python3\0") or b'"e%d"' not in cmd:
                continue
            tids = [t for t in os.listdir("/proc/%s/task" % name) if t != name]
            return all(open("/proc/%s/task/%s/syscall" % (name, t)).read().split()[0] in RENAMES for t in tids)
        except OSError:
            continue
    return False


def test_a_flood_of_dir_renames_past_the_supervisors_fds_gets_enomem_not_enoent(disk_lo):
    # recovery2 keeps the dirfds of each call the worker holds (256 at most,
    # two each) besides the backlog's (as many): past a soft RLIMIT_NOFILE
    # of 1024 (a common default) the supervisor's own opens failed (EMFILE)
    # and a rename of an existing dir got ENOENT (74 of 600 here), where
    # the backlog's bound gives ENOMEM.
    p = run_mover(disk_lo, "flood", FLOOD, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024)))
    try:
        wpid = wait_for(lambda: stopped_child(p.pid), "the rename worker stopped mid-copy")
        p.stdin.write(b"go\n")
        p.stdin.flush()
        assert p.stdout.readline() == b"started\n"
        # Every call waits on the supervisor or has its answer.
        wait_for(settled, "every call waiting on the supervisor or answered")
        os.kill(wpid, signal.SIGCONT)
        p.stdin.write(b"go\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    got = dict(kv.split(":") for kv in out.decode().split())
    assert set(got) <= {"ok", "errno=12"}, got
    assert sum(map(int, got.values())) == 600, got
