"""`layover mcp` with the official MCP TypeScript SDK client, and with the
MCP Inspector's CLI.

The SDK client
(@modelcontextprotocol/sdk, installed by tests/mcp_sdk.sh into a cache dir
outside the repo), run with node as the test's unprivileged user: it lists
and calls every tool, cancels a running call, and closes; then the real tree
is untouched and `layover status` shows the session."""
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAYOVER, real_dir, snapshot
from test_mcp_server import TOOLS

SCRIPT = Path(__file__).resolve().parents[1] / "mcp_sdk_client.cjs"


def need_kit(kit, marker):
    """The dir tests/mcp_sdk.sh KIT installed with npm (run_all.sh passes it)."""
    where = os.environ.get("LAYOVER_MCP_%s" % kit.upper(), "")
    why = None
    if not shutil.which("node"):
        why = "node is not installed (apt-get install nodejs npm)"
    elif not where or not os.path.isfile(os.path.join(where, marker)):
        why = (os.environ.get("LAYOVER_MCP_%s_WHY" % kit.upper())
               or "LAYOVER_MCP_%s is not set: run through tests/run_all.sh" % kit.upper())
    if why:
        if os.environ.get("LAYOVER_ALLOW_SKIP") == "1":
            pytest.skip("MCP %s test: %s" % (kit, why))
        pytest.fail("MCP %s test: %s (set LAYOVER_ALLOW_SKIP=1 to skip)" % (kit, why))
    return Path(where)


def test_mcp_official_typescript_sdk_client(require_sandbox, state_dir):
    need_kit("sdk", "node_modules/@modelcontextprotocol/sdk/package.json")
    proj = real_dir("mcp-sdk-")
    (proj / "README.md").write_text("# sdk\n")
    before = snapshot(proj)
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    r = subprocess.run(["node", str(SCRIPT), LAYOVER, str(proj), "mcp-sdk"], capture_output=True, text=True,
                       env=env, timeout=600, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["server"]["name"] == "layover" and set(out["capabilities"]) == {"tools"}
    assert set(out["tools"]) == TOOLS
    calls = out["calls"]
    assert set(calls) == TOOLS
    assert not any(c["isError"] for c in calls.values()), calls
    assert "hi from the SDK" in calls["read_file"]["text"]
    assert calls["run_command"]["structured"]["stdout"] == "hi from the SDK\n"
    assert calls["read_output"]["structured"]["stdout"] == "job-out\n"
    assert calls["kill_command"]["structured"]["running"] is False
    paths = {c["path"] for c in calls["changes"]["structured"]["changes"]}
    assert {"sdk/hello.txt", "sdk/by-command.txt"} <= paths
    assert "+hi from the SDK" in calls["diff"]["text"]
    assert out["cancel"] == "rejected" and out["cancelled_pid"] and out["after_cancel"] == "gone"
    assert snapshot(proj) == before  # the real tree is untouched
    st = subprocess.run([LAYOVER, "status", "mcp-sdk"], capture_output=True, text=True, env=env)
    assert st.returncode == 0 and "sdk/" in st.stdout, st.stderr
    assert "layover apply mcp-sdk" in r.stderr  # the server's review hint


def test_mcp_inspector_cli_lists_and_calls_the_tools(require_sandbox, state_dir):
    """The MCP Inspector's CLI (@modelcontextprotocol/inspector, with the node
    22 it needs, both from npm) lists the tools and calls one, each through a
    server of its own over the same session."""
    kit = need_kit("inspector", "node_modules/@modelcontextprotocol/inspector/package.json")
    proj = real_dir("mcp-insp-")
    (proj / "README.md").write_text("# inspector\n")
    before = snapshot(proj)
    launcher = kit / "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
    base = [str(kit / "node_modules/.bin/node"), str(launcher), "--cli", "-e", "LAYOVER_STATE_DIR=%s" % state_dir,
            LAYOVER, "mcp", "--target", str(proj), "--session", "mcp-insp", "--quiet"]

    def inspector(*args):
        r = subprocess.run(base + list(args), capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout)

    assert {t["name"] for t in inspector("--method", "tools/list")["tools"]} == TOOLS
    r = inspector("--method", "tools/call", "--tool-name", "run_command", "--tool-arg",
                  "command=mkdir insp && echo hello inspector | tee insp/x.txt")
    assert r["isError"] is False and r["structuredContent"]["stdout"] == "hello inspector\n"
    assert snapshot(proj) == before
    st = subprocess.run([LAYOVER, "status", "mcp-insp"], capture_output=True, text=True,
                        env=dict(os.environ, LAYOVER_STATE_DIR=str(state_dir)))
    assert st.returncode == 0 and "insp/" in st.stdout, st.stderr


# The conformance suite's server scenarios that apply to a tools-only server.
# The others call the reference server's own fixture tools (test_simple_text,
# test_error_handling, test_tool_with_progress, ...), prompts, resources,
# logging, completion, sampling or elicitation, none of which layover serves,
# or test the HTTP transport, which here is supergateway's (docs/mcp.md).
CONFORMANCE = ("server-initialize", "ping", "tools-list")


def test_mcp_conformance_suite_server_scenarios(require_sandbox, state_dir, tmp_path):
    """@modelcontextprotocol/conformance (node 22, from npm) against `layover
    mcp` bridged to Streamable HTTP by supergateway, on 127.0.0.1 only."""
    kit = need_kit("conformance", "node_modules/@modelcontextprotocol/conformance/package.json")
    node = str(kit / "node_modules/.bin/node")
    proj = real_dir("mcp-conf-")
    (proj / "README.md").write_text("# conformance\n")
    before = snapshot(proj)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    log = open(tmp_path / "gateway.log", "wb")
    gw = subprocess.Popen([node, "-r", str(SCRIPT.parent / "mcp_loopback.cjs"),
                           str(kit / "node_modules/supergateway/dist/index.js"),
                           "--stdio", "%s mcp --target %s --quiet" % (LAYOVER, proj),
                           "--outputTransport", "streamableHttp", "--stateful", "--port", str(port),
                           "--logLevel", "info"], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        for _ in range(600):  # until it listens (or dies)
            assert gw.poll() is None, (tmp_path / "gateway.log").read_text()[-2000:]
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        for scenario in CONFORMANCE:
            r = subprocess.run([node, str(kit / "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
                                "server", "--url", "http://127.0.0.1:%d/mcp" % port, "--scenario", scenario],
                               capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
            assert r.returncode == 0 and "0 failed" in r.stdout, (scenario, r.stdout[-2000:], r.stderr[-2000:])
    finally:
        gw.terminate()
        gw.wait(60)
        log.close()
    assert snapshot(proj) == before
    # These scenarios change nothing: the session ended empty, and an empty
    # session is removed at exit (docs/cli.md, "Sessions have a life cycle").
    sessions = subprocess.run([LAYOVER, "sessions", "--json"], capture_output=True, text=True, env=env)
    assert not any(s["name"].startswith("mcp-") for s in json.loads(sessions.stdout))
