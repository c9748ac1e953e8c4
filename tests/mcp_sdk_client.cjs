// The official MCP TypeScript SDK's client against `layover mcp` (run by
// tests/integration/test_mcp_sdk.py):
//   node tests/mcp_sdk_client.cjs LAYOVER TARGET SESSION
// with LAYOVER_MCP_SDK naming the dir npm installed @modelcontextprotocol/sdk
// into (tests/mcp_sdk.sh). It spawns the server through StdioClientTransport,
// lists the tools, calls each one (the SDK checks every structuredContent
// against the tool's outputSchema), cancels a running call, and prints one
// JSON line of what it saw for the test to check.
"use strict";
const path = require("path");
const { createRequire } = require("module");

const sdk = createRequire(path.join(process.env.LAYOVER_MCP_SDK || ".", "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
    const [layover, target, session] = process.argv.slice(2);
    const transport = new StdioClientTransport({
        command: layover,
        args: ["mcp", "--target", target, "--session", session],
        env: process.env,
        stderr: "inherit",
    });
    const client = new Client({ name: "layover-sdk-test", version: "1.0.0" });
    await client.connect(transport);
    const out = { server: client.getServerVersion(), capabilities: client.getServerCapabilities(), calls: {} };
    out.tools = (await client.listTools()).tools.map((t) => t.name).sort();

    const call = async (name, args) => {
        const r = await client.callTool({ name, arguments: args });
        const text = r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
        out.calls[name] = { isError: !!r.isError, text, structured: r.structuredContent };
        return r;
    };
    await call("write_file", { path: "sdk/hello.txt", content: "hello from the SDK\n" });
    await call("edit_file", { path: "sdk/hello.txt", old_string: "hello", new_string: "hi" });
    await call("read_file", { path: "sdk/hello.txt" });
    await call("list_directory", { path: "sdk" });
    await call("search_files", { pattern: "hi from", path: "sdk" });
    await call("run_command", { command: "cat sdk/hello.txt; echo made > sdk/by-command.txt" });
    const job = await call("start_command", { command: "echo job-out; exec sleep 600" });
    const jobId = job.structuredContent.job_id;
    await call("read_output", { job_id: jobId, wait: 30 });
    await call("kill_command", { job_id: jobId });
    await call("changes", {});
    await call("diff", {});
    await call("checkpoint", { label: "sdk step" });
    const lg = await call("log", {});
    const top = Math.max(0, ...lg.structuredContent.steps.map((x) => x.step));
    await call("rollback", { step: top }); // to the last step: the view stays the same
    await call("review_feedback", {});

    // Cancel a running call: the SDK sends notifications/cancelled.
    const ac = new AbortController();
    let progress = 0;
    const slow = client.callTool(
        { name: "run_command", arguments: { command: "echo $$ > /tmp/sdk-pid; exec sleep 600", timeout: 900 } },
        undefined,
        { signal: ac.signal, timeout: 600000, onprogress: () => { progress++; } },
    );
    let pid = "";
    for (let i = 0; i < 600 && !pid; i++) {
        const r = await client.callTool({ name: "run_command", arguments: { command: "cat /tmp/sdk-pid 2>/dev/null" } });
        pid = r.structuredContent.stdout.trim();
        if (!pid) await sleep(100);
    }
    ac.abort("the test cancels it");
    try {
        await slow;
        out.cancel = "resolved";
    } catch (e) {
        out.cancel = "rejected";
    }
    let alive = "alive";
    for (let i = 0; i < 600 && alive === "alive"; i++) {
        const r = await client.callTool({
            name: "run_command", arguments: { command: `kill -0 ${pid} 2>/dev/null && echo alive || echo gone` },
        });
        alive = r.structuredContent.stdout.trim();
        if (alive === "alive") await sleep(100);
    }
    out.cancelled_pid = pid;
    out.after_cancel = alive;
    out.ping = await client.ping();
    await client.close();
    console.log(JSON.stringify(out));
}

main().catch((e) => {
    console.error("mcp_sdk_client: " + (e && e.stack ? e.stack : e));
    process.exit(1);
});
