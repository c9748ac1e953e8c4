"""A running REPL child and the calls it serves: run(), exec(), call().

``Repl.spawn`` starts any command that ends in the bootstrap (normally
`layover run ... -- python3 -I -S -c BOOT`), hands it one end of a socketpair,
sends the server source and the control socket, and waits for its greeting.
Sandbox builds on it; the tests also drive it without a sandbox.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from json.encoder import encode_basestring_ascii as _json_str
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _boot
from ._args import path_arg
from ._client import EXEC_SLACK, MAX_PAYLOAD, ReplClient, seconds, socketpair
from ._client_frames import LongNumber, NotJson, json_values_within, strict_json
from ._helper import MAX_MESSAGE, error_for, one_line
from .errors import SandboxError, TimeoutError, ToolError, inert_text, os_reason, sandbox_os_error
from .model import ExecResult, RunResult

__all__ = ["Repl", "default_python", "BOOT"]

BOOT = _boot.BOOT
StrOrBytes = Union[str, bytes, "os.PathLike[str]"]
MAX_RESULT = 256 * 1024 * 1024
MIN_RESULT_VALUES = 1 << 20  # the values a call() result may hold, whatever max_output


def default_python() -> str:
    """The interpreter for the REPL: /usr/bin/python3, visible read-only in
    the sandbox; sys.executable may sit in a directory the sandbox hides."""
    if os.access("/usr/bin/python3", os.X_OK):
        return "/usr/bin/python3"
    return sys.executable


def python_argv(python: str) -> List[str]:
    # -I: no user site, no PYTHON* variables; -S: no site import (start-up
    # time).  The server adds "" (the cwd) to sys.path, as a REPL does.
    return [python, "-I", "-S", "-c", BOOT]


class Repl:
    def __init__(self, proc: "subprocess.Popen[bytes]", client: ReplClient, errlog: IO[bytes],
                 describe: str) -> None:
        self.proc = proc
        self.client = client
        self.errlog = errlog
        self.describe = describe
        self.lock = client.lock  # one request at a time; client.current is the one in flight
        self.info: Dict[str, Any] = {}
        self.gone_fix = ""  # said after "exited with ..." once it had started (the helper printed no line)

    # --- life cycle ---

    @classmethod
    def spawn(cls, make_argv: Callable[[int], List[str]], *, env: Mapping[str, str], cwd: Optional[str] = None,
              startup_timeout: float = 30.0, max_output: int = 512 * 1024 * 1024, set_ipc_env: bool = False,
              describe: str = "sandbox", fix: str = "check the program path", gone_fix: str = "",
              again_fix: str = "") -> "Repl":
        """Start `make_argv(fd)`; fd is the child's end of the IPC socket.
        With set_ipc_env (no helper in between), LAYOVER_IPC_FD is set here."""
        host, child = socketpair()  # requests (and the boot frame): host -> REPL
        rep_host, rep_child = socketpair()  # replies: REPL -> host
        ctl_host, ctl_child = socketpair()  # interrupts: host -> REPL
        # Unbounded helper output goes to an unlinked file, never a pipe that
        # could fill up and block it; the REPL itself writes only to frames.
        errlog = tempfile.TemporaryFile(prefix="layover-")
        env2 = dict(env)
        if set_ipc_env:
            env2["LAYOVER_IPC_FD"] = str(child.fileno())
        argv = make_argv(child.fileno())
        try:
            proc = subprocess.Popen(argv, pass_fds=[child.fileno()], env=env2, cwd=cwd,
                                    stdin=subprocess.DEVNULL, stdout=errlog, stderr=errlog,
                                    start_new_session=True)
        except OSError as e:
            for s in (host, child, rep_host, rep_child, ctl_host, ctl_child):
                s.close()
            errlog.close()
            raise SandboxError("layover: cannot start the %s: %s; %s" % (describe, os_reason(e), fix)) from None
        child.close()
        holder: List[Repl] = []

        def alive() -> Optional[str]:
            return holder[0].exit_reason() if holder else None

        def on_break(_reason: str) -> None:
            if holder:
                holder[0].stop_process()

        try:
            # Fits the socket buffer, so this does not wait for the child.
            host.settimeout(startup_timeout)
            host.sendall(_boot.boot_frame())
            fds = ctl_child.fileno().to_bytes(4, sys.byteorder) + rep_child.fileno().to_bytes(4, sys.byteorder)
            host.sendmsg([b"C"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
            # Each socket carries one direction only: the inside can write
            # nothing to the host but frames on the reply socket.
            host.shutdown(socket.SHUT_RD)
            ctl_host.shutdown(socket.SHUT_RD)
            rep_host.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the child died before reading: hello() reports why
        finally:
            ctl_child.close()
            rep_child.close()
        client = ReplClient(host, ctl_host, alive, on_break, max_output, proc, rep_host)
        repl = cls(proc, client, errlog, describe)
        holder.append(repl)
        try:
            repl.info = client.hello(startup_timeout)
        except SandboxError as e:
            repl.stop_process()
            msg = str(e)
            if msg.startswith("layover: the %s exited with " % describe):  # and said nothing: no helper's line
                msg += " before it started, and %s printed nothing; %s" % (argv[0], fix)
            raise error_for(msg, SandboxError, kernel_hints=True) from None
        repl.gone_fix = gone_fix
        if again_fix:  # what a call after the one that stopped it says
            client.again = ("layover: %s was stopped by an earlier call, which said: " % describe, "; " + again_fix)
        return repl

    def exit_reason(self) -> Optional[str]:
        """None while the child runs; else why it is gone, with the helper's message."""
        rc = self.proc.poll()
        if rc is None:
            return None
        try:
            self.errlog.seek(0, os.SEEK_END)
            size = self.errlog.tell()
            self.errlog.seek(max(0, size - 8192))
            tail = self.errlog.read()
        except (OSError, ValueError):
            tail = b""
        status = "signal %d" % -rc if rc < 0 else "status %d" % rc
        line = one_line(tail, "")
        if line:
            return "%s (the %s exited with %s)" % (line, self.describe, status)
        return "layover: the %s exited with %s%s" % (self.describe, status, self.gone_fix and "; " + self.gone_fix)

    def stop_process(self, grace: float = 5.0) -> None:
        """SIGTERM the child (the helper forwards it inside and keeps the
        session), then SIGKILL after `grace` seconds."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            except OSError:
                pass

    def close(self, timeout: float = 30.0) -> Optional[int]:
        """Ask the REPL to exit and wait for the child; returns its status."""
        if self.client.broken is None and self.proc.poll() is None:
            try:
                with self.lock:
                    self.client.send({"t": "exit"})
            except SandboxError:
                pass
        self.client.close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stop_process()
        try:
            self.errlog.close()
        except OSError:
            pass
        return self.proc.returncode

    @property
    def alive(self) -> bool:
        return self.client.broken is None and self.proc.poll() is None

    # --- calls ---

    def interrupt(self) -> None:
        """Interrupt the running call (KeyboardInterrupt inside); safe from
        another thread.  No-op when idle."""
        rid = self.client.current
        if rid is not None:
            self.client.interrupt(rid)

    def _request(self, header: Dict[str, Any], payload: bytes = b"", **kw: Any) -> Any:
        client = self.client
        with self.lock:
            client.current = client.next_id
            try:
                return client.request(header, payload, **kw)
            finally:
                client.current = None

    def run(self, code: str, timeout: Optional[float] = None, *, interactive: bool = False) -> RunResult:
        return self.client.run_code(code, timeout, interactive)

    def park(self) -> None:
        """Have the REPL wait in / now, off the overlay, as it does once idle
        (before a checkpoint: docs/history.md)."""
        self._request({"t": "park"}, timeout=30.0)

    def exec(self, args: Union[StrOrBytes, Sequence[StrOrBytes]], *, timeout: Optional[float] = None,
             cwd: Optional[StrOrBytes] = None, env: Optional[Mapping[Any, Any]] = None,
             input: Optional[Union[bytes, str]] = None, text: bool = False, shell: bool = False,
             encoding: Optional[str] = None, errors: Optional[str] = None, check: bool = False) -> ExecResult:
        argv = _argv(args, shell)
        if timeout is not None:
            timeout = seconds(timeout)
        textmode = text or encoding is not None or errors is not None
        enc, err = encoding or "utf-8", errors or "replace"
        try:
            reply = None
            if cwd is None and env is None and input is None:  # the usual call: the hot path
                fields = b'"argv":[%s]' % b",".join([_json_str(a).encode("ascii") for a in argv])
                if timeout is not None:
                    fields += b',"timeout":' + json.dumps(float(timeout)).encode("ascii")
                reply = self.client.exec_argv(fields, timeout)
            if reply is None:
                reply = self._exec_general(argv, timeout, cwd, env, input, enc)
        except TimeoutError as e:
            e.cmd = argv
            if not e.stopped:  # the REPL did not report in time: the client's backstop interrupted it
                e.message = _exec_timed_out(argv, shell, timeout, "interrupted")
            if textmode:
                e.stdout = _text(e.stdout, enc, err)  # type: ignore[arg-type]
                e.stderr = _text(e.stderr, enc, err)  # type: ignore[arg-type]
            raise
        done = reply.done
        out, errb = reply.data("stdout"), reply.data("stderr")
        if done.get("oserror") is not None:
            code = done.get("oserror")
            # From inside, as it came (a process there can forge it): shortened, and made inert.
            msg = (reply.text(0) or "cannot run %r" % argv[:1])[:MAX_MESSAGE]
            name = done.get("filename")
            if isinstance(code, int) and code > 0 and not isinstance(code, bool):
                raise sandbox_os_error(code, msg, name[:MAX_MESSAGE] if isinstance(name, str) else None,
                                       "exec inside the sandbox")
            raise SandboxError(inert_text("layover: exec inside the sandbox failed: " + msg, keep=""))
        rc = done.get("returncode")
        if not isinstance(rc, int) or isinstance(rc, bool):
            raise self.client.fail("layover: the REPL sent a malformed exec result; the sandbox was "
                                   "stopped and its session kept")
        stdout: Union[bytes, str] = _text(out, enc, err) if textmode else out
        stderr: Union[bytes, str] = _text(errb, enc, err) if textmode else errb
        if done.get("timed_out"):
            how = "left_open" if done.get("left_open") is True else "killed"
            raise TimeoutError(_exec_timed_out(argv, shell, timeout, how), timeout=timeout, stdout=stdout,
                               stderr=stderr, cmd=argv)
        if done.get("interrupted"):
            raise KeyboardInterrupt()
        result = ExecResult(argv, rc, stdout, stderr)
        if check:
            result.check_returncode()
        return result

    def _exec_general(self, argv: List[str], timeout: Optional[float], cwd: Optional[StrOrBytes],
                      env: Optional[Mapping[Any, Any]], input: Optional[Union[bytes, str]], enc: str) -> Any:
        if cwd is not None:
            _no_nul("cwd", [os.fsdecode(cwd)])
        header: Dict[str, Any] = {"t": "exec", "argv": argv,
                                  "cwd": os.fsdecode(cwd) if cwd is not None else None,
                                  "env": _env(env),
                                  "timeout": float(timeout) if timeout is not None else None}
        extra = []
        if input is not None:
            if isinstance(input, str):
                data = input.encode(enc)
            elif isinstance(input, (bytes, bytearray, memoryview)):
                data = bytes(input)
            else:  # bytes(5) is five NULs: an int was sent as such (attack pass of 27 Nov)
                raise TypeError("exec(): input must be bytes or str, as in subprocess, not %s" % type(input).__name__)
            header["stdin"] = True
            chunks = [data[i:i + MAX_PAYLOAD] for i in range(0, len(data), MAX_PAYLOAD)] or [b""]
            extra = [({"t": "stdin", "more": i < len(chunks) - 1}, c) for i, c in enumerate(chunks)]
        return self._request(header, timeout=timeout, backstop=EXEC_SLACK, extra=extra)

    def call(self, source: str, name: str, args: Sequence[Any] = (), kwargs: Optional[Mapping[str, Any]] = None,
             self_attrs: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """Run the function `name` defined by `source` inside; arguments and
        result travel as JSON.  Raises ToolError with the inside traceback."""
        if timeout is not None:
            timeout = seconds(timeout)
        req = call_request(source, name, args, kwargs, self_attrs)
        # The most the REPL may send back: within max_output with its frames' headers, so a large value is
        # refused inside, with a message, rather than stopping the sandbox past max_output.
        req["max"] = max(0, min(MAX_RESULT, self.client.max_output - 65536 - 128 * (
            self.client.max_output // MAX_PAYLOAD + 1)))
        req["values"] = most = result_values(self.client.max_output)  # the same bound as below, kept inside too
        try:
            data = json.dumps(req, allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, RecursionError) as e:
            raise TypeError("call(): args, kwargs and self_attrs travel as JSON: %s" % e) from None
        if len(data) > MAX_PAYLOAD:
            raise ValueError("call(): the tool's source and arguments are %d bytes of JSON, past the limit of %d; "
                             "pass large data in a file" % (len(data), MAX_PAYLOAD))
        reply = self._request({"t": "call"}, data, timeout=timeout)
        if reply.text(0) is not None or not reply.done.get("ok"):
            raise ToolError(reply.text(0) or "tool %s failed inside the sandbox" % name)
        raw = reply.data("result")
        if len(raw) > MAX_RESULT:  # the REPL refuses such a value itself: this one was forged inside
            raise SandboxError("layover: tool result larger than %d bytes; return less, or write it to a file "
                               "and read it with changed_files()" % MAX_RESULT)
        if not json_values_within(raw, most):
            raise SandboxError("layover: tool %s's result holds more than %d JSON values (max_output / 64), too many "
                               "to build on the host; return fewer, or write them to a file and read it with "
                               "changed_files()" % (name, most))
        try:
            # Strict: a NaN or Infinity here was forged inside (the REPL's JSON refuses them).
            return strict_json(raw.decode("utf-8"))
        except RecursionError:  # whole and in step, but nested past this thread's stack: the REPL goes on
            raise SandboxError("layover: tool %s's result is nested too deeply to read on this thread's stack; "
                               "return a flatter value" % name) from None
        except LongNumber as e:  # whole and in step: the REPL goes on (int() of it was quadratic; attack30)
            raise SandboxError("layover: tool %s's result holds a number of %d digits, more than %d; return it as "
                               "a str" % (name, e.args[0], e.args[1])) from None
        except NotJson as e:
            raise self.client.fail("layover: the REPL sent a malformed tool result (%s); the sandbox was "
                                   "stopped and its session kept" % e) from None
        except ValueError:
            raise self.client.fail("layover: the REPL sent a malformed tool result; the sandbox was "
                                   "stopped and its session kept") from None


def result_values(max_output: int) -> int:
    """The JSON values a call() result may hold: each parsed is a Python
    object here (~80 bytes for 3 of "[],"), so bounded by max_output too."""
    return max(MIN_RESULT_VALUES, max_output // 64)


def call_request(source: Any, name: Any, args: Any, kwargs: Any, self_attrs: Any) -> Dict[str, Any]:
    """call()'s request, its arguments checked: a wrong type is a TypeError
    naming it, raised here rather than as a KeyError inside."""
    if not isinstance(source, str):
        raise TypeError("call(): source must be a str of Python source, not %s" % type(source).__name__)
    if not isinstance(name, str) or not name.isidentifier():
        raise (TypeError if not isinstance(name, str) else ValueError)(
            "call(): name must be the name of a function the source defines, not %r" % (name,))
    if isinstance(args, (str, bytes, Mapping)) or not isinstance(args, Sequence):
        raise TypeError("call(): args must be a list (or tuple) of arguments, not %s" % type(args).__name__)
    for what, m in (("kwargs", kwargs), ("self_attrs", self_attrs)):
        if m is not None and not isinstance(m, Mapping):
            raise TypeError("call(): %s must be a mapping (or None), not %s" % (what, type(m).__name__))
    req: Dict[str, Any] = {"source": source, "name": name, "args": list(args), "kwargs": dict(kwargs or {})}
    if self_attrs is not None:
        req["self"] = dict(self_attrs)
    return req


def _text(data: Any, encoding: str = "utf-8", errors: str = "replace") -> Any:
    if isinstance(data, (bytes, bytearray)):
        return bytes(data).decode(encoding, errors)
    return data


def _env(env: Optional[Mapping[Any, Any]]) -> Optional[Dict[str, str]]:
    """exec()'s env as subprocess takes it: str or bytes names and values
    (bytes as their exact bytes, through os.fsdecode); anything else is a
    TypeError, as there."""
    if env is None:
        return None
    out = {}
    for k, v in env.items():
        if not isinstance(k, (str, bytes)) or not isinstance(v, (str, bytes)):
            raise TypeError("exec(): env names and values must be str or bytes, as in subprocess")
        out[os.fsdecode(k)] = os.fsdecode(v)
    _no_nul("an env name or value", list(out) + list(out.values()))
    return out


def _exec_timed_out(argv: List[str], shell: bool, timeout: Optional[float], how: str) -> str:
    """The message of an exec() past its timeout: the command as the caller
    wrote it (a repr: no control character reaches the terminal), shortened,
    the timeout, and the fix."""
    if shell:  # _argv's ["/bin/sh", "-c", CMD] or ["/bin/sh", "-c", CMD, "sh", ARG...]
        given = repr(argv[2]) if len(argv) == 3 else repr(argv[2:3] + argv[4:])
    else:
        given = repr(argv[0]) if len(argv) == 1 else repr(argv)
    if len(given) > 80:
        given = given[:77] + "..."
    if shell:
        given += ", shell=True"
    if how == "left_open":  # the command exited; a process it left running held its pipes (subprocess waits too)
        return ("layover: exec(%s) exited, but a process it left running kept its stdout or stderr open past the "
                "timeout of %g s, and was killed; send that process's output elsewhere ('cmd > cmd.log 2>&1 &') "
                "or start it with run() and subprocess.Popen" % (given, timeout if timeout is not None else 0.0))
    return ("layover: exec(%s) timed out after %g s and was %s; pass a larger timeout= (seconds; None for no "
            "limit) if it needs longer" % (given, timeout if timeout is not None else 0.0, how))


def _argv(args: Union[StrOrBytes, Sequence[StrOrBytes]], shell: bool) -> List[str]:
    if isinstance(args, (str, bytes, os.PathLike)):
        one = os.fsdecode(args)
        _no_nul("the command", [one])
        return ["/bin/sh", "-c", one] if shell else [one]
    try:
        words = list(args)
    except TypeError:  # exec(5): not "'int' object is not iterable"
        raise TypeError("exec() takes a list of arguments (str, bytes or os.PathLike), or a str with shell=True, "
                        "not %s %r" % (type(args).__name__, args)) from None
    argv = [path_arg("exec() argument %d" % i, a) for i, a in enumerate(words)]
    _no_nul("an argument", argv)
    if shell:
        return ["/bin/sh", "-c"] + argv[:1] + (["sh"] + argv[1:] if len(argv) > 1 else [])
    if not argv:
        raise ValueError("exec() needs a command")
    return argv


def _no_nul(what: str, words: Sequence[str]) -> None:
    """A NUL can reach no argv word, env entry or path: a ValueError here, as
    subprocess raises, naming it (found by the attack pass of 27 Nov: the
    REPL inside failed and it came back as SandboxError "exec inside the
    sandbox failed: ValueError: embedded null byte", naming nothing)."""
    for w in words:
        if "\0" in w:
            raise ValueError("exec(): %s holds a NUL byte, which none can hold: %r" % (what, w))
