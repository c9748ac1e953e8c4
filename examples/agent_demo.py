#!/usr/bin/env python3
"""A tiny scripted "agent" whose tools run inside a layover sandbox.

It writes, edits and deletes files through its tools, then its CLI loop ends
and the changes are reviewed: the interactive exit prompt on a terminal;
otherwise a summary and the diff are printed and the session is kept (or
saved with --save).  The real project is untouched until you apply.

    python3 examples/agent_demo.py                 # scratch project in a temp dir, removed at the end
    python3 examples/agent_demo.py --target DIR    # your own tree (still sandboxed)
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))  # source checkout

from layover import SandboxError, SandboxMixin, ToolError  # noqa: E402

Step = Tuple[str, Sequence[Any]]

SCRIPT: List[Step] = [
    ("shell", ["ls -1"]),
    ("read_file", ["README.md"]),
    ("write_file", ["notes/todo.md", "- ship the demo\n- write docs\n"]),
    ("edit_file", ["README.md", "# demo", "# demo (edited by the agent)"]),
    ("delete_file", ["old.txt"]),
    ("shell", ["echo generated > build.log && wc -l README.md"]),
]


class DemoAgent(SandboxMixin):
    sandboxed_tools = ("shell", "read_file", "write_file", "edit_file", "delete_file")
    sandbox_review_after = ("cli_loop",)

    def __init__(self, script: Sequence[Step], **sandbox_options: Any) -> None:
        self.script = list(script)
        self.sandbox_options = sandbox_options  # per instance: target, state_dir...
        self.log: List[str] = []

    # --- tools: each body runs inside the sandbox (shipped as source) ---

    def shell(self, command: str) -> dict:
        import subprocess
        r = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
        return {"exit": r.returncode, "output": r.stdout + r.stderr}

    def read_file(self, path: str) -> str:
        with open(path, encoding="utf-8") as f:
            return f.read()

    def write_file(self, path: str, content: str) -> str:
        import os
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
        return "wrote %d bytes to %s" % (len(content), path)

    def edit_file(self, path: str, old: str, new: str) -> str:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if old not in text:
            raise ValueError("%r not found in %s" % (old, path))
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        return "edited " + path

    def delete_file(self, path: str) -> str:
        import os
        os.remove(path)
        return "deleted " + path

    # --- the agent's CLI loop: review_on_exit runs when it returns ---

    def cli_loop(self) -> None:
        for tool, args in self.script:
            try:
                line = "%s%r -> %r" % (tool, tuple(args), getattr(self, tool)(*args))
            except ToolError as e:  # as an agent hands a tool's error to its model, and goes on
                line = "%s%r failed: %s" % (tool, tuple(args), str(e).strip().splitlines()[-1])
            self.log.append(line)
            print("agent:", line[:200])


def scratch_project() -> Path:
    root = Path(tempfile.mkdtemp(prefix="layover-demo-")) / "project"
    root.mkdir()
    (root / "README.md").write_text("# demo\n\nA scratch project.\n")
    (root / "old.txt").write_text("obsolete\n")
    return root


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", help="tree to work on (default: a scratch project)")
    ap.add_argument("--state-dir", help="layover state dir (default: $LAYOVER_STATE_DIR or the helper's)")
    ap.add_argument("--save", metavar="PATCH", help="save the session as a patch file (non-interactive)")
    ap.add_argument("--review", choices=("auto", "prompt", "keep"), default="auto")
    args = ap.parse_args(argv)

    scratch = None if args.target else scratch_project()
    try:
        return run_demo(args, Path(args.target) if args.target else scratch, scratch is not None)
    finally:
        if scratch is not None:
            shutil.rmtree(str(scratch.parent), ignore_errors=True)


def run_demo(args: argparse.Namespace, target: Path, scratch: bool) -> int:
    options = {"target": str(target)}
    if args.state_dir:
        options["state_dir"] = args.state_dir
    agent = DemoAgent(SCRIPT, **options)
    agent.sandbox_review = args.review
    reviewed = sys.stdin.isatty() and sys.stdout.isatty() and args.review != "keep"
    agent.cli_loop()  # ends with the review (interactive on a terminal)
    sb = agent.sandbox
    assert sb is not None
    if not reviewed:
        print("\nchanges in session %s (the real %s is untouched):" % (sb.name, target))
        for c in sb.changes():
            print("  %-9s %s" % (c.kind, c.path))
        print(sb.diff())
        if args.save:
            sb.save(args.save)
            print("saved the patch to %s; apply it with: layover apply %s" % (args.save, args.save))
        elif not scratch:
            print("review later with: layover diff %s; layover apply %s" % (sb.name, sb.name))
    if scratch:  # the scratch project goes: so does its session (a saved patch stays)
        try:
            sb.discard()
        except SandboxError:
            pass  # applied or discarded at the prompt: already gone
        print("the scratch project and its session are removed (--target DIR keeps them for review)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
