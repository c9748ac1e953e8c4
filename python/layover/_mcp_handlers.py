"""Every tool `layover mcp` serves, by name: the command, file and step
tools of _mcp_tools.py, the review tools of _mcp_review_tools.py."""
from __future__ import annotations

from typing import Any, Callable, Dict

from ._mcp_review_tools import changes, diff, review_feedback
from ._mcp_tools import (Result, checkpoint, edit_file, kill_command, list_directory, log_steps, read_file,
                         read_output, rollback, run_command, search_files, start_command, write_file)

HANDLERS: Dict[str, Callable[[Any, Dict[str, Any]], Result]] = {
    "run_command": run_command, "start_command": start_command, "read_output": read_output,
    "kill_command": kill_command, "read_file": read_file, "write_file": write_file, "edit_file": edit_file,
    "list_directory": list_directory, "search_files": search_files, "changes": changes, "diff": diff,
    "checkpoint": checkpoint, "log": log_steps, "rollback": rollback, "review_feedback": review_feedback}
