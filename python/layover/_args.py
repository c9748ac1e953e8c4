"""Argument checks of the public API, made before anything starts: a wrong
type is a TypeError naming the argument and what it takes, never the
"'int' object is not iterable" of some call deep inside."""
from __future__ import annotations

import math
import operator
import os
import re
import subprocess
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

__all__ = ["path_arg", "env_arg", "label_arg", "step_number", "subprocess_args", "session_arg", "options_arg",
           "python_words", "profile_args"]


def path_arg(what: str, value: Any) -> str:
    """A path argument (str, bytes or os.PathLike) as a str; bytes are
    decoded as os.fsdecode does, so a name that is not UTF-8 round-trips."""
    try:
        return os.fsdecode(value)
    except TypeError:
        raise TypeError("%s must be a str, bytes or os.PathLike, not %s %r"
                        % (what, type(value).__name__, value)) from None


def session_arg(what: str, value: Any) -> str:
    """A session name (Sandbox(session=), fork(name), resume(name)), as the
    helper checks it, but before anything starts: its refusal named the
    CLI's words (`--session`, 'layover run --help'), a SandboxError."""
    if not isinstance(value, str):
        raise TypeError("%s must be a session name (a str), not %s %r" % (what, type(value).__name__, value))
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", value) or value.startswith("-"):
        raise ValueError("%s must be 1-64 of A-Z a-z 0-9 . _ -, not starting with -, not %r" % (what, value))
    return value


def options_arg(python: Any, binary: Any, startup_timeout: Any, max_output: Any, words: Dict[str, Any]) -> None:
    """Sandbox()'s other arguments, by type: a wrong one was taken, to fail
    later as a TypeError naming nothing (python=5: "expected str, bytes or
    os.PathLike object"), or never (max_output="x": the sandbox ran, each
    call then failing). Values the helper checks (max_size="lots") it
    refuses at start(), as a ValueError in these words (python_words)."""
    for what, v in (("python", python), ("binary", binary)):
        if v is not None and not isinstance(v, str):
            raise TypeError("%s must be a path (a str) or None, not %s %r" % (what, type(v).__name__, v))
    for what, v, low in (("startup_timeout", startup_timeout, 0.0), ("max_output", max_output, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (what == "max_output" and isinstance(v, float)):
            raise TypeError("%s must be a number of %s, not %s %r" % (
                what, "seconds" if what == "startup_timeout" else "bytes (an int)", type(v).__name__, v))
        if not v > low or (isinstance(v, float) and math.isnan(v)):
            raise ValueError("%s must be more than %s, not %r" % (what, low, v))
    for what, v in words.items():
        if v is not None and (isinstance(v, bool) or not isinstance(v, (str, int))
                              or (what == "max_pids" and not isinstance(v, int))):
            raise TypeError("%s must be %s or None, not %s %r" % (
                what, "an int" if what == "max_pids" else "a str (\"2G\", \"10m\")", type(v).__name__, v))


_BAD_RUN_VALUE = re.compile(r"layover: run: bad --(timeout|max-pids|max-size|max-memory|min-free|tmp-size) ('.*'); "
                            r"(.*); see 'layover run --help'")


def python_words(message: str) -> Optional[str]:
    """The helper's refusal of a Sandbox() limit (`bad --max-size 'lots'`)
    in the argument's name, or None for any other message."""
    m = _BAD_RUN_VALUE.search(message)
    if m is None:
        return None
    return "layover: bad %s=%s; %s" % (m.group(1).replace("-", "_"), m.group(2), m.group(3))


def flags_arg(**flags: Any) -> None:
    """True/False options: a str ("no", "false") is true, so it would turn
    the option on (steps="no" did, before newuser17): a TypeError."""
    for what, v in flags.items():
        if not isinstance(v, bool):
            raise TypeError("%s must be True or False, not %s %r" % (what, type(v).__name__, v))


def env_arg(env: Optional[Mapping[Any, Any]]) -> List[str]:
    """Sandbox(env=...) as NAME=VALUE words: names and values str."""
    if env is None:
        return []
    if not isinstance(env, Mapping):
        raise TypeError("env must be a mapping of variable names to values, e.g. env={'LANG': 'C'}, not %s"
                        % type(env).__name__)
    out = []
    for name, value in env.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise TypeError("env: names and values must be str, not env[%r] = %r; pass str(value)" % (name, value))
        if not name or "=" in name or "\0" in name or "\0" in value:
            raise ValueError("env: bad variable %r; names are [A-Za-z_][A-Za-z0-9_]*" % (name,))
        out.append("%s=%s" % (name, value))
    return out


def choice_arg(what: str, value: Any, choices: Sequence[str]) -> str:
    """One of a fixed set of words (network=, on_exit=): another type is a
    TypeError (network=True was a ValueError before newuser17, on_exit=True
    before attack39), another word a ValueError."""
    if not isinstance(value, str):
        raise TypeError("%s must be a str, one of %s, not %s %r" % (what, tuple(choices), type(value).__name__, value))
    if value not in choices:
        raise ValueError("%s must be one of %s, not %r" % (what, tuple(choices), value))
    return value


def label_arg(label: Any) -> Optional[str]:
    """A step's label (checkpoint(label=)): a str or None."""
    if label is not None and not isinstance(label, str):
        raise TypeError("label must be a str (or None), not %s %r" % (type(label).__name__, label))
    return label


def step_number(what: str, value: Any, low: int = 0) -> int:
    """A step number argument, checked here: the helper's refusal of '-1'
    named an option ("unknown option '-1'") a Python caller never typed."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)  # an int (a numpy integer too), never a str or float
    except TypeError:
        raise TypeError("%s must be a step number (an int, see log()), not %r" % (what, value)) from None
    if value < low:
        raise ValueError("%s must be a step number of %d or more (see log()), not %d" % (what, low, value))
    return value


def subprocess_args(text: bool, kw: Dict[str, Any]) -> bool:
    """exec()'s text, given subprocess.run's own words for what it always
    does (code ported from subprocess passes them): capture_output=True,
    stdout=PIPE, stderr=PIPE, and universal_newlines (text's old name)."""
    for name, value in kw.items():
        if name == "universal_newlines":
            text = text or bool(value)
        elif name == "capture_output" and value:
            pass
        elif name in ("stdout", "stderr") and value == subprocess.PIPE:
            pass
        elif name in ("capture_output", "stdout", "stderr"):
            raise ValueError("exec() always captures stdout and stderr apart, as subprocess.run(capture_output=True)"
                             " does; leave %s= out (for 2>&1, shell=True with the command ending '2>&1')" % name)
        else:
            raise TypeError("Sandbox.exec() got an unexpected keyword argument %r" % name)
    return text


def profile_args(env: Optional[Mapping[str, str]], env_keep: Iterable[str], env_clear: bool,
                 hide: Iterable[Any], hide_secrets: bool) -> List[str]:
    """The isolation profile as `layover run` options (docs/cli.md)."""
    out: List[str] = []
    for word in env_arg(env):
        out += ["--env", word]
    for glob in env_keep:
        if not isinstance(glob, str):
            raise TypeError("env_keep takes globs of variable names (str), not %s %r" % (type(glob).__name__, glob))
        out += ["--env-keep", glob]
    if env_clear:
        out.append("--env-clear")
    for path in hide:
        out += ["--hide", os.path.abspath(os.path.expanduser(path_arg("a hide path", path)))]
    if not hide_secrets:
        out.append("--no-hide-secrets")
    return out
