"""``Sandbox``: a Python REPL inside `layover run`, plus the session's review.

Changes, diff, save and apply are the helper's verbs (`layover status`,
`diff`, `save`, `apply`, `discard`); nothing here reads the upper layer.
"""
from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Type, Union

from ._args import (choice_arg, flags_arg, label_arg, options_arg, path_arg, profile_args, python_words, session_arg,
                    step_number, subprocess_args)
from ._gate import WriteGate, nothing
from ._helper import SESSION_CWD, Helper, StrPath, literal_path
from ._sandbox_files import changed_files
from ._sandbox_steps import end_step
from .errors import PatchError, SandboxError
from .model import (ApplyResult, Change, ExecResult, Rejection, RunResult, SessionInfo, Step, parse_change,
                    parse_list, parse_rejection, parse_step)
from .repl import Repl, StrOrBytes, default_python, python_argv
from .review import apply_lists, apply_session, list_sessions, one_word_refused, review_on_exit, warn_unmatched

__all__ = ["Sandbox"]

ON_EXIT = ("keep", "discard", "apply", "prompt")
NETWORK = ("loopback", "none", "host")


def new_session_name() -> str:
    return "py-%s-%s" % (time.strftime("%Y%m%d-%H%M%S"), secrets.token_hex(3))


class Sandbox:
    """A persistent Python REPL inside a layover sandbox over ``target``.

    Everything it writes lands in the session's upper layer; the real target
    is untouched until ``apply()``.  Use it as a context manager; on leaving
    the block, ``on_exit`` decides: "keep" (default: the session stays for
    ``Sandbox.resume``/``layover apply``), "discard", "apply" (only when the
    block raised nothing; otherwise kept) or "prompt" (``review_on_exit``).
    ``keep_empty=False`` removes the session when the sandbox stops with no
    changes (the default keeps it: this object still names it; `layover gc`
    removes empty sessions). ``steps=True`` makes each ``run()`` and
    ``exec()`` a step of the session (``log()``, ``checkpoint()``); a step
    that finds the sandbox busy is deferred and merged into the next.
    """

    def __init__(self, target: StrPath = "~", *, network: str = "loopback", session: Optional[str] = None,
                 on_exit: str = "keep", state_dir: Optional[StrPath] = None, binary: Optional[str] = None,
                 python: Optional[str] = None, tmp_size: Optional[str] = None, startup_timeout: float = 30.0,
                 max_output: int = 512 * 1024 * 1024, env: Optional[Mapping[str, str]] = None,
                 env_keep: Iterable[str] = (), env_clear: bool = False, hide: Iterable[StrPath] = (),
                 hide_secrets: bool = True, helper_env: Optional[Mapping[str, str]] = None,
                 timeout: Optional[str] = None, max_pids: Optional[int] = None, max_size: Optional[str] = None,
                 max_memory: Optional[str] = None, keep_empty: bool = True, start: bool = True,
                 steps: bool = False, min_free: Optional[str] = None) -> None:
        choice_arg("network", network, NETWORK)
        choice_arg("on_exit", on_exit, ON_EXIT)
        if isinstance(env_keep, (str, bytes)) or isinstance(hide, (str, bytes)):
            raise TypeError("env_keep and hide take a list, e.g. hide=[\"~/.config/secret\"]")
        flags_arg(steps=steps, keep_empty=keep_empty, start=start, env_clear=env_clear, hide_secrets=hide_secrets)
        self.profile_args = profile_args(env, env_keep, env_clear, hide, hide_secrets)
        options_arg(python, binary, startup_timeout, max_output, {"tmp_size": tmp_size, "timeout": timeout,
                                                                  "max_pids": max_pids, "max_size": max_size,
                                                                  "max_memory": max_memory, "min_free": min_free})
        for flag, value in (("--timeout", timeout), ("--max-pids", max_pids), ("--max-size", max_size),
                            ("--max-memory", max_memory), ("--min-free", min_free)):
            if value is not None:
                self.profile_args += [flag, str(value)]
        if session is not None:
            session_arg("session", session)
        target = path_arg("target", target)  # bytes too, as os.fsdecode takes them
        if not target:  # an unset variable: never the cwd, which realpath("") is
            raise ValueError("layover: target is empty; pass an existing tree (default: your home, '~')")
        self.target = os.path.realpath(os.path.expanduser(target))
        self.name = session or new_session_name()
        self.network = network
        self.on_exit = on_exit
        self.python = python or default_python()
        self.tmp_size = tmp_size
        self.startup_timeout = startup_timeout
        self.max_output = max_output
        self.keep_empty = keep_empty
        self.helper = Helper(binary, None if state_dir is None else path_arg("state_dir", state_dir), helper_env)
        self.exit_code: Optional[int] = None
        self._repl: Optional[Repl] = None
        self._owner = os.getpid()  # the process whose REPL it is (a fork()ed child's calls are refused)
        self._discarded = False  # by discard(): a call then says so, never "Sandbox.resume()" it (newuser17)
        self.steps = steps
        self._deferred: List[str] = []
        self._gate = WriteGate()  # steps=True: run()/exec() in threads never meet a step's freeze
        if start:
            self.start()

    # --- life cycle ---

    def _run_argv(self, fd: int) -> List[str]:
        argv = self.helper.argv("run", "--target", self.target, "--session", self.name, "--on-exit", "keep",
                                "--network", self.network, "--ipc-fd", str(fd))
        if self.tmp_size:
            argv += ["--tmp-size", self.tmp_size]
        # `layover sessions` shows this label, never the bootstrap command.
        argv += ["--label", "python: Sandbox(%r)" % _shown(self.target)]
        if self.keep_empty:
            argv.append("--keep-empty")
        return argv + ["--quiet"] + self.profile_args + ["--"] + python_argv(self.python)

    def start(self) -> "Sandbox":
        """Start (or, after close(), resume) the sandbox and its REPL."""
        if self._repl is not None and self._repl.alive:
            return self
        if not os.path.isdir(self.target):
            raise SandboxError("layover: target %s: %s; pass an existing tree" % (
                self.target, "not a directory" if os.path.exists(self.target) else "does not exist"))
        self._owner, self._discarded = os.getpid(), False
        try:
            self._repl = Repl.spawn(self._run_argv, env=self.helper.env, cwd=self.target,
                                    startup_timeout=self.startup_timeout, max_output=self.max_output,
                                    describe="sandbox (session %s)" % self.name,
                                    fix="set LAYOVER_BIN or binary= to the layover helper, or reinstall",
                                    gone_fix="the code ended its REPL (os._exit, a signal) or the sandbox was "
                                    "stopped; its session is kept: start() starts it again",
                                    again_fix="start() starts it again (its session was kept)")
        except SandboxError as e:  # the helper's fix named the CLI's option, which a Python caller never typed
            bad = python_words(str(e))  # a limit it refused (max_size="lots"): an argument error
            if bad:
                raise ValueError(bad) from None
            raise type(e)(str(e).replace(" --session name", " session= name")) from None
        return self

    @classmethod
    def resume(cls, name: str, *, state_dir: Optional[StrPath] = None, binary: Optional[str] = None,
               **kwargs: Any) -> "Sandbox":
        """Attach to a kept (or crashed) session: a new REPL over its changes."""
        session_arg("name", name)
        # With the environment the Sandbox runs the helper with: a state dir
        # helper_env names was not looked in (attack51).
        helper = Helper(binary, state_dir, kwargs.get("helper_env"))
        for s in list_sessions(helper=helper):
            if s.name == name:
                if s.status == "running":
                    raise SandboxError("layover: session %s is running (pid %s); close() the Sandbox that runs it, "
                                       "or end that process, first" % (name, s.pid))
                return cls(s.target, session=name, state_dir=state_dir, binary=binary, **kwargs)
        # The helper says why: in the trash (and how to restore it), a typo
        # of another session's name, or a directory given for a name.
        helper.run(["status", name, "--json"], error=SandboxError, cwd=SESSION_CWD)
        raise SandboxError("layover: session %s not found; list them with 'layover sessions'" % name)

    @property
    def session(self) -> str:
        """The session's name, as ``Sandbox(session=...)`` takes it: the same as ``name``."""
        return self.name

    @property
    def running(self) -> bool:
        return self._repl is not None and self._owner == os.getpid() and self._repl.alive

    def close(self) -> Optional[int]:
        """Stop the REPL and the helper; the session is kept.  Idempotent."""
        if self._repl is not None:
            if self._owner == os.getpid():  # a fork()ed child's close() must not stop its parent's sandbox
                self.exit_code = self._repl.close()
            self._repl = None
        return self.exit_code

    def __enter__(self) -> "Sandbox":
        return self.start()

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()
        if self.on_exit == "discard":
            self.discard()
        elif self.on_exit == "apply" and exc_type is None:
            self.apply()
        elif self.on_exit == "prompt" and exc_type is None:
            review_on_exit(self)

    def __reduce__(self) -> Any:  # pickle, copy: the REPL's sockets cannot go along
        raise TypeError("a Sandbox cannot be pickled or copied: it holds its REPL's sockets; pass its name "
                        "(%r) and, once this process close()d it, Sandbox.resume(name) there" % self.name)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return "<Sandbox %s over %s, %s>" % (self.name, self.target, state)

    def _json(self, args: List[StrPath], obj: bool = False, **kw: Any) -> Any:
        """`layover ARGS` (a --json verb) parsed; obj: it must print an object."""
        r = self.helper.run(args, **kw)
        verb = "'layover %s --json'" % args[0]
        try:
            data = json.loads(r.stdout.decode("utf-8"))
        except (ValueError, RecursionError) as e:
            raise SandboxError("layover: %s printed invalid JSON (%s)" % (verb, e)) from None
        if obj and not isinstance(data, dict):
            raise SandboxError("layover: %s printed no object" % verb)
        return data

    # --- the REPL ---

    def _live(self) -> Repl:
        if self._repl is not None and self._owner != os.getpid():
            # Its sockets are shared with the parent: each process would read
            # the other's replies (a child's run("0") returned the parent's 1000).
            raise SandboxError("layover: sandbox %s belongs to process %d, which started it; a child process "
                               "(os.fork, multiprocessing) cannot use its REPL: start a Sandbox of its own there, "
                               "or Sandbox.resume(%r) once the parent close()d it" % (self.name, self._owner, self.name))
        if self._repl is None:
            raise SandboxError("layover: sandbox %s was discarded (discard()), its session and changes with it; "
                               "start() starts an empty session of that name, or make a new Sandbox()" % self.name
                               if self._discarded else "layover: sandbox %s is not running; start() it or "
                               "Sandbox.resume(%r)" % (self.name, self.name))
        return self._repl

    def run(self, code: str, timeout: Optional[float] = None, *, interactive: bool = False) -> RunResult:
        """Run Python code in the persistent REPL as a script: stdout holds
        only what it prints; the repr() of a final expression is
        ``RunResult.value``.  ``interactive=True`` runs it statement by
        statement and echoes every expression's value, as the REPL does."""
        repl = self._repl
        if repl is None or self._owner != os.getpid():
            self._live()  # raises
        if not self.steps:
            return repl.client.run_code(code, timeout, interactive)  # type: ignore[union-attr]
        with self._gate.writing():
            result = repl.client.run_code(code, timeout, interactive)  # type: ignore[union-attr]
        self._step("run: " + (code.strip().splitlines() or [""])[0])
        return result

    def exec(self, args: Union[StrOrBytes, Sequence[StrOrBytes]], *, timeout: Optional[float] = None,
             cwd: Optional[StrOrBytes] = None, env: Optional[Mapping[Any, Any]] = None,
             input: Optional[Union[bytes, str]] = None, text: bool = False, shell: bool = False,
             encoding: Optional[str] = None, errors: Optional[str] = None, check: bool = False,
             **subprocess_kw: Any) -> ExecResult:
        """Run a command inside the sandbox, like subprocess.run(capture_output=True).  subprocess.run's
        capture_output=True, stdout=/stderr=PIPE and universal_newlines= are taken as it takes them."""
        text = subprocess_args(text, subprocess_kw)
        try:
            with self._gate.writing() if self.steps else nothing():
                return self._live().exec(args, timeout=timeout, cwd=cwd, env=env, input=input, text=text,
                                         shell=shell, encoding=encoding, errors=errors, check=check)
        finally:
            if self.steps:
                words = [args] if isinstance(args, (str, bytes, os.PathLike)) else (
                    list(args) if isinstance(args, Iterable) else [])  # exec(5): its own TypeError, not list()'s
                self._step("exec: " + " ".join(w.decode("utf-8", "replace") if isinstance(w, bytes) else str(w)
                                                for w in words))

    def _step(self, label: str) -> None:
        """steps=True: end a step after each run()/exec(), or defer it with a
        StepDeferredWarning (_sandbox_steps.py)."""
        end_step(self, label)

    @property
    def deferred_steps(self) -> Tuple[str, ...]:
        """steps=True: the labels of the steps deferred since the last one
        made (each was a StepDeferredWarning); the next step merges them."""
        return tuple(self._deferred)

    def call(self, source: str, name: str, args: Sequence[Any] = (), kwargs: Optional[Mapping[str, Any]] = None,
             self_attrs: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = None) -> Any:
        """Call function `name` from `source` inside; JSON in, JSON out."""
        return self._live().call(source, name, args, kwargs, self_attrs, timeout)

    def interrupt(self) -> None:
        """Interrupt the running run()/exec()/call() (from another thread)."""
        if self._repl is not None and self._owner == os.getpid():
            self._repl.interrupt()

    # --- changes and review (the helper's verbs) ---

    def changes(self, include_ignored: bool = False, *, step: Optional[int] = None) -> List[Change]:
        """The session's changes, live while the sandbox runs. Paths the ignore
        rules leave out (caches, .layoverignore) come too with include_ignored,
        flagged Change.ignored.  step=N: only what step N made, against the
        view just before it (`layover status --step N`; see log())."""
        args: List[StrPath] = ["status", self.name, "--json"]
        if include_ignored:
            args.append("--include-ignored")
        if step is not None:
            args += ["--step", str(step_number("step", step, 1))]
        return parse_list(self._json(args), parse_change, "a status")

    def changed_files(self) -> Dict[str, bytes]:
        """{path: content} of the files added or modified (agentlib's API).
        Read by the helper from the session's layers (`layover show NAME
        --contents`), never through the REPL: the REPL is the agent's own
        process, and code it ran can make any read there return anything."""
        return changed_files(self)

    def deleted_files(self) -> List[str]:
        """Paths deleted in the sandbox (agentlib's API)."""
        return [c.path for c in self.changes() if c.kind == "deleted"]

    def diff(self, paths: Iterable[StrPath] = (), *, stat: bool = False) -> str:
        """The changes as a git-format diff, from `layover diff`."""
        one_word_refused("paths", paths)
        args: List[StrPath] = ["diff", self.name, "--color=never"]
        if stat:
            args.append("--stat")
        extra = [literal_path(path_arg("paths", p)) for p in paths]
        if "" in extra:  # '' is the target itself: every change, never the one path meant
            raise ValueError("paths holds an empty path (''), which would select every change; name paths "
                             "relative to the target, or pass no paths for the whole diff")
        if extra:
            args += ["--"] + extra
        notes: List[bytes] = []  # what the agent wrote can be gigabytes of text: never read whole
        out = self.helper.run_capped(args, self.max_output, ok=(0, 1), cwd=SESSION_CWD, notes=notes)
        warn_unmatched(b"".join(notes), stacklevel=3)  # a path that selects no change, as apply() warns
        if out is None:
            raise SandboxError("layover: the diff exceeds max_output=%d bytes; read it with 'layover diff %s', "
                               "pass paths or stat=True, or raise max_output" % (self.max_output, self.name))
        return out.decode("utf-8", "surrogateescape")

    def log(self) -> List[Step]:
        """The session's steps, newest first, from `layover log --json`
        (docs/history.md): each resume of a kept session (start() after
        close()) froze the run before it as a step; the live changes come
        first, as a Step with step=None."""
        data = self._json(["log", self.name, "--json"], obj=True)
        return parse_list(data.get("steps"), parse_step, "a log")

    def checkpoint(self, label: Optional[str] = None) -> int:
        """End the current step (docs/history.md): the changes since the last
        step become a frozen step, labelled `label`, and the sandbox goes on
        over a fresh live layer, with its REPL state. Returns the step's
        number, or 0 when nothing changed since the last step. Raises
        SandboxError, naming the process and path, while a process inside
        holds a file open for writing or has its working directory in the
        target (nothing changes then)."""
        args: List[StrPath] = ["checkpoint", self.name, "--json"]
        if label_arg(label):
            args += ["-m", label]
        self._park()
        data = self._json(args, error=SandboxError)
        step = data.get("step") if isinstance(data, dict) else None
        return step if isinstance(step, int) and not isinstance(step, bool) else 0

    def rejections(self) -> List[Rejection]:
        """The changes a person rejected (`layover reject`), oldest first, with
        their reasons, from `layover rejections --json`: state "rejected" ones
        later applies skip; "superseded" ones were changed since and are
        reviewed anew (docs/review.md, "Rejections")."""
        data = self._json(["rejections", self.name, "--json"], obj=True)
        return parse_list(data.get("rejections"), parse_rejection, "a rejection list")

    def _park(self) -> None:
        # The REPL leaves the overlay now, not only once idle (it waits in /
        # after IDLE_PARK_US): a freeze refuses a process with its cwd there.
        if self._repl is not None and self._owner == os.getpid() and self._repl.client.broken is None:
            try:
                self._repl.park()
            except SandboxError:
                pass  # a REPL gone: the freeze itself says what holds it up

    def rollback(self, step: int, *, undo: bool = False) -> None:
        """Make the session's files what they were at the end of `step` (0:
        the real tree alone); the later steps are set aside, and
        rollback(0, undo=True) brings them back while nothing was done since.
        A running sandbox is rolled back in place by its supervisor
        (docs/history.md, "A running session") and keeps its REPL: a rollback
        does not roll back the REPL's Python state (variables, imports, open
        files), only the files, which its next run() sees.  Raises
        SandboxError, changing nothing, while a process inside holds a file
        open for writing or has its working directory in the target (as
        checkpoint() does); close() first to roll back a stopped sandbox."""
        args: List[StrPath] = ["rollback", self.name] + (["--undo"] if undo else [str(step_number("step", step))])
        self._park()
        self.helper.run(args, error=SandboxError)

    def revert(self, step: int) -> int:
        """Take back step `step` alone and keep the later ones (`layover
        revert`): a new step holds its inverse; returns that step's number.
        Raises SandboxError, naming each path, when a later step touched one
        of its paths (nothing changes then), or, for a running sandbox, under
        the same rule as checkpoint().  A running sandbox is reverted in
        place and keeps its REPL: its Python state is not reverted, only the
        files, which its next run() sees."""
        step = step_number("step", step, 1)
        self._park()
        self.helper.run(["revert", self.name, str(step)], error=SandboxError)
        # Its label: "revert N: ..." (a running sandbox's live changes are frozen above it).
        mark = "revert %d: " % int(step)
        return max((s.step for s in self.log() if s.step is not None and s.label.startswith(mark)), default=0)

    def fork(self, name: str, *, at: Optional[int] = None, start: bool = False, **kwargs: Any) -> "Sandbox":
        """A new session `name` with this one's steps (1..`at`, default all)
        and an empty live layer, independent from then on (`layover fork`,
        docs/history.md).  Without `at` its live changes become a step, so the
        fork sees everything done so far: a running sandbox goes on (its
        supervisor freezes them, under the same rule as checkpoint()).  The
        REPL's Python state is not copied.  The new Sandbox is returned
        stopped unless start=True; kwargs are Sandbox options for it."""
        args: List[StrPath] = ["fork", self.name, session_arg("name", name)]
        args += [] if at is None else ["--at", str(step_number("at", at))]
        kwargs.setdefault("network", self.network)
        kwargs.setdefault("python", self.python)
        kwargs.setdefault("helper_env", self.helper.env)
        # Made first, so a bad option is refused before the fork: it was made, then the TypeError raised.
        child = Sandbox(self.target, session=name, binary=self.helper.binary, start=False, **kwargs)
        self._park()
        self.helper.run(args, error=SandboxError)
        return child.start() if start else child

    def save(self, path: StrPath) -> Path:
        """Write the session's patch (tar+zstd) to `path` ("~" expanded)."""
        path = os.path.expanduser(path_arg("path", path))
        if not path:
            raise ValueError("layover: save(): path is empty; pass the file to write, e.g. 'work.tar.zst'")
        self.helper.run(["save", self.name, "-o", path])
        return Path(path)

    def tarball(self) -> bytes:
        """The session's patch, as bytes."""
        with tempfile.TemporaryDirectory(prefix="layover-") as d:
            p = Path(d) / "patch.tar.zst"
            self.save(p)
            return p.read_bytes()

    def apply(self, paths: Optional[Iterable[StrPath]] = None, *, force: bool = False,
              exclude: Iterable[str] = (), target: Optional[StrPath] = None, dry_run: bool = False,
              undo_to: Optional[StrPath] = None) -> ApplyResult:
        """Apply the changes to the real target.  The helper refuses to apply
        a running session, so this stops the sandbox first; a dry run writes
        nothing and leaves it running (its result's `running` then says the
        changes may still change).  Raises ConflictError (nothing written)
        when the real tree changed."""
        paths, exclude = apply_lists(paths, exclude)  # before the sandbox is stopped for nothing
        for what, value in (("target", target), ("undo_to", undo_to)):
            if value is not None:
                path_arg(what, value)
        if not dry_run:
            self.close()
        return apply_session(self.helper, self.name, paths=paths, force=force, exclude=exclude,
                             target=target, dry_run=dry_run, undo_to=undo_to)

    def discard(self) -> None:
        """Stop the sandbox and delete the session and its changes at once
        (``layover discard NAME --now``: no trash entry is left behind)."""
        self.close()
        self.helper.run(["discard", self.name, "--now"], error=SandboxError)
        self._discarded = True

    def info(self) -> SessionInfo:
        for s in list_sessions(helper=self.helper):
            if s.name == self.name:
                return s
        raise PatchError("layover: no session named '%s'; list them with 'layover sessions'" % self.name)


def _shown(path: str) -> str:
    """path with the home dir as ~, as a user would have typed it."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home):]
    return path
