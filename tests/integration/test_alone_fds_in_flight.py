"""Run alone, after the pool of test files (tests/run_all.sh runs each
test_alone_*.py by itself): fds in flight on unix sockets are counted per
user, in every namespace, so while this test holds its flood every other
sandbox of the same uid fails to start ("passing the rename listener to the
supervisor: Too many references"), as docs/security.md says of the user's
other programs. From the attack pass of 27 Nov (attack20)."""
import errno

# Holds as many fds in flight on unix sockets as the kernel lets it (their
# count is the user's, in every namespace: past the sender's RLIMIT_NOFILE a
# send with SCM_RIGHTS gets ETOOMANYREFS), says "full", waits for `go`, then
# closes its sockets (freeing the fds in flight) and says "released".
FLOOD = ("import array, os, resource, socket, sys, time\n"
         "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
         "resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))\n"
         "keep = []\n"
         "try:\n"
         "    while True:\n"
         "        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM); keep.append((a, b))\n"
         "        for _ in range(400):\n"
         "            try: a.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [0] * 250))])\n"
         "            except BlockingIOError: break\n"
         "            except OSError as e:\n"
         "                if e.errno == 105: break\n"  # ENOBUFS: this pair is full
         "                raise\n"
         "except OSError as e:\n"
         "    print('flood', e.errno, flush=True)\n"
         "open('full', 'w').close()\n"
         "while not os.path.exists('go'): time.sleep(0.05)\n"
         "for a, b in keep: a.close(); b.close()\n"
         "open('released', 'w').close()\n")


def test_fds_held_in_flight_never_let_a_kept_sessions_rename_run_unresolved(lo):
    """The supervisor hands a kept session's renames and links to its worker
    with the dirfds they act on (SCM_RIGHTS). A command holding fds in
    flight up to its RLIMIT_NOFILE made that send fail (ETOOMANYREFS: the
    count is the user's, the supervisor's included): the supervisor stopped
    the worker and let every call run as the task asked, the kernel
    resolving its paths again (the race attack16 closed, reopened at will;
    a directory's rename got EXDEV). Such a call now fails (ENOMEM, as when
    the worker's backlog is full) and the worker stays: once the fds are
    gone, renames are the worker's again."""
    (lo.target / "flood.py").write_text(FLOOD)
    script = ("cd '%s' && (python3 flood.py &) && while [ ! -e full ]; do sleep 0.05; done && python3 -c 'import os\n"
              "def do(what, a, b):\n"
              "    try: os.rename(a, b); print(what, 0)\n"
              "    except OSError as e: print(what, e.errno)\n"
              "do(\"dir\", \"old\", \"old2\")\n"
              "do(\"file\", \"notes.txt\", \"notes2.txt\")\n"
              "open(\"go\", \"w\").close()\n"
              "import time\n"
              "while not os.path.exists(\"released\"): time.sleep(0.05)\n"
              "do(\"after\", \"old\", \"old3\")\n"
              "'" % lo.target)
    r = lo.run(script, session="inflight", timeout=60)
    assert r.returncode == 0, r.stderr
    got = dict(x.split(" ", 1) for x in r.stdout.decode().splitlines())
    assert got["flood"] == str(errno.ETOOMANYREFS), got  # the flood reached the kernel's bound
    assert got["dir"] == got["file"] == str(errno.ENOMEM), got
    assert got["after"] == "0", got
    up = lo.upper("inflight")
    assert (up / "old3" / "a.txt").read_text() == "a\n"
    assert not (up / "notes2.txt").exists()
