"""Sandbox.changed_files (agentlib's API): the contents of the files a
session added or modified, read by the helper from the session's layers
(`layover show NAME --contents`), never through the REPL: the REPL is the
agent's own process, and code it ran can make any read there return
anything."""
from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any, Dict

from ._helper import SESSION_CWD
from .errors import SandboxError


def changed_files(sb: Any) -> Dict[str, bytes]:
    """{path: content} of the files `sb`'s session added or modified."""
    wanted = [c for c in sb.changes() if c.type == "file" and c.kind != "deleted"]
    if not wanted:
        return {}
    if sum(c.size or 0 for c in wanted) > sb.max_output:
        raise SandboxError("layover: the changed files exceed max_output=%d bytes; read them from "
                           "save() or raise max_output" % sb.max_output)
    # The sizes above are changes()'s; the agent may grow a file before
    # this read, so it is bounded too: base64 of max_output, each path's
    # JSON, and room for the rest.
    cap = sb.max_output * 4 // 3 + sum(200 + 3 * len(c.raw_path or os.fsencode(c.path)) for c in wanted) \
        + (1 << 20)
    out = sb.helper.run_capped(["show", sb.name, "--contents"], cap, error=SandboxError, cwd=SESSION_CWD)
    if out is None:
        raise SandboxError("layover: the changed files exceed max_output=%d bytes; read them from "
                           "save() or raise max_output" % sb.max_output)
    try:
        files = json.loads(out.decode("ascii"))["files"]
        got = {base64.b64decode(f["path_b64"], validate=True): f["data_b64"] for f in files}
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise SandboxError("layover: 'layover show --contents' printed malformed JSON; reinstall "
                           "layover (the helper and the bindings must match)") from None
    out: Dict[str, bytes] = {}
    for c in wanted:
        data = got.get(c.raw_path or os.fsencode(c.path))
        if data is not None:
            out[c.path] = base64.b64decode(data)
    return out
