"""The docs match the code (issue 18), cheaply: docs/troubleshooting.md.
- every message docs/troubleshooting.md quotes is one the sources can print
  (made of their string literals, around its <placeholders>), and the
  sources' environment errors (user namespaces, overlay and /proc mounts, the
  state dir, doctor's findings) are all quoted there; every error message
  of the C++ sources and of python/layover is in its "Every message" catalog.
docs/cli.md, the man page and README.md against the code: test_docs_cli.py."""
import ast
import errno
import os
import re

from conftest import SOURCE

# --- docs/troubleshooting.md against the sources ---

SOURCE_DIRS = ("helper", "overlay", "capture", "review")
PLACEHOLDER = re.compile(r"<[a-z][a-z0-9 _-]*>")


def source_file(rel):
    """A source file, in the repo or in run_all.sh's staged copy (src/)."""
    for base in (SOURCE / "src", SOURCE):
        if (base / rel).exists():
            return base / rel
    raise AssertionError("source %s not found under %s (run_all.sh stages it in src/)" % (rel, SOURCE))


def string_literals(code):
    """The C++ string literals of code, adjacent ones joined, escapes decoded;
    comments and character literals skipped."""
    out, i, n = [], 0, len(code)
    joining = False
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            i = code.find("\n", i)
            i = n if i < 0 else i
        elif code.startswith("/*", i):
            i = code.index("*/", i) + 2
        elif c == "'":
            j = i + 1
            while code[j] != "'":
                j += 2 if code[j] == "\\" else 1
            i = j + 1
            joining = False
        elif c == '"':
            j, s = i + 1, []
            while code[j] != '"':
                if code[j] == "\\":
                    e = code[j + 1]
                    if e == "x":
                        m = re.match(r"[0-9a-fA-F]+", code[j + 2:])
                        s.append(chr(int(m.group(0), 16)))
                        j += 2 + len(m.group(0))
                        continue
                    if e.isdigit():
                        m = re.match(r"[0-7]{1,3}", code[j + 1:])
                        s.append(chr(int(m.group(0), 8)))
                        j += 1 + len(m.group(0))
                        continue
                    s.append({"n": "\n", "t": "\t", "r": "\r", "e": "\x1b"}.get(e, e))
                    j += 2
                else:
                    s.append(code[j])
                    j += 1
            if joining:
                out[-1] += "".join(s)
            else:
                out.append("".join(s))
            joining = True
            i = j + 1
        else:
            if not c.isspace():
                joining = False
            i += 1
    return out


def chunks_of(literal):
    """The fixed pieces of a literal as printed: split at printf conversions and newlines."""
    return [p for p in re.split(r"%[-+ #0-9.]*(?:hh|h|ll|l|z|j|t)?[sdiuxXcpf]|\n", literal) if p]


def code_chunks():
    chunks = set()
    for d in SOURCE_DIRS:
        base = source_file(d)
        for path in list(base.rglob("*.cc")) + list(base.rglob("*.h")):
            for lit in string_literals(path.read_text(errors="replace")):
                chunks.update(chunks_of(lit))
    chunks.update(os.strerror(e) for e in errno.errorcode)  # sys_error's "WHAT: strerror"
    return chunks


class Cover:
    """Whether a text can be printed by concatenating the chunks: the end of
    one (a suffix), whole ones, the start of another (a prefix)."""

    def __init__(self, chunks):
        self.whole = chunks
        self.joined = "\x00".join(chunks)
        self.suffixes = {c[k:] for c in chunks for k in range(len(c))}
        self.prefixes = {c[:k] for c in chunks for k in range(1, len(c) + 1)}

    def covers(self, piece):
        if piece in self.joined and "\x00" not in piece:
            return True
        n = len(piece)
        reach = [False] * (n + 1)
        for j in range(1, n):
            reach[j] = piece[:j] in self.suffixes
        for i in range(1, n):
            if not reach[i]:
                continue
            if piece[i:] in self.prefixes:
                return True
            for j in range(i + 1, n):
                if not reach[j] and piece[i:j] in self.whole:
                    reach[j] = True
        return False


def troubleshooting_messages():
    text = (SOURCE / "docs/troubleshooting.md").read_text()
    blocks = re.findall(r"^```text\n(.*?)^```", text, re.M | re.S)
    assert blocks, "docs/troubleshooting.md quotes no messages in ```text blocks"
    return [ln for b in blocks for ln in b.split("\n") if ln.strip()]


def test_every_message_troubleshooting_md_quotes_is_printed_by_the_code():
    cover = Cover(code_chunks())
    messages = troubleshooting_messages()
    assert len(messages) >= 40
    bad = []
    for msg in messages:
        for piece in PLACEHOLDER.split(msg):
            if piece and not cover.covers(piece):
                bad.append("%r (in: %s)" % (piece, msg))
    assert not bad, "docs/troubleshooting.md quotes text the sources cannot print:\n" + "\n".join(bad)


def function_body(code, name):
    m = re.search(r"^[\w:<>&, ]*\b%s\([^;{]*\)\s*(?:const\s*)?\{" % re.escape(name), code, re.M)
    assert m, "function %s not found" % name
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        i += 1
    return code[m.start():i]


# The environment errors: where layover meets the kernel and the system.
ENVIRONMENT = {
    "helper/store/records/userns.cc": ["explain_userns_failure"],
    "overlay/mounts.cc": ["mount_overlay", "mount_proc"],
    "helper/store/session/session.cc": ["ensure_private_dir", "state_dir"],
    "helper/cli/doctor/doctor_report.cc": ["container_fix", "userns_findings", "kernel_findings", "state_findings",
                                    "filter_findings", "target_findings"],
}


def environment_texts():
    out = []
    for rel, funcs in ENVIRONMENT.items():
        code = source_file(rel).read_text()
        for f in funcs:
            for lit in string_literals(function_body(code, f)):
                out += [c for c in chunks_of(lit) if len(c) >= 12 and " " in c.strip()]
    return out


def test_every_environment_error_of_the_code_is_in_troubleshooting_md():
    quoted = "\n".join(troubleshooting_messages())
    texts = environment_texts()
    assert len(texts) >= 30
    missing = [t for t in texts if t not in quoted]
    assert not missing, "environment messages missing from docs/troubleshooting.md:\n" + "\n".join(missing)


# The calls that make a message a user sees: Error values, usage errors, and
# the lines main and the supervisor print themselves.
ERROR_CALL = re.compile(r"(?<![\w.])(?:base::)?(error|sys_error|fail|usage_error|usage|die|staging_error|lib_error"
                        r"|bad|fprintf)\(")


def call_args(code, start):
    """The text between the parenthesis at start-1 and its match, strings skipped."""
    depth, i = 1, start
    while depth:
        c = code[i]
        if c in "\"'":
            j = i + 1
            while code[j] != c:
                j += 2 if code[j] == "\\" else 1
            i = j
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return code[start:i - 1]


def message_keys(literals):
    """The leading literal's pieces and every piece of 12 or more characters."""
    keys = []
    for n, lit in enumerate(literals):
        for piece in chunks_of(lit):
            piece = piece.strip()
            if (n == 0 or len(piece) >= 12) and len(piece) >= 6 and re.search(r"[a-z]{3}", piece) \
                    and not re.fullmatch(r"layover(?: [a-z-]+)?:", piece):
                keys.append(piece)
    return keys


def code_messages():
    """{key: 'file:line'} for the error messages of the C++ sources."""
    out = {}
    for d in SOURCE_DIRS:
        base = source_file(d)
        for path in sorted(base.rglob("*.cc")):
            code = path.read_text(errors="replace")
            for m in ERROR_CALL.finditer(code):
                line_start = code.rfind("\n", 0, m.start()) + 1
                if code[line_start:m.start()].lstrip().startswith("//"):
                    continue
                args = call_args(code, m.end())
                if m.group(1) == "fprintf" and not args.lstrip().startswith("stderr") or ERROR_CALL.search(args):
                    continue  # stdout; or wraps another error call, which is read itself
                where = "%s:%d" % (path.relative_to(base.parent), code.count("\n", 0, m.start()) + 1)
                for key in message_keys(string_literals(args)):
                    out.setdefault(key, where)
    return out


PY_CONV = re.compile(r"%[-+ #0-9.]*[rgsdfi]")  # Python's conversions, %r and %g too


# Calls that show a message without raising it: the MCP server's JSON-RPC
# errors (`self.error(rid, CODE, MESSAGE)`) and its stderr lines (`log`), a
# client's stop (`self.fail`). They were left out, and 20 such messages were
# missing from the catalog (found by the newuser9 pass).
PY_SHOWS = {"error": 2, "log": 0, "fail": 0}


def _shown(node):
    """The message argument of a call that shows one, else None."""
    if not isinstance(node, ast.Call):
        return None
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    at = PY_SHOWS.get(name)
    return node.args[at] if at is not None and len(node.args) > at else None


def python_messages():
    """{key: 'file:line'} for the messages python/layover raises or shows."""
    out = {}
    for path in sorted((SOURCE / "python/layover").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                args = node.exc.args
            elif _shown(node) is not None:
                args = [_shown(node)]
            else:
                continue
            lits = [PY_CONV.sub("%s", s.value) for a in args for s in ast.walk(a)
                    if isinstance(s, ast.Constant) and isinstance(s.value, str)]
            for key in message_keys(lits):
                out.setdefault(key, "python/layover/%s:%d" % (path.name, node.lineno))
    return out

# Keys the catalog need not list, each with why no user can see it.
NOT_SHOWN = {}


def test_every_error_message_of_the_code_is_in_troubleshooting_md():
    """Every error message literal of the C++ sources and of python/layover
    (its leading literal, and every literal of 12 or more characters) is in
    docs/troubleshooting.md, most in its "Every message" catalog."""
    text = (SOURCE / "docs/troubleshooting.md").read_text()
    keys = {**python_messages(), **code_messages()}
    assert len(keys) >= 500, len(keys)
    missing = ["%s: %s" % (where, key) for key, where in sorted(keys.items(), key=lambda kv: kv[1])
               if key not in text and key not in NOT_SHOWN]
    assert not missing, ("error messages missing from docs/troubleshooting.md's \"Every message\" "
                         "(add each with its cause and fix):\n" + "\n".join(missing))


# --- docs/python.md's Sandbox signature against the code ---


def test_python_md_sandbox_signature_lists_every_parameter():
    # Sandbox(..., steps=True) was only mentioned inside checkpoint()'s table cell: a reader of the
    # signature did not know it, nor what start= does.
    import inspect
    import sys
    sys.path.insert(0, str(SOURCE / "python"))
    try:
        from layover import Sandbox
    finally:
        sys.path.pop(0)
    text = (SOURCE / "docs/python.md").read_text()
    block = re.search(r"```python\nSandbox\((.*?)\)\n```", text, re.S).group(1)
    documented = re.findall(r"([a-z_]+)=", block)
    params = [n for n in inspect.signature(Sandbox.__init__).parameters if n != "self"]
    assert documented == params, (documented, params)
    bullets = text[text.index(block):text.index("Attributes: `sb.name`")]
    for name in params:
        assert re.search(r"`%s[`=]" % name, bullets), "docs/python.md: no bullet says what %s= does" % name
