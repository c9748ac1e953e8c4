"""Part 5 of the REPL server that runs inside the sandbox: help().

Executed after _repl_io.py, _repl_out.py, _repl_exec.py and _repl_result.py
and before _server.py in one namespace (see layover._boot.server_source);
it is never imported on the host.  The names used here without import
(_own_import) come from _server.py, at call time.

The REPL runs `python -I -S`: no site.py, so no help() (a NameError). And
there is no terminal to page on: help(obj) prints pydoc's plain text (no
bold overstrike) to sys.stdout, which the host captures.
"""
# flake8: noqa: F821
import sys


class _Help:
    """help(), printing into the captured output."""

    def __repr__(self):
        return ("Call help(object) or help('name') to print its documentation (pydoc's plain text; the sandbox's "
                "REPL has no interactive help)")

    def __call__(self, *args, **kwds):
        if not args and not kwds:
            sys.stdout.write("layover: the sandbox's REPL has no interactive help; call help(object) or "
                             "help('name') to print its documentation\n")
            return
        pydoc = _own_import("pydoc")
        # With an output, pydoc writes plain text there; its topics and keywords
        # (help('if')) go through its pager, plain text too as stdout is no tty.
        return pydoc.Helper(output=sys.stdout).help(*args, **kwds)
