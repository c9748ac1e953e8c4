"""`make demo`'s MCP step: a scripted MCP client (stdlib only) drives
`layover mcp` over a pipe as an agent would: it edits a file and runs a
command, then asks for the changes.
    python3 tests/mcp_demo.py LAYOVER TARGET SESSION"""
import json
import subprocess
import sys

layover, target, session = sys.argv[1:4]
# Each line out as it is printed: in `make demo > log` it stays before the server's own stderr lines.
sys.stdout.reconfigure(line_buffering=True)
server = subprocess.Popen([layover, "mcp", "--target", target, "--session", session, "--quiet"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = [0]


def request(method, params):
    next_id[0] += 1
    line = json.dumps({"jsonrpc": "2.0", "id": next_id[0], "method": method, "params": params})
    print("-> %s" % (line if len(line) < 160 else line[:157] + "..."))
    server.stdin.write(line.encode() + b"\n")
    server.stdin.flush()
    while True:
        msg = json.loads(server.stdout.readline())
        if msg.get("id") == next_id[0]:
            return msg


def call(name, **args):
    r = request("tools/call", {"name": name, "arguments": args})["result"]
    for c in r["content"]:
        print("   " + c["text"].replace("\n", "\n   "))
    return r


r = request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "demo", "version": "1"}})["result"]
print("   server %s, protocol %s" % (r["serverInfo"]["name"], r["protocolVersion"]))
server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
tools = request("tools/list", {})["result"]["tools"]
print("   tools: " + ", ".join(t["name"] for t in tools))
call("edit_file", path="README", old_string="world", new_string="world, edited by an MCP agent")
call("run_command", command="cc -o /tmp/hello src/main.c 2>/dev/null || true; ls -l; wc -l README")
call("changes")
server.stdin.close()
sys.exit(server.wait())
