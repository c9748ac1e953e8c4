"""A user giving an MCP client a sandboxed home with `layover mcp`
(newuser12): what a real client and its model met. Each test fails before
its fix."""
import os
import re
import time
import tomllib
from pathlib import Path

from mcp_util import client, proj, text  # noqa: F401 (fixtures)

ROOT = Path(os.environ.get("LAYOVER_SOURCE_ROOT") or Path(__file__).resolve().parents[2])
COLOUR = "printf '\\033[1;31mFAILED\\033[0m \\033]0;title\\007done\\033[K\\n'; printf '\\033[33mwarn\\033[0m\\n' >&2"


def test_mcp_command_output_reaches_the_model_without_terminal_escapes(client):
    # Before: a tool forcing colour (pytest --color=yes, FORCE_COLOR) handed the
    # model "\x1b[1;31mFAILED\x1b[0m ..." in the text and structuredContent.
    c = client(session="mcp-nu12-esc")
    r = c.call("run_command", command=COLOUR)
    assert not r["isError"], r
    assert r["structuredContent"]["stdout"] == "FAILED done\n", r
    assert r["structuredContent"]["stderr"] == "warn\n", r
    assert text(r) == "FAILED done\n[stderr]\nwarn\n[exit code 0]", text(r)
    job = c.call("start_command", command=COLOUR)["structuredContent"]["job_id"]
    seen = ""
    for _ in range(40):  # read_output hands what came since the last read: gather it until the job ends
        out = c.call("read_output", job_id=job, wait=5)
        assert "\x1b" not in text(out), out
        seen += out["structuredContent"]["stdout"]
        if not out["structuredContent"]["running"]:
            break
    assert seen == "FAILED done\n", seen
    job = c.call("start_command", command=COLOUR + "; exec sleep 600")["structuredContent"]["job_id"]
    time.sleep(1)
    assert "\x1b" not in text(c.call("kill_command", job_id=job))
    # The file the command wrote keeps its bytes: only the output shown is cleaned.
    c.call("run_command", command="printf '\\033[31mx\\n' > esc.txt")
    r = c.call("run_command", command="od -c esc.txt | head -1")
    assert "033" in r["structuredContent"]["stdout"], r


def test_mcp_docs_give_each_client_a_snippet_of_its_own_format():
    doc = (ROOT / "docs" / "mcp.md").read_text()
    # Before: "Goose's and Zed's JSON settings use this shape" (mcpServers), but Goose
    # reads YAML (extensions: with cmd/args) and Zed context_servers.
    assert "Goose's and Zed's JSON settings use this shape" not in doc
    block = re.search(r"```yaml\n *(extensions:\n.*?)```", doc, re.S)
    assert block and "cmd: layover" in block.group(1) and "type: stdio" in block.group(1), doc
    # Before: Codex's default tool timeout (60 s) cut a run_command short of its own 120 s default.
    toml = re.search(r"```toml\n *(\[mcp_servers\.layover\]\n.*?)```", doc, re.S).group(1)
    assert "tool_timeout_sec = 3600" in toml, toml
    cfg = tomllib.loads(toml.replace("  ", ""))
    assert cfg["mcp_servers"]["layover"]["args"][0] == "mcp", cfg


def test_mcp_an_empty_path_names_the_argument(client, proj):
    # Before: "write_file: . is a directory; use list_directory" (the target's root).
    c = client(session="mcp-nu12-empty")
    for tool, extra in (("write_file", {"content": "x"}), ("read_file", {}),
                        ("edit_file", {"old_string": "a", "new_string": "b"})):
        r = c.call(tool, path="", **extra)
        assert r["isError"], r
        assert text(r) == "%s: argument 'path' is empty: name a file, relative to the target or absolute" % tool, r
    assert c.call("log")["structuredContent"]["steps"] == []  # refused by the argument check: no step


def test_mcp_command_tools_say_when_there_is_no_network(client):
    # Before: nothing said so; a model ran `pip install`, met "Could not resolve
    # host" and retried or worked around it.
    tools = {t["name"]: t for t in client(session="mcp-nu12-net").request("tools/list")["result"]["tools"]}
    for name in ("run_command", "start_command"):
        assert "No network beyond the sandbox's own loopback (the server's --network loopback): downloads " \
               "(pip, npm, git clone, curl) fail; localhost works." in tools[name]["description"], tools[name]
    tools = {t["name"]: t for t in client("--network", "host", session="mcp-nu12-host").request(
        "tools/list")["result"]["tools"]}
    assert "No network" not in tools["run_command"]["description"]
