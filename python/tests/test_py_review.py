"""review_on_exit: the CLI's exit prompt, driven from Python in a pty."""
from __future__ import annotations

import os
import pty
import select
import signal
import sys
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _expect(fd, pattern, timeout=60.0):
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        buf += data
        if pattern in buf:
            return buf
    raise AssertionError("no %r in the prompt's output: %r" % (pattern, buf[-500:]))


def test_review_on_exit_runs_the_interactive_prompt_and_applies(sb, target, state_dir):
    sb.run("open('reviewed.txt', 'w').write('approved')").check()
    sb.close()
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, %r)
        from layover import Sandbox, review_on_exit
        sb = Sandbox(%r, session=%r, state_dir=%r, start=False)
        print("RC", review_on_exit(sb), flush=True)
    """) % (str(HERE.parent), str(target), sb.name, str(state_dir))
    pid, fd = pty.fork()
    if pid == 0:  # child: the "agent" process on a terminal
        try:
            os.execv(sys.executable, [sys.executable, "-c", script])
        finally:
            os._exit(127)
    try:
        _expect(fd, b"What now?")
        os.write(fd, b"a\n")
        _expect(fd, b"[y/N]")
        os.write(fd, b"y\n")
        out = _expect(fd, b"RC 0")
        assert b"applied" in out
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    assert (target / "reviewed.txt").read_text() == "approved"


def test_a_conflict_error_names_force_only_when_it_overrides_every_conflict():
    # The fix ConflictError names, from the helper's "forceable": force=True
    # was named for conflicts it never overrides (a hunk chosen on other
    # content), and when only some were such, force=True failed again on them.
    from layover.model import Conflict
    from layover.review import _conflict_fix
    soft, hard = Conflict("a.txt", "changed"), Conflict("b.txt", "hunk", forceable=False)
    assert _conflict_fix([soft], False).startswith("re-run with force=True to overwrite")
    for conflicts, force in (([hard], False), ([soft], True)):
        assert _conflict_fix(conflicts, force).startswith("force=True does not override these (a parent directory "
                                                          "gone or replaced, a hunk chosen on other content): ")
    fix = _conflict_fix([soft, hard], False)
    assert fix.startswith("force=True does not override b.txt (") and ", only the others: " in fix, fix
