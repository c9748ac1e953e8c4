"""Finding and running the C++ helper (`layover VERB ...`).

The binary is looked up, in order: $LAYOVER_BIN, the path recorded by
`make install` (layover/_install.py, generated), build/layover in the source
checkout this package sits in, then $PATH.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Type, Union

from ._args import path_arg
from .errors import PatchError, SandboxError, UnsupportedKernelError, os_reason

StrPath = Union[str, "os.PathLike[str]"]

# Words in the helper's one-line messages that name a missing kernel feature
# (see `layover doctor`).  A helper-side exit code for this would be sturdier.
_KERNEL_HINTS = ("user namespace", "userns", "overlayfs", "overlay mount", "userxattr", "apparmor",
                 "unprivileged", "kernel", "max_user_namespaces", "procfs", "mount_setattr")
MAX_MESSAGE = 2000


def find_binary() -> str:
    env = os.environ.get("LAYOVER_BIN")
    if env:
        return env
    try:
        from . import _install  # type: ignore[attr-defined]  # written by tests/install_python.sh
        installed = getattr(_install, "BINARY", None)
        if isinstance(installed, str) and os.access(installed, os.X_OK):
            return installed
    except ImportError:
        pass
    checkout = Path(__file__).resolve().parents[2] / "build" / "layover"
    if os.access(str(checkout), os.X_OK):
        return str(checkout)
    found = shutil.which("layover")
    if found:
        return found
    raise SandboxError("layover: helper binary not found; build it with 'make', install it with "
                       "'make install', or set LAYOVER_BIN")


def literal_path(path: StrPath) -> str:
    """A path as `--only` and `-- PATH` name exactly that path: they take
    globs too, and a name the sandbox chose may hold '*', '?' or '[' (a file
    named `*` would select every change); such a name goes with each of
    those and every backslash escaped, which the helper reads as the path
    itself (docs/cli.md, apply)."""
    text = os.fsdecode(os.fspath(path))
    if not any(c in text for c in "*?["):
        return text
    return "".join("\\" + c if c in "\\*?[" else c for c in text)


def one_line(stderr: bytes, fallback: str) -> str:
    """The helper's own error line: the last "layover: ..." line, else the
    last non-empty one; control characters made visible, length capped."""
    text = stderr.decode("utf-8", "replace")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pick = [ln for ln in lines if ln.startswith("layover")]
    line = (pick or lines or [fallback])[-1]
    line = "".join(c if c.isprintable() else "\\x%02x" % ord(c) for c in line)
    return line[:MAX_MESSAGE]


def error_for(message: str, default: Type[SandboxError] = SandboxError,
              kernel_hints: bool = False) -> SandboxError:
    """The exception for a helper message; with kernel_hints (sandbox
    start-up), one naming a kernel feature is an UnsupportedKernelError."""
    low = message.lower()
    if kernel_hints and any(h in low for h in _KERNEL_HINTS):
        return UnsupportedKernelError(message)
    return default(message)


# The working directory of a helper call that names a session (diff, show,
# apply of sb.name): the helper refuses a name that is both a session's and a
# file's in its working directory (a file there may have come from anywhere),
# so the caller's own directory, where any file may lie, is not used. Every
# other argument of those calls is absolute or relative to the target.
SESSION_CWD = "/"


def _interrupt_and_wait(p: subprocess.Popen) -> None:
    """Ctrl+C (KeyboardInterrupt) during a helper verb: the helper gets
    SIGINT too (the terminal's, or this one) and is waited for, never killed
    (subprocess.run's way, 0.25 s later): `layover apply` holds the signal
    until the real tree is whole again (staging rolled back, or the commit
    finished), then exits by it. Found by the attack pass of 27 Nov: a
    Ctrl+C in Sandbox.apply() SIGKILLed the helper mid-commit, leaving the
    tree half-applied until the next apply or undo. A second Ctrl+C here
    stops the waiting, not the helper."""
    try:
        p.send_signal(signal.SIGINT)
    except OSError:
        pass
    p.communicate()  # its output drained, so a full pipe never blocks it


TERM_GRACE = 60.0  # seconds a timed-out helper verb may take to stop on SIGTERM


def _terminate_and_wait(p: subprocess.Popen) -> Tuple[bytes, bytes]:
    """A helper verb past its timeout: SIGTERM, which `layover apply` and
    `undo` hold until the real tree is whole again (staging rolled back, or
    the commit finished, helper/base/interrupt.h), and up to TERM_GRACE
    seconds to stop; SIGKILL only then. Found by the attack pass of 27 Nov
    (attack19): the timeout SIGKILLed the helper at once, so an apply() past
    600 s was cut off mid-commit, the tree left half-applied until the next
    apply or undo (what attack18 fixed for Ctrl+C). Returns what it printed
    (stdout, stderr; empty when not captured)."""
    p.terminate()
    try:
        out, err = p.communicate(timeout=TERM_GRACE)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return out or b"", err or b""


def _finished_first(rc: int, out: bytes) -> bool:
    """A verb stopped by the timeout's SIGTERM that had finished first: an
    apply or undo holds the signal to the end of its commit, prints its
    whole --json result (its "error" null), then dies by the signal. That
    complete document is the verb's last word, so the work is done."""
    if rc != -signal.SIGTERM or not out.strip():
        return False
    try:
        doc = json.loads(out.decode("utf-8"))
    except ValueError:
        return False
    return isinstance(doc, dict) and "error" in doc and doc["error"] is None


class Helper:
    """Runs helper verbs with a fixed binary and environment."""

    def __init__(self, binary: Optional[str] = None, state_dir: Optional[StrPath] = None,
                 env: Optional[Mapping[str, str]] = None) -> None:
        if binary is not None and not isinstance(binary, str):
            raise TypeError("binary must be a path (a str) or None, not %s %r" % (type(binary).__name__, binary))
        self.binary = binary or find_binary()
        if env is not None and not isinstance(env, Mapping):
            raise TypeError("helper_env must be a mapping of variable names to values, not %s" % type(env).__name__)
        self.env: Dict[str, str] = dict(os.environ if env is None else env)
        for name, value in self.env.items():  # as subprocess takes them; an int failed at start(), naming nothing
            if not isinstance(name, (str, bytes)) or not isinstance(value, (str, bytes)):
                raise TypeError("helper_env: names and values must be str, not helper_env[%r] = %r; pass str(value)"
                                % (name, value))
        if state_dir is not None:
            self.env["LAYOVER_STATE_DIR"] = path_arg("state_dir", state_dir)

    def argv(self, *args: StrPath) -> list:
        return [self.binary] + [os.fspath(a) for a in args]

    def _argv(self, args: Sequence[StrPath]) -> list:
        argv = self.argv(*args)
        for a in argv:  # as subprocess would, but naming the argument and the verb
            if ("\0" if isinstance(a, str) else b"\0") in a:
                raise ValueError("layover: an argument of 'layover %s' holds a NUL byte, which no path, name or label "
                                 "can hold: %r" % (os.fspath(args[0]) if args else "", a))
        if args and args[0] != "run":
            # The config file sets the CLI's defaults; the API's own calls
            # (whose output it parses) are the same whatever it says.
            argv.insert(2, "--no-config")
        return argv

    def _cannot_run(self, e: OSError, args: Sequence[StrPath] = ()) -> SandboxError:
        if e.errno == errno.E2BIG:  # not the binary's fault: reinstalling would not help (attack33)
            return SandboxError("layover: the arguments of 'layover %s' are too long for the kernel (E2BIG: at most "
                                "128 KiB each, and about 2 MiB together); pass fewer or shorter paths"
                                % (os.fspath(args[0]) if args else ""))
        return SandboxError("layover: cannot run the helper %s: %s; set LAYOVER_BIN or reinstall"
                            % (self.binary, os_reason(e, with_path=False)))

    @staticmethod
    def _timed_out(args: Sequence[StrPath], timeout: float, stderr: bytes = b"") -> SandboxError:
        """Past the timeout; the helper's own last line says what it left
        (apply: "stopped by SIGTERM; nothing was applied")."""
        said = one_line(stderr, "")
        return SandboxError("layover: 'layover %s' did not finish within %.0f s%s"
                            % (" ".join(os.fspath(a) for a in args[:2]), timeout,
                               "; it was stopped: " + said if said else ""))

    @staticmethod
    def _check(args: Sequence[StrPath], rc: int, stderr: bytes, ok: Sequence[int], error: Type[SandboxError]) -> None:
        if rc not in ok:
            verb = os.fspath(args[0]) if args else "?"
            msg = one_line(stderr, "layover %s failed with exit status %d" % (verb, rc))
            raise error_for(msg, error)

    def run(self, args: Sequence[StrPath], *, ok: Sequence[int] = (0,), timeout: float = 600,
            error: Type[SandboxError] = PatchError, capture: bool = True,
            cwd: Optional[str] = None) -> subprocess.CompletedProcess:
        """Run `layover ARGS` (in `cwd`: SESSION_CWD for a call naming a
        session); an exit status outside `ok` raises `error`
        (UnsupportedKernelError when the message names a kernel feature)."""
        argv = self._argv(args)
        try:
            p = subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL, cwd=cwd,
                                 stdout=subprocess.PIPE if capture else None,
                                 stderr=subprocess.PIPE if capture else None)
        except OSError as e:
            raise self._cannot_run(e, args) from None
        with p:
            try:
                out, err = p.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                out, err = _terminate_and_wait(p)
                if not _finished_first(p.returncode, out):
                    raise self._timed_out(args, timeout, err) from None
                p.returncode = 0
            except KeyboardInterrupt:
                _interrupt_and_wait(p)
                raise
        r = subprocess.CompletedProcess(argv, p.returncode, out, err)
        self._check(args, r.returncode, r.stderr or b"", ok, error)
        return r

    def _stream(self, args: Sequence[StrPath], timeout: float, take: Callable[[bytes], bool],
                cwd: Optional[str] = None) -> Tuple[int, bytes, bool]:
        """Run `layover ARGS`, handing each piece of its stdout to take() as
        it comes (False: enough; the helper is killed) and keeping at most
        64 KiB of its stderr, read beside it so neither pipe fills and blocks
        the helper. (exit status, stderr, timed out)."""
        try:
            p = subprocess.Popen(self._argv(args), env=self.env, stdin=subprocess.DEVNULL, cwd=cwd,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as e:
            raise self._cannot_run(e, args) from None
        err = bytearray()

        def drain() -> None:
            for chunk in iter(lambda: p.stderr.read(65536), b""):  # type: ignore[union-attr]
                err.extend(chunk[:max(0, 65536 - len(err))])

        t = threading.Thread(target=drain, daemon=True)
        t.start()
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        end = time.monotonic() + timeout
        with p:
            stop = True  # enough, or an exception in take() (Ctrl+C): the verb (a read) is killed
            try:
                for chunk in iter(lambda: p.stdout.read1(1 << 20), b""):  # type: ignore[union-attr]
                    if not take(chunk):
                        break
                else:
                    stop = False
            finally:  # on an exception too: the Timer is no daemon, and kept the program up to `timeout` (attack33)
                if stop:
                    p.kill()
                rc = p.wait()
                t.join()  # before `with p` closes stderr under it (a traceback of the thread, newuser15)
                timer.cancel()
        return rc, bytes(err), rc < 0 and time.monotonic() >= end

    def run_capped(self, args: Sequence[StrPath], cap: int, *, ok: Sequence[int] = (0,),
                   error: Type[SandboxError] = PatchError, timeout: float = 600,
                   cwd: Optional[str] = None, notes: Optional[List[bytes]] = None) -> Optional[bytes]:
        """Run `layover ARGS` as run() does and return its stdout, or None as
        soon as it passes `cap` bytes (the helper is then killed): what a
        running sandbox holds can grow between a size check and the read
        (`show --contents` of a file the agent made huge meanwhile). Its
        stderr (warnings) is appended to `notes` when given."""
        out = bytearray()

        def take(chunk: bytes) -> bool:
            out.extend(chunk)
            return len(out) <= cap

        rc, err, timed_out = self._stream(args, timeout, take, cwd)
        if len(out) > cap:
            return None
        if timed_out:
            raise self._timed_out(args, timeout)
        self._check(args, rc, err, ok, error)
        if notes is not None:
            notes.append(err)
        return bytes(out)

    def run_clipped(self, args: Sequence[StrPath], cap: int, *, ok: Sequence[int] = (0,),
                    timeout: float = 600, cwd: Optional[str] = None) -> Tuple[bytes, bytes, int, bytes]:
        """Run `layover ARGS` as run() does, keeping only the first and the
        last `cap` bytes of its stdout: (head, tail, total bytes, stderr: its
        warnings, such as `'x' matches no change`). A diff of
        gigabytes of text the sandboxed agent wrote never sits whole in this
        process (`layover mcp` runs on the host). tail is b"" when the output
        fits in head."""
        head, tail, total = bytearray(), bytearray(), [0]

        def take(chunk: bytes) -> bool:
            total[0] += len(chunk)
            room = cap - len(head)
            head.extend(chunk[:room] if room > 0 else b"")
            if len(chunk) > room:
                tail.extend(chunk[max(room, 0):])
                del tail[:max(0, len(tail) - cap)]
            return True

        rc, err, timed_out = self._stream(args, timeout, take, cwd)
        if timed_out:
            raise self._timed_out(args, timeout)
        self._check(args, rc, err, ok, PatchError)
        return bytes(head), bytes(tail), total[0], err
