"""``SandboxMixin``: run an agent's tool methods inside a layover sandbox.

List the tool methods in ``sandboxed_tools``.  Each is shipped *as source*
to the sandbox's REPL and called there, so its file and process operations
hit the overlay, never the real tree:

    class Agent(SandboxMixin):
        sandboxed_tools = ("shell", "write_file")
        sandbox_options = {"target": "~/project"}

        def write_file(self, path, content):
            with open(path, "w") as f:
                f.write(content)
            return "ok"

Rules for a sandboxed tool (checked when it is called): it is a plain
function (no closures), it imports what it needs inside its body, its
arguments and return value are JSON values, and ``self`` inside is a
read-only snapshot of the agent's JSON-serialisable public attributes.
An exception inside comes back as ToolError with the inside traceback.

When a method named in ``sandbox_review_after`` returns (the agent's CLI
loop), the sandbox is stopped and reviewed: ``review_on_exit`` on a
terminal, else the session is kept, with a line on stderr naming it
(``sandbox_review = "keep"`` keeps it without a word).
"""
from __future__ import annotations

import ast
import functools
import inspect
import json
import sys
import textwrap
from typing import Any, Callable, ClassVar, Dict, Optional, Sequence

from .errors import SandboxError
from .review import review_on_exit
from .sandbox import Sandbox

__all__ = ["SandboxMixin", "tool_source"]


def tool_source(fn: Callable[..., Any], name: Optional[str] = None) -> str:
    """The function's own source, dedented, without decorators; `name`: the
    attribute it is under, for the messages (a lambda's __name__ is <lambda>)."""
    name = name or getattr(fn, "__name__", repr(fn))
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as e:
        raise SandboxError("layover: cannot ship tool %s into the sandbox: its source is not available (%s)"
                           % (name, e)) from None
    tree = ast.parse(src)
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or isinstance(node, ast.AsyncFunctionDef):
        raise SandboxError("layover: tool %s must be a plain (non-async) function defined with def%s"
                           % (name, ", not a lambda" if fn.__name__ == "<lambda>" else ""))
    if fn.__code__.co_freevars:
        raise SandboxError("layover: tool %s uses variables of an enclosing function (%s); sandboxed tools "
                           "must be self-contained" % (name, ", ".join(fn.__code__.co_freevars)))
    lines = src.splitlines(True)
    return "".join(lines[node.lineno - 1:])  # from the `def` line: decorators dropped


def _snapshot(obj: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in vars(obj).items():
        if k.startswith(("_", "sandbox_")) or isinstance(v, Sandbox):
            continue
        try:
            json.dumps(v)
        except (TypeError, ValueError):
            continue
        out[k] = v
    return out


def _wrap(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    source = tool_source(fn, name)

    @functools.wraps(fn)
    def tool(self: "SandboxMixin", *args: Any, **kwargs: Any) -> Any:
        sb = self.sandbox_start()
        return sb.call(source, fn.__name__, list(args), kwargs, _snapshot(self),
                       timeout=self.sandbox_tool_timeout)

    tool.__layover_tool__ = True  # type: ignore[attr-defined]
    return tool


def _wrap_review(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def loop(self: "SandboxMixin", *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        finally:
            self.sandbox_finish()

    return loop


class SandboxMixin:
    sandboxed_tools: ClassVar[Sequence[str]] = ()
    sandbox_review_after: ClassVar[Sequence[str]] = ("cli_loop",)
    sandbox_options: Dict[str, Any] = {}       # Sandbox() keyword arguments (class or instance)
    sandbox_review: str = "auto"      # "auto": prompt on a tty, else keep; "prompt"; "keep"
    sandbox_tool_timeout: ClassVar[Optional[float]] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # A name in sandboxed_tools that no class defines (a typo, a renamed
        # method) was passed over in silence: the real tool, under its own
        # name, then ran on the host, outside the sandbox.
        missing = [n for n in cls.sandboxed_tools if not getattr(getattr(cls, n, None), "__layover_tool__", False)]
        if missing:
            raise TypeError("%s.sandboxed_tools names %s, which %s does not define as a method; a tool left out "
                            "runs on the host: fix the name, or define it" % (cls.__name__, ", ".join(
                                map(repr, missing)), cls.__name__))
        nxt = super().__new__
        return nxt(cls) if nxt is object.__new__ else nxt(cls, *args, **kwargs)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        for name in cls.sandboxed_tools:
            fn = cls.__dict__.get(name)
            if fn is None:
                continue  # defined on a base: wrapped there, or not a tool of this class
            if isinstance(fn, (staticmethod, classmethod)):
                raise TypeError("sandboxed tool %s.%s must be a plain method" % (cls.__name__, name))
            if not getattr(fn, "__layover_tool__", False):
                setattr(cls, name, _wrap(name, fn))
        for name in cls.sandbox_review_after:
            fn = cls.__dict__.get(name)
            if fn is not None and callable(fn):
                setattr(cls, name, _wrap_review(fn))

    @property
    def sandbox(self) -> Optional[Sandbox]:
        return self.__dict__.get("_layover_sandbox")

    def sandbox_start(self) -> Sandbox:
        """The agent's sandbox, started on first use from sandbox_options."""
        sb = self.sandbox
        if sb is None:
            sb = Sandbox(**self.sandbox_options)
            self.__dict__["_layover_sandbox"] = sb
        elif not sb.running:
            sb.start()
        return sb

    def sandbox_finish(self) -> Optional[int]:
        """Stop the sandbox and review its changes (see the module doc).
        Returns the review's exit status, or None when kept unreviewed."""
        sb = self.sandbox
        if sb is None:
            return None
        sb.close()
        mode = self.sandbox_review
        if mode == "prompt" or (mode == "auto" and sys.stdin.isatty() and sys.stdout.isatty()):
            return review_on_exit(sb)
        if mode == "auto":  # no terminal to ask on (CI, a pipe): say where the work is, as `layover run` does
            n = sb.name
            sys.stderr.write("layover: session '%s' kept: 'layover status %s' lists its changes, 'layover apply %s' "
                             "applies them, 'layover discard %s' drops them\n" % (n, n, n, n))
        return None
