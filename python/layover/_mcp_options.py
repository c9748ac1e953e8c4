"""`layover mcp`'s command line: its own options and the run options it
passes on to the sandbox (python/layover/_mcp_server.py serves with them)."""
from __future__ import annotations

import difflib
import os
import re
import time
from typing import List, Optional

# The usage (`layover mcp --help`) is printed by helper/cli/mcp/mcp.cc, with or without this package.

RUN_VALUES = ("--network", "--home", "--hide", "--env-keep", "--env", "--cwd", "--ro", "--rw", "--timeout",
              "--max-pids", "--max-size", "--max-memory", "--min-free", "--tmp-size")
RUN_FLAGS = ("--hide-secrets", "--no-hide-secrets", "--env-clear", "--wait", "--quiet", "-q", "--keep-empty")


OWN_VALUES = ("--binary", "--target", "--session", "--on-exit")
PATH_VALUES = ("--hide", "--ro", "--rw", "--cwd")  # run takes them relative to its current dir


def did_you_mean(name: str) -> str:
    """' (did you mean '--session'?)' for a mistyped option, as the helper's verbs say it (helper/base/suggest.h)."""
    near = difflib.get_close_matches(name, RUN_VALUES + RUN_FLAGS + OWN_VALUES, n=1, cutoff=0.8)
    return " (did you mean '%s'?)" % near[0] if near else ""


def _mode_meant(value: str) -> str:
    """' (did you mean 'discard'?)' for a mistyped --on-exit mode, as `layover run` says it."""
    word, sep, rest = value.partition(":") if ":" in value else value.partition("=")
    near = ["save"] if word == "save" else difflib.get_close_matches(word, ("keep", "discard", "save"), n=1,
                                                                     cutoff=0.75)
    if not near or (near[0] != "save" and sep):
        return ""
    return " (did you mean '%s'?)" % ("save:" + (rest or "FILE") if near[0] == "save" else near[0])


class Usage(Exception):
    """A usage error of `layover mcp`: WHY, printed by main with the help hint."""


class Options:
    def __init__(self, argv: List[str]) -> None:
        self.binary: Optional[str] = None
        self.target = os.path.expanduser("~")
        self.session = ""
        self.on_exit = "keep"
        self.network = "loopback"
        self.run_args: List[str] = []
        i = 0
        while i < len(argv):
            arg = argv[i]
            name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
            i += 1
            if name in RUN_FLAGS and not eq:
                self.run_args.append(name)
                continue
            if name not in RUN_VALUES + OWN_VALUES:
                raise Usage("unknown option %r" % arg + did_you_mean(name))
            if not eq:
                if i >= len(argv):
                    raise Usage("%s needs a value" % name)
                value = argv[i]
                i += 1
            if name == "--binary":
                self.binary = value
            elif name == "--target":
                if not value:  # `--target "$UNSET"`: never the cwd, which realpath("") is
                    raise Usage("--target needs a directory")
                # A client's config (JSON, TOML) passes "~/proj" with no shell
                # to expand it: as the Python API does, `~` is the home.
                self.target = os.path.expanduser(value) if value.startswith("~") else value
            elif name == "--session":
                # As run checks it, but now: a bad or empty name (an unset
                # variable) served on and failed each call, or made a fresh
                # session instead of resuming (attack pass of 27 Nov).
                if not re.fullmatch(r"[A-Za-z0-9._-]{1,64}", value) or value.startswith("-"):
                    raise Usage("--session %r: use 1-64 of A-Z a-z 0-9 . _ -, not starting with -" % value)
                self.session = value
            elif name == "--on-exit":
                if value not in ("keep", "discard") and not (value.startswith("save:") and len(value) > 5):
                    raise Usage("--on-exit %s%s: use keep, discard or save:FILE (apply is the person's)"
                                % (value, _mode_meant(value)))
                if value.startswith("save:"):
                    # The sandbox's helper runs in the target: a relative FILE is
                    # this server's cwd's, as `run --on-exit save:FILE` takes it,
                    # never a patch file written into the real tree (found by the
                    # attack pass of 27 Nov: save:work.tar.zst landed in the target).
                    value = "save:" + os.path.abspath(os.path.expanduser(value[5:]))
                self.on_exit = value
            else:
                if name == "--network":
                    self.network = value
                if name in PATH_VALUES and value and not os.path.isabs(value):
                    # "relative to the current dir" (docs/cli.md): this server's, not the
                    # target, where the sandbox's helper runs (found by the attack pass of
                    # 27 Nov: `--hide .aws-work` from ~ hid TARGET/.aws-work, not ~/.aws-work).
                    value = os.path.abspath(os.path.expanduser(value))
                self.run_args += [name, value]
        self.session = self.session or default_session()
        self.quiet = "--quiet" in self.run_args or "-q" in self.run_args
        given = self.target
        self.target = os.path.realpath(self.target)
        if not os.path.isdir(self.target):
            raise Usage("--target %s: not a directory; pass an existing tree%s" % (self.target, _target_hint(given)))


def _target_hint(given: str) -> str:
    """Why a --target the client passed as written may name no tree: a
    variable no shell expanded, or a path relative to the client's current
    directory (often /)."""
    if "$" in given:
        return " (the client passes it as written, with no shell to expand %s: give the absolute path)" % given
    if not os.path.isabs(given):
        return (" (a relative --target is taken from the directory the client started the server in, %s: "
                "give the absolute path)" % os.getcwd())
    return ""


def default_session() -> str:
    """mcp-YYYYmmdd-HHMMSS; -PID added when a session of that name exists
    already (two servers started in the same second must not share one)."""
    name = "mcp-" + time.strftime("%Y%m%d-%H%M%S")
    state = os.environ.get("LAYOVER_STATE_DIR") or "/var/tmp/layover-%d" % os.getuid()
    if os.path.lexists(os.path.join(state, "sessions", name)):
        name += "-%d" % os.getpid()
    return name
