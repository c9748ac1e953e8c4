"""Argument checks of the public API, made before anything starts: a wrong
type is a TypeError naming the argument and what it takes, never the
"'int' object is not iterable" of some call deep inside."""
from __future__ import annotations

import operator
import os
import subprocess
from typing import Any, Dict, List, Mapping, Optional

__all__ = ["path_arg", "env_arg", "label_arg", "step_number", "subprocess_args"]


def path_arg(what: str, value: Any) -> str:
    """A path argument (str, bytes or os.PathLike) as a str; bytes are
    decoded as os.fsdecode does, so a name that is not UTF-8 round-trips."""
    try:
        return os.fsdecode(value)
    except TypeError:
        raise TypeError("%s must be a str, bytes or os.PathLike, not %s %r"
                        % (what, type(value).__name__, value)) from None


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
