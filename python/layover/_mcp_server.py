"""`layover mcp`: a Model Context Protocol server over stdio (docs/mcp.md).

Newline-delimited JSON-RPC 2.0 on stdin/stdout; nothing else is ever
written to stdout (fd 1 is pointed at stderr at start, the protocol keeps a
private copy).  One server is one sandbox session, started at `initialize`
(or the first stateless request) and kept at exit by default.  tools/call
requests run in threads of their own, so a long command does not block the
others; notifications/cancelled kills the call's process group inside.

Protocol versions: 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05 through
`initialize`; the stateless 2026-07-28 revision (no initialize: each request
names its version in _meta, server/discover describes the server, results
carry resultType, tools/list carries cache hints).
"""
from __future__ import annotations

import difflib
import json
import os
import signal
import sys
import threading
import time
from typing import Any, Dict, List, Optional

from ._client_frames import json_values_within
from ._helper import Helper, find_binary
from ._mcp_ctx import Ctx
from ._mcp_json import wire
from ._mcp_lines import MAX_CONTAINERS, MAX_DIGITS, MAX_LINE, MAX_VALUES, LongNumber, read_lines, small_int
from ._mcp_options import Options, Usage
from ._mcp_sandbox import AgentSandbox
from ._gate import Cancelled, nothing
from ._mcp_steps import FREEZERS, WRITERS, Steps, changed_via, session_exists_via
from ._mcp_schema import check_known_args, tool_list
from ._mcp_handlers import HANDLERS
from ._mcp_review_tools import review_hint
from ._mcp_tools import BadArgs, ToolFail
from .errors import SandboxError

LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
STATELESS = ("2026-07-28",)
SUPPORTED = STATELESS + LEGACY
META_VERSION = "io.modelcontextprotocol/protocolVersion"
MAX_INFLIGHT = 64
PROGRESS_EVERY = 2.0
EOF_GRACE = 10.0  # seconds calls in flight may finish after stdin closes (then: cancelled)
SERVER_INFO = {"name": "layover", "title": "layover sandbox", "version": "0.1.0"}
INSTRUCTIONS = ("Tools run inside a layover sandbox over the user's tree (%s): files you write and commands you "
                "run change only the sandbox's session, and a person reviews and applies them afterwards. Use "
                "`changes` and `diff` to show what you did.")

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = \
    -32700, -32600, -32601, -32602, -32603
UNSUPPORTED_VERSION = -32022


class Server:
    def __init__(self, out_fd: int, opts: Options, helper: Helper) -> None:
        self.out_fd = out_fd
        self.opts = opts
        self.helper = helper
        self.sandbox = AgentSandbox(helper, opts.target, opts.session, opts.run_args, opts.on_exit, log,
                                    opts.quiet)
        self.wlock = threading.Lock()
        self.version: Optional[str] = None  # negotiated by initialize
        self.inflight: Dict[str, Ctx] = {}
        self.ilock = threading.Lock()
        self.starter: Optional[threading.Thread] = None
        self.client_gone = False
        self.steps = Steps(log)  # each mutating call ends a step (_mcp_steps.py)
        self.feedback_seq = 0  # review_feedback's cursor: the newest rejection it returned
        self.feedback_lock = threading.Lock()

    # --- output ---

    def write(self, msg: Dict[str, Any]) -> None:
        data = wire(msg)  # strict JSON: no NaN, no lone surrogate (_mcp_json.py)
        with self.wlock:
            if self.client_gone:
                return
            view = memoryview(data + b"\n")
            try:
                while view:
                    view = view[os.write(self.out_fd, view):]
            except OSError:
                self.client_gone = True

    def error(self, rid: Any, code: int, message: str, data: Any = None, with_id: bool = True) -> None:
        err: Dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "error": err}
        if not with_id:
            del msg["id"]
        self.write(msg)

    def duplicate(self, rid: Any) -> None:
        """A request whose id a request in flight holds: its error carries
        no id (the schema's JSONRPCErrorResponse has an optional id, for an
        error whose request's id cannot be used), so the client never reads
        it as the first request's response, which comes in its time."""
        self.error(None, INVALID_REQUEST, "Invalid Request: id %s is already in use by a request in flight; give "
                   "each request an id of its own" % _key(rid)[:100], {"id": rid}, with_id=False)

    def result(self, rid: Any, result: Dict[str, Any], version: Optional[str]) -> None:
        if version in STATELESS:
            result = dict(result, resultType="complete")
            result.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = SERVER_INFO
        self.write({"jsonrpc": "2.0", "id": rid, "result": result})

    # --- input ---

    def serve(self, fd: int) -> None:
        read_lines(fd, self.handle_line, lambda: self.error(None, PARSE_ERROR, "Parse error: line longer than %d "
                                                            "bytes" % MAX_LINE))

    def handle_line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        if not json_values_within(line, MAX_VALUES, MAX_CONTAINERS):
            self.error(None, INVALID_REQUEST, "Invalid Request: a message of more than %d JSON values or %d arrays "
                       "and objects; send less in one message" % (MAX_VALUES, MAX_CONTAINERS))
            return
        try:
            msg = json.loads(line.decode("utf-8"), parse_int=small_int)
        except LongNumber:
            self.error(None, PARSE_ERROR, "Parse error: a number of more than %d digits; no request holds one (send "
                       "a long id as a string)" % MAX_DIGITS)
            return
        except RecursionError:
            self.error(None, PARSE_ERROR, "Parse error: arrays and objects nested too deep to parse (about %d "
                       "levels); no request nests so deep: send it flatter" % sys.getrecursionlimit())
            return
        except ValueError:
            self.error(None, PARSE_ERROR, "Parse error: not a JSON-RPC message (one JSON object per line)")
            return
        try:
            self.handle(msg)
        except Exception as e:  # never crash on input
            log("layover mcp: internal error on a message: %s: %s" % (type(e).__name__, e))
            rid = msg.get("id") if isinstance(msg, dict) else None
            self.error(rid if _valid_id(rid) else None, INTERNAL_ERROR, "Internal error")

    def handle(self, msg: Any) -> None:
        if isinstance(msg, list):
            self.error(None, INVALID_REQUEST, "Invalid Request: batches are not supported")
            return
        if not isinstance(msg, dict):
            self.error(None, INVALID_REQUEST, "Invalid Request: not a JSON object")
            return
        has_id = "id" in msg
        rid = msg.get("id")
        if "method" not in msg:
            if has_id and ("result" in msg or "error" in msg):
                return  # a response: this server sends no requests
            self.error(rid if _valid_id(rid) else None, INVALID_REQUEST, "Invalid Request: no method")
            return
        method = msg.get("method")
        if msg.get("jsonrpc") != "2.0" or not isinstance(method, str) or (has_id and not _valid_id(rid)):
            self.error(rid if _valid_id(rid) else None, INVALID_REQUEST,
                       "Invalid Request: need jsonrpc \"2.0\", a string method and a string or integer id")
            return
        params = msg.get("params")
        if not has_id:
            self.notification(method, params)
            return
        # Requests are read by this thread alone (the only one that adds to
        # inflight): checked here, no other can take the id before call().
        with self.ilock:
            busy = _key(rid) in self.inflight
        if busy:
            self.duplicate(rid)
            return
        if params is not None and not isinstance(params, dict):
            self.error(rid, INVALID_PARAMS, "Invalid params: params must be an object")
            return
        params = params or {}
        meta = params.get("_meta")
        asked = meta.get(META_VERSION) if isinstance(meta, dict) else None
        if method == "initialize":
            self.initialize(rid, params)
            return
        version = self.version
        if version is None:
            if asked is not None:
                if asked not in STATELESS:
                    if asked in LEGACY:
                        self.error(rid, INVALID_REQUEST, "Invalid Request: protocol version %s needs initialize "
                                   "first" % asked)
                        return
                    self.error(rid, UNSUPPORTED_VERSION, "Unsupported protocol version",
                               {"supported": list(SUPPORTED), "requested": str(asked)[:100]})
                    return
                version = asked
                self.start_sandbox()
            elif method != "ping":
                self.error(rid, INVALID_REQUEST, "Invalid Request: send initialize first (or a request with "
                           "_meta[\"%s\"] = \"%s\")" % (META_VERSION, STATELESS[0]))
                return
        self.request(rid, method, params, version)

    def request(self, rid: Any, method: str, params: Dict[str, Any], version: Optional[str]) -> None:
        if method == "ping":
            self.result(rid, {}, version)
        elif method == "tools/list":
            result: Dict[str, Any] = {"tools": self.tools(version)}
            if version in STATELESS:
                result.update(ttlMs=3600000, cacheScope="private")
            self.result(rid, result, version)
        elif method == "tools/call":
            self.call(rid, params, version)
        elif method == "server/discover" and version in STATELESS:
            self.result(rid, {"supportedVersions": list(SUPPORTED), "capabilities": {"tools": {}},
                              "instructions": INSTRUCTIONS % self.opts.target, "ttlMs": 3600000,
                              "cacheScope": "private"}, version)
        else:
            self.error(rid, METHOD_NOT_FOUND, "Method not found: %s" % method[:100])

    def notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            rid = params.get("requestId")
            if _valid_id(rid):
                with self.ilock:
                    ctx = self.inflight.get(_key(rid))
                if ctx is not None:
                    ctx.cancel()
        # notifications/initialized and anything else: nothing to do

    def initialize(self, rid: Any, params: Dict[str, Any]) -> None:
        if self.version is not None:
            self.error(rid, INVALID_REQUEST, "Invalid Request: already initialized")
            return
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            self.error(rid, INVALID_PARAMS, "Invalid params: initialize needs protocolVersion (a string)")
            return
        self.version = asked if asked in LEGACY else LEGACY[0]
        result: Dict[str, Any] = {"protocolVersion": self.version, "capabilities": {"tools": {"listChanged": False}},
                                  "serverInfo": SERVER_INFO}
        if self.version >= "2025-03-26":
            result["instructions"] = INSTRUCTIONS % self.opts.target
        self.result(rid, result, self.version)
        self.start_sandbox()

    # --- tools ---

    def tools(self, version: Optional[str]) -> List[Dict[str, Any]]:
        out = []
        for t in tool_list(self.opts.network):
            t = dict(t)
            if version is not None and version < "2025-06-18":
                del t["outputSchema"], t["title"]
            if version is not None and version < "2025-03-26":
                del t["annotations"]
            out.append(t)
        return out

    def start_sandbox(self) -> None:
        if self.starter is None:
            self.starter = threading.Thread(target=self._start, daemon=True)
            self.starter.start()

    def _start(self) -> None:
        try:
            self.sandbox.ensure()
        except SandboxError as e:
            log("layover mcp: %s" % e)

    def call(self, rid: Any, params: Dict[str, Any], version: Optional[str]) -> None:
        name = params.get("name")
        args = params.get("arguments")
        if not isinstance(name, str) or name not in HANDLERS:
            # Its first 100 characters: difflib over a name of megabytes took seconds and GBs (attack35).
            near = difflib.get_close_matches(name[:100], list(HANDLERS), n=1) if isinstance(name, str) else []
            self.error(rid, INVALID_PARAMS, "Invalid params: unknown tool %r%s; tools/list names the tools" % (
                str(name)[:100], " (did you mean %r?)" % near[0] if near else ""))
            return
        if args is not None and not isinstance(args, dict):
            self.error(rid, INVALID_PARAMS, "Invalid params: arguments must be an object")
            return
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        ctx = Ctx(self, rid, token if isinstance(token, (str, int)) and not isinstance(token, bool) else None)
        with self.ilock:
            if _key(rid) in self.inflight:  # handle() refused it already; kept should a caller skip that
                self.duplicate(rid)
                return
            if len(self.inflight) >= MAX_INFLIGHT:
                self.error(rid, INTERNAL_ERROR, "Too many calls in flight (%d); wait for some" % MAX_INFLIGHT)
                return
            self.inflight[_key(rid)] = ctx
        threading.Thread(target=self._run_tool, args=(ctx, name, args or {}, version), daemon=True).start()

    def _run_tool(self, ctx: Ctx, name: str, args: Dict[str, Any], version: Optional[str]) -> None:
        done = threading.Event()
        if ctx.token is not None:
            threading.Thread(target=self._progress, args=(ctx, done, name), daemon=True).start()
        structured: Optional[Dict[str, Any]] = None
        # Refused by its argument check or by the tool's own (a cwd not there:
        # newuser17): no step to end. One that failed part way leaves what it
        # did to the next step, never lost.
        refused = False
        gate = self.steps.gate
        try:
            check_known_args(name, args)
            # A freeze (a step's checkpoint, the checkpoint and rollback tools)
            # shows the overlay read-only for a moment: never while another
            # call may write (_mcp_steps.WriteGate).
            with gate.writing() if name in WRITERS else gate.frozen(lambda: ctx.cancelled) \
                    if name in FREEZERS else nothing():
                text, structured, is_error = HANDLERS[name](ctx, args)
        except Cancelled:  # while it waited for the writing calls: never run (no answer is sent)
            text, is_error, refused = "%s: cancelled" % name, True, True
        except BadArgs as e:
            text, is_error, refused = "%s: %s" % (name, e), True, True
        except ToolFail as e:
            text, is_error, refused = "%s: %s" % (name, e), True, True
        except SandboxError as e:
            text, is_error = "%s: %s" % (name, e), True
        except Exception as e:
            log("layover mcp: %s failed: %s: %s" % (name, type(e).__name__, e))
            text, is_error = "%s: internal error (%s); the sandbox is still up" % (name, type(e).__name__), True
        if not ctx.cancelled and not refused:
            deferred = self.steps.after(ctx, name, args)
            text += "\n" + deferred if deferred else ""  # the agent is told, in one line (_mcp_steps.py)
        with ctx.lock:
            ctx.finished = True
            done.set()
        with self.ilock:
            self.inflight.pop(_key(ctx.rid), None)
        if ctx.cancelled:
            return  # the client dropped it: no response (as the spec says)
        result: Dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
        if structured is not None and (version is None or version >= "2025-06-18"):
            result["structuredContent"] = structured
        self.result(ctx.rid, result, version)

    def _progress(self, ctx: Ctx, done: threading.Event, name: str) -> None:
        start = time.monotonic()
        n = 0
        while not done.wait(PROGRESS_EVERY):
            n += 1
            with ctx.lock:
                if ctx.finished or ctx.cancelled:
                    return
                self.write({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": ctx.token, "progress": n,
                                       "message": "%s running for %.0f s" % (name, time.monotonic() - start)}})

    # --- end ---

    def shutdown(self, grace: float = 0.0) -> int:
        """Let the calls in flight finish for up to `grace` seconds (stdin
        closed: their answers may still be read), cancel the rest, stop the
        sandbox."""
        end = time.monotonic() + grace
        while self.inflight and time.monotonic() < end:
            time.sleep(0.05)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # what follows must not be cut short
        with self.ilock:
            pending = list(self.inflight.values())
        for ctx in pending:
            ctx.cancel()
        if self.starter is not None:
            self.starter.join(120)
        rc = self.sandbox.close() if self.sandbox.started else None
        if self.sandbox.started:
            name = self.opts.session
            if self.opts.on_exit == "keep" and not session_exists_via(self.helper, name):
                pass  # it made no changes: the helper said it removed the session
            elif self.opts.on_exit == "keep" and self.sandbox.history_only and not changed_via(self.helper, name):
                # No changes, only steps: the helper's line (relayed) says so and names
                # `layover log`, as run's end does; "layover apply" would apply nothing.
                # Checked: a command inside can write that line too (to its agent's stderr).
                pass
            elif self.opts.on_exit == "keep":
                log("layover mcp: session %s kept. %s (or layover discard %s)" % (name, review_hint(name), name))
            else:
                log("layover mcp: session %s ended (--on-exit %s, helper exit %s)" % (name, self.opts.on_exit, rc))
        return 0


def _valid_id(rid: Any) -> bool:
    return isinstance(rid, str) or (isinstance(rid, int) and not isinstance(rid, bool))


def _key(rid: Any) -> str:
    return json.dumps(rid)


_log_lock = threading.Lock()


def _inert(line: str) -> str:
    """A log line as one inert line: the agent's arguments (a step's label, a
    path in an error) may hold ESC, C1 or bidi controls or a newline that
    would steer or forge what the person reads on stderr; each such character
    is written as its escape (\\x1b, \\u202e)."""
    return "".join(c if c.isprintable() or c == "\t" else
                   ("\\x%02x" % ord(c) if ord(c) < 0x100 else "\\u%04x" % ord(c) if ord(c) < 0x10000
                    else "\\U%08x" % ord(c)) for c in line)


def log(line: str) -> None:
    with _log_lock:
        try:
            os.write(2, (_inert(line.rstrip("\n")) + "\n").encode("utf-8", "replace"))
        except OSError:
            pass


class _Stop(Exception):
    pass


def _on_signal(signum: int, frame: Any) -> None:
    raise _Stop()


def main(argv: List[str]) -> int:
    # The protocol's own copy of stdout; fd 1 then points at stderr, so a
    # stray print() (ours or a library's) can never corrupt the protocol.
    out_fd = os.dup(1)
    os.set_inheritable(out_fd, False)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        opts = Options(argv)
    except Usage as e:  # as cli::usage_error (helper/cli/common/usage.h) prints every other verb's
        log("layover: mcp: %s; see 'layover mcp --help'" % e)
        return 2
    try:
        helper = Helper(opts.binary or find_binary())
    except SandboxError as e:
        log(str(e))
        return 1
    server = Server(out_fd, opts, helper)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    if not opts.quiet:
        log("layover mcp: serving MCP on stdio; sandbox over %s, session %s" % (opts.target, opts.session))
    grace = EOF_GRACE
    try:
        server.serve(0)
    except _Stop:
        log("layover mcp: stopping on a signal")
        grace = 0.0
    except OSError as e:
        log("layover mcp: stdin: %s" % e)
    try:
        return server.shutdown(grace)
    except _Stop:  # a signal during the grace period: stop at once
        return server.shutdown()
