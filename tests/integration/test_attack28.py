"""The rename worker attacked as a hostile agent would (attack28): a file of
the tree being moved swapped for a FIFO between the worker's stat and its
open made the worker block for ever in open(2): the agent's rename never
returned, and every checkpoint of the running session was refused ("a
directory rename ... is being copied; ... let it finish") for good.

The worker's fault point rename:open stops it after its stat of a file and
before its open, so the agent swaps it then (a race the agent can also win
with a thread flipping the name)."""
import os
import signal
import subprocess

from test_worker2 import _start, _stopped_worker, _temps_fd

# The agent: old2/ (a dir of the real tree) moved by a thread; once the host
# says the worker stopped, f.txt becomes a FIFO; then the thread's outcome.
SWAP_FOR_FIFO = (
    "python3 -c 'import os, sys, threading\n"
    "r = {}\n"
    "def mv():\n"
    "    try: os.rename(\"old2\", \"moved\"); r[\"e\"] = 0\n"
    "    except OSError as e: r[\"e\"] = e.errno\n"
    "t = threading.Thread(target=mv, daemon=True); t.start()\n"
    "sys.stdin.readline()\n"
    "os.unlink(\"old2/f.txt\"); os.mkfifo(\"old2/f.txt\")\n"
    "print(\"swapped\", flush=True)\n"
    "sys.stdin.readline()\n"
    "t.join(120)\n"
    "print(\"rename\", r.get(\"e\", \"never returned\"), flush=True)\n"
    "os._exit(0)\n"
    "'")


def test_a_file_swapped_for_a_fifo_mid_move_never_blocks_the_worker(lo):
    (lo.target / "old2").mkdir()
    (lo.target / "old2" / "f.txt").write_text("f\n")
    p = _start(lo, "fifo", "cd '%s' && %s" % (lo.target, SWAP_FOR_FIFO), "rename:open:1:stop",
               stdin=subprocess.PIPE)
    try:
        worker = _stopped_worker(p)
        p.stdin.write(b"stopped\n")
        p.stdin.flush()
        assert p.stdout.readline() == b"swapped\n"
        os.kill(worker, signal.SIGCONT)
        p.stdin.write(b"continued\n")
        p.stdin.flush()
        out, err = p.communicate(timeout=300)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    # Refused (EXDEV, as any move the worker cannot make), and at once.
    assert b"rename 18\n" in out, (out, err)
    assert _temps_fd(lo.session_dir("fifo")) == []
    # The real tree: as before (the move never happened).
    assert (lo.target / "old2" / "f.txt").read_text() == "f\n"
    assert not (lo.target / "moved").exists()
