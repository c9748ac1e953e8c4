"""A minimal MCP client over a pipe, written for the tests: it spawns
`layover mcp`, writes JSON-RPC lines, and reads every stdout line back
(each must be a JSON-RPC message: the server may print nothing else)."""
import json
import os
import queue
import subprocess
import threading
import time

import pytest

from conftest import LAYOVER, real_dir

WAIT = 60  # seconds any single answer may take on a loaded machine


class McpClient:
    def __init__(self, target, state_dir, session, *extra, env=None, cwd=None):
        self.session = session
        self.env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir), **(env or {}))
        self.errpath = os.path.join(str(state_dir), "..", "mcp-%s.err" % session)
        self.err = open(self.errpath, "wb")
        self.proc = subprocess.Popen([LAYOVER, "mcp", "--target", str(target), "--session", session, *extra],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=self.env,
                                     cwd=cwd)
        self.lines = []  # every stdout line, raw
        self.q = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            try:
                self.q.put(json.loads(line))
            except ValueError:
                self.q.put({"not_json": line})
        self.q.put(None)

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def start(self, method, params=None, rid=None):
        """Send a request; returns its id."""
        if rid is None:
            rid = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def wait_for(self, pred, seen=None):
        """The next message for which pred(msg) holds; the others go to seen."""
        while True:
            msg = self.q.get(timeout=WAIT)
            assert msg is not None, "server closed stdout; stderr: " + self.stderr()
            assert "not_json" not in msg, "non-JSON line on stdout: %r" % msg["not_json"]
            if pred(msg):
                return msg
            if seen is not None:
                seen.append(msg)

    def response(self, rid, seen=None):
        return self.wait_for(lambda m: m.get("id") == rid and ("result" in m or "error" in m), seen)

    def request(self, method, params=None):
        return self.response(self.start(method, params))

    def initialize(self, version="2025-11-25"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "pytest", "version": "1"}})
        self.notify("notifications/initialized")
        return r

    def call(self, name, **args):
        r = self.request("tools/call", {"name": name, "arguments": args})
        assert "result" in r, r
        return r["result"]

    def close(self):
        """Close stdin (the client is gone) and wait for the server."""
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        rc = self.proc.wait(WAIT * 2)
        self.err.close()
        return rc

    def stderr(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.errpath, "rb") as f:
            return f.read().decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self.err.closed:
            self.err.close()


def text(result):
    return "".join(c["text"] for c in result["content"] if c["type"] == "text")


def conforms(value, schema):
    """True when value matches the flat JSON schemas the server declares
    (types, required keys, array items)."""
    types = schema.get("type")
    types = types if isinstance(types, list) else [types] if types else []
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    ok = not types
    for t in types:
        if t in ("integer", "number"):
            ok = ok or (isinstance(value, (int, float)) and not isinstance(value, bool)
                        and (t == "number" or float(value).is_integer()))
        else:
            ok = ok or isinstance(value, kinds[t])
    if not ok:
        return False
    if isinstance(value, dict):
        if any(k not in value for k in schema.get("required", [])):
            return False
        return all(conforms(value[k], s) for k, s in schema.get("properties", {}).items() if k in value)
    if isinstance(value, list) and "items" in schema:
        return all(conforms(v, schema["items"]) for v in value)
    return True


# The fixtures and helper of the `layover mcp` tests (test_mcp_server.py, test_mcp_steps.py).

@pytest.fixture
def proj():
    p = real_dir("mcp-proj-")
    (p / "src").mkdir()
    (p / "src" / "app.py").write_text("print('v1')\nprint('v1 again')\n")
    (p / "README.md").write_text("# demo\n")
    (p / "data.bin").write_bytes(b"\0\1\2binary")
    return p


@pytest.fixture
def client(require_sandbox, proj, state_dir):
    clients = []

    def make(*extra, session="mcp-test", init=True, env=None):
        c = McpClient(proj, state_dir, session, *extra, env=env)
        clients.append(c)
        if init:
            r = c.initialize()
            assert r["result"]["protocolVersion"] == "2025-11-25", r
        return c

    yield make
    for c in clients:
        c.kill()


def status(state_dir, name, *args):
    return subprocess.run([LAYOVER, "status", name, *args], capture_output=True, text=True,
                          env=dict(os.environ, LAYOVER_STATE_DIR=str(state_dir)))


def wait_held(state_dir, session, name="held", timeout=60):
    """Until the job the test started has opened `name` in the session's
    live upper (`exec 3>held`): start_command returns once the shell is
    started, before it runs that, so a call made at once could find
    nothing held yet (a race CI met)."""
    path = state_dir / "sessions" / session / "upper" / name
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, "the job never opened %s" % name
        time.sleep(0.01)

