"""The docs match the code (issue 18), cheaply:
- every flag of every verb's --help (long and one-letter) is in that verb's
  section of docs/cli.md and of the man page made from it; each usage line of
  cli.md names only flags its verb's --help shows, and every flag of a
  verb's --help usage line is in cli.md's; every other flag cli.md
  names is one some verb accepts or another program's; the man page's
  sections hold the same flags as cli.md's;
- every message docs/troubleshooting.md quotes is one the sources can print
  (made of their string literals, around its <placeholders>), and the
  sources' environment errors (user namespaces, overlay and /proc mounts, the
  state dir, doctor's findings) are all quoted there; every error message
  of the C++ sources and of python/layover is in its "Every message" catalog;
- README.md's runnable blocks run (as the unprivileged user, in a scratch
  home), and every layover command, flag and make target it shows exists."""
import ast
import errno
import functools
import json
import os
import re
import subprocess
import sys

from conftest import BUILD, ROOT, SOURCE, as_user

LAYOVER = BUILD / "layover"
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])")
SHORT = re.compile(r"(?<![\w-])(-[a-zA-Z])(?![\w-])")
EVERY_VERB = {"no-config", "help", "version"}  # main's, for every verb (cli.md "--version, --help")
# Flags cli.md names that belong to other programs, with the program.
OTHERS = {"global": "git config", "git": "diff --git", "short": "git status", "zstd": "tar",
          "security-opt": "docker/podman", "user": "systemd-run", "scope": "systemd-run", "seccomp": "bwrap"}
# Internal top-level options cli.md documents as such (not a verb's flag).
INTERNAL = {"export-seccomp"}


def lay(*args):
    return subprocess.run([str(LAYOVER)] + list(args), capture_output=True, timeout=60,
                          env=dict(os.environ, XDG_CONFIG_HOME="/nonexistent"))


@functools.lru_cache(maxsize=None)
def verbs():
    out = lay("--help").stdout.decode()
    return tuple(m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)", out, re.M))


@functools.lru_cache(maxsize=None)
def help_flags(verb):
    """The long flags VERB --help shows; quoted text ('layover run ...', 'apply
    --undo-to FILE' in undo's) names other commands' flags and is left out."""
    r = lay(verb, "--help")
    assert r.returncode == 0, (verb, r.stderr)
    text = re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])", "", r.stdout.decode())
    return frozenset(FLAG.findall(text))


@functools.lru_cache(maxsize=None)
def help_short_flags(verb):
    """The one-letter options VERB --help shows (-q, -o), quoted text left out."""
    text = re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])", "", lay(verb, "--help").stdout.decode())
    return frozenset(SHORT.findall(text))


def sections(text, heading):
    """{heading line: body} for each heading matched by the regex."""
    parts = re.split(r"^(%s.*)$" % heading, text, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def names_verb(heading, verb):
    return re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(verb), heading, re.I) is not None


def cli_md():
    return (SOURCE / "docs/cli.md").read_text()


def ignore_flags(md):
    """The flags cli.md's IGNORE FLAGS placeholder stands for, from its definition."""
    m = re.search(r"^- IGNORE FLAGS \([^)]*\):(.*?)(?=^- )", md, re.M | re.S)
    assert m, "docs/cli.md no longer defines IGNORE FLAGS"
    return set(FLAG.findall(re.sub(r"\([^()]*\)", "", m.group(1))))  # not the asides


def md_flags(body, md):
    got = set(FLAG.findall(body))
    return got | ignore_flags(md) if "IGNORE FLAGS" in body else got


@functools.lru_cache(maxsize=None)
def man_text():
    page = BUILD / "layover.1"
    assert page.exists(), "%s is missing: make man (run_all.sh stages it)" % page
    # Wide, unhyphenated and unjustified: a flag is never split across lines.
    r = subprocess.run(["man", "--nh", "--nj", "-l", str(page)], capture_output=True, timeout=60,
                       env=dict(os.environ, MANWIDTH="250", MANPAGER="cat", PAGER="cat", LANG="C.UTF-8"))
    assert r.returncode == 0, r.stderr.decode()
    return re.sub(r".\x08", "", r.stdout.decode())


def test_every_help_flag_is_in_cli_md_and_the_man_page():
    md = cli_md()
    md_secs = sections(md, r"## ")
    man_secs = sections(man_text(), r"(?=[A-Z-])")
    missing = []
    for verb in verbs():
        in_md = [b for h, b in md_secs.items() if names_verb(h, verb)]
        in_man = [b for h, b in man_secs.items() if names_verb(h, verb)]
        assert in_md, "docs/cli.md has no '## ' section naming verb %s" % verb
        assert in_man, "the man page has no section naming verb %s" % verb
        md_has = set().union(*(md_flags(b, md) for b in in_md))
        man_has = set().union(*(md_flags(b, md) for b in in_man))
        for short in sorted(help_short_flags(verb)):
            if not any(short in set(SHORT.findall(b)) for b in in_md):
                missing.append("%s %s: in --help, not in its docs/cli.md section" % (verb, short))
            if not any(short in set(SHORT.findall(b)) for b in in_man):
                missing.append("%s %s: in --help, not in its man page section" % (verb, short))
        for flag in sorted(help_flags(verb) - EVERY_VERB):
            if flag not in md_has:
                missing.append("%s --%s: in --help, not in its docs/cli.md section" % (verb, flag))
            if flag not in man_has:
                missing.append("%s --%s: in --help, not in its man page section" % (verb, flag))
    assert not missing, "\n".join(missing)


def test_man_page_sections_hold_the_flags_of_cli_md_and_no_others():
    md = cli_md()
    man_secs = sections(man_text(), r"(?=[A-Z-])")
    for heading, body in sections(md, r"## ").items():
        title = re.sub(r"[`*]", "", heading[3:]).upper()
        match = [b for h, b in man_secs.items() if h.startswith(title)]
        assert len(match) == 1, "man page: no single section %r (from docs/cli.md)" % title
        assert set(FLAG.findall(match[0])) == set(FLAG.findall(body)), title


def code_blocks(md):
    """The text of each fenced (```) and indented (4 spaces, after a blank line) code block."""
    out, fence, cur, prev_blank = [], None, [], True
    for ln in md.split("\n"):
        if fence is not None:
            if ln.strip().startswith("```"):
                out.append("\n".join(cur))
                fence, cur = None, []
            else:
                cur.append(ln)
        elif ln.strip().startswith("```"):
            fence = ln
        elif ln.startswith("    ") and (cur or prev_blank):
            cur.append(ln[4:])
        else:
            if cur:
                out.append("\n".join(cur))
                cur = []
        prev_blank = not ln.strip() or (cur != [] and fence is None)
    return out


def usage_lines(md):
    """(verb, text) of each usage line in cli.md's code: 'layover VERB ...'
    with its continuation lines (indented under it)."""
    out = []
    for block in code_blocks(md):
        lines = block.split("\n")
        for i, ln in enumerate(lines):
            m = re.match(r"(\s*)layover ([a-z][a-z-]*)\b(.*)", ln)
            if not m or not m.group(3).strip().startswith(("[", "SESSION", "FILE", "UNDO", "NAME", "--", "-o")):
                continue
            text, j = m.group(3), i + 1
            while j < len(lines) and re.match(r"\s{%d,}[\[-]" % (len(m.group(1)) + 8), lines[j]):
                text += lines[j]
                j += 1
            out.append((m.group(2), text))
    return out


def test_every_usage_line_in_cli_md_names_only_flags_its_verbs_help_shows():
    md = cli_md()
    lines = usage_lines(md)
    assert {v for v, _ in lines} >= {"run", "status", "save", "show", "diff", "apply", "undo", "gc", "config"}
    wrong = []
    for verb, text in lines:
        shown = help_flags(verb) | EVERY_VERB
        text = text.replace("IGNORE FLAGS", " ".join("--" + f for f in ignore_flags(md)))
        wrong += ["%s --%s" % (verb, f) for f in sorted(set(FLAG.findall(text)) - shown)]
    assert not wrong, "docs/cli.md usage lines name flags their verb's --help does not show: %s" % wrong


def help_usage_flags(verb):
    """The long flags of VERB --help's usage lines ('usage: layover VERB ...', its
    continuation lines and further 'layover VERB' forms), quoted text left out."""
    text = lay(verb, "--help").stdout.decode()
    got, on = set(), False
    for ln in text.split("\n"):
        if ln.startswith("usage: ") or re.match(r"\s+layover %s\b" % re.escape(verb), ln):
            on = True
        elif not (on and re.match(r"\s+\[", ln)):
            on = False
        if on:
            got |= set(FLAG.findall(re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])", "", ln)))
    return got


def test_every_flag_of_a_verbs_usage_line_is_in_cli_md_usage_lines():
    # The converse of the test above: a flag `VERB --help` shows in its usage
    # line is in cli.md's usage line of that verb too (status --risk was not).
    md = cli_md()
    lines = usage_lines(md)
    missing = []
    for verb in {v for v, _ in lines}:
        text = " ".join(t for v, t in lines if v == verb).replace(
            "IGNORE FLAGS", " ".join("--" + f for f in ignore_flags(md)))
        left = help_usage_flags(verb) - set(FLAG.findall(text)) - EVERY_VERB
        missing += ["%s --%s" % (verb, f) for f in sorted(left)]
    assert not missing, "flags in a verb's --help usage line but not in docs/cli.md's: %s" % missing


def test_cli_md_mcp_section_names_every_tool_the_server_lists():
    # It named 11 of 15 (not checkpoint, log, rollback, review_feedback).
    sys.path.insert(0, str(SOURCE / "python"))
    try:
        from layover._mcp_tools import tool_list
    finally:
        sys.path.pop(0)
    body = [b for h, b in sections(cli_md(), r"## ").items() if names_verb(h, "mcp")]
    assert len(body) == 1
    named = set(re.findall(r"`([a-z_]+)`", body[0]))
    tools = {t["name"] for t in tool_list("loopback")}
    assert tools <= named, "tools of layover mcp not named in docs/cli.md's mcp section: %s" % sorted(tools - named)


def test_every_flag_cli_md_names_is_accepted_by_a_verb_or_is_another_programs():
    md = cli_md()
    shown = set(EVERY_VERB)
    for verb in verbs():
        shown |= help_flags(verb)
    unknown = []
    for flag in sorted(set(FLAG.findall(md)) - shown - set(OTHERS) - INTERNAL):
        # A flag --help leaves out (an alias, a hidden one): some verb's parser must take it.
        accepted = any(lay(verb, "--%s=x" % flag, "--help").returncode == 0 or
                       lay(verb, "--" + flag, "--help").returncode == 0 for verb in verbs())
        if not accepted:
            unknown.append(flag)
    assert not unknown, "docs/cli.md names flags no verb accepts: %s" % unknown
    for flag in INTERNAL:  # documented as internal: it must still exist
        assert "Internal: `layover --%s`" % flag in md
        r = subprocess.run([str(LAYOVER), "--" + flag], stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        assert r.returncode == 0 and r.stdout, (flag, r.stderr)


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
    "helper/store/userns.cc": ["explain_userns_failure"],
    "overlay/mounts.cc": ["mount_overlay", "mount_proc"],
    "helper/store/session.cc": ["ensure_private_dir", "state_dir"],
    "helper/cli/doctor_report.cc": ["container_fix", "userns_findings", "kernel_findings", "state_findings",
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


def python_messages():
    """{key: 'file:line'} for the messages python/layover raises."""
    out = {}
    for path in sorted((SOURCE / "python/layover").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Raise) or not isinstance(node.exc, ast.Call):
                continue
            lits = [PY_CONV.sub("%s", s.value) for a in node.exc.args for s in ast.walk(a)
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


# --- README.md: its runnable blocks run; the commands it shows exist ---

def readme():
    return (SOURCE / "README.md").read_text()


def runnable_blocks(text):
    """(language, code) of each fenced block right after a '<!-- runnable -->' line."""
    return re.findall(r"^<!-- runnable -->\n```(\w+)\n(.*?)^```", text, re.M | re.S)


def test_readme_runnable_blocks_run_in_a_scratch_home(real_dir):
    """As a new user would type them, in order, in one shell (cd carries
    over), as the unprivileged user, in a scratch home; then the real files
    are what the tour says."""
    text = readme()
    blocks = runnable_blocks(text)
    langs = [lang for lang, _ in blocks]
    assert langs.count("sh") >= 4 and "python" in langs, langs
    home, state = real_dir / "home", real_dir / "state"
    home.mkdir(mode=0o700)
    state.mkdir(mode=0o700)
    if ROOT:
        for d in (home, state):
            os.chown(d, int(os.environ["LAYOVER_TEST_UID"]), int(os.environ["LAYOVER_TEST_UID"]))
    # Every failing command is reported; only `layover diff` may exit 1 (changes, as diff(1)).
    lines = ["set -u", "trap 'echo \"FAILED $?: $BASH_COMMAND\" >&2' ERR", "cd ~"]
    for i, (lang, code) in enumerate(blocks):
        if lang == "sh":
            lines.append(code)
        else:
            assert lang == "python", lang
            path = real_dir / ("block%d.py" % i)
            path.write_text(code)
            lines.append("python3 %s" % path)
    lines.append("echo TOUR-DONE")
    script = real_dir / "tour.sh"
    script.write_text("\n".join(lines) + "\n")
    os.chmod(real_dir, 0o755)
    for p in real_dir.glob("*.py"):
        p.chmod(0o644)
    script.chmod(0o644)
    r = as_user("bash", script, cwd=home, extra={
        "HOME": home, "PATH": "%s:/usr/bin:/bin" % BUILD, "LAYOVER_STATE_DIR": state,
        "PYTHONPATH": SOURCE / "python"})
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0 and out.rstrip().endswith("TOUR-DONE"), out + err
    failed = re.findall(r"^FAILED (\d+): (.*)$", err, re.M)
    assert all(rc == "1" and cmd.startswith("layover diff ") for rc, cmd in failed), err
    # The output the README shows for `status` is what it printed.
    shown = re.search(r"^layover status tour.*?^```text\n(.*?)^```", text, re.M | re.S).group(1)
    assert shown in out, (shown, out)
    # Saved; applied ("line 1", "hi" printed), undone; then Python's line, applied.
    project = home / "project"
    assert re.search(r"^line 1\nhi\n(.*\n)*line 1\n", out, re.M), out
    assert (project / "notes.txt").read_text() == "line 1\nfrom python\n"
    assert (project / "old.log").read_text() == "junk\n"
    assert not (project / "new.txt").exists()
    assert (home / "tour.tar.zst").stat().st_size > 0
    assert "+hi" in (project / "tour.diff").read_text()


def make_targets():
    text = (SOURCE / "Makefile").read_text()
    return set(re.findall(r"^([a-z][a-z-]*):", text, re.M))


def test_readme_commands_name_real_verbs_flags_and_make_targets():
    text = readme()
    code = "\n".join(code_blocks(text)) + "\n" + "\n".join(re.findall(r"`([^`\n]+)`", text))
    all_verbs = set(verbs())
    seen = 0
    for m in re.finditer(r"(?:^|\$ |[;&|(] *)layover ([a-z][a-z-]*)([^\n#]*)", code, re.M):
        verb, rest = m.group(1), m.group(2)
        assert verb in all_verbs, "README: 'layover %s' is no verb" % verb
        rest = re.split(r"\s--\s", rest)[0]  # what follows -- is the command's
        unknown = set(FLAG.findall(rest)) - help_flags(verb) - EVERY_VERB
        assert not unknown, "README: 'layover %s%s': %s not in its --help" % (verb, rest, unknown)
        seen += 1
    assert seen >= 15
    targets = make_targets()
    for t in re.findall(r"\bmake ([a-z][a-z-]*)", text):
        assert t in targets, "README: 'make %s' is no Makefile target" % t
    mcp = json.loads(re.search(r"^```json\n(.*?)^```", text, re.M | re.S).group(1))
    server = mcp["mcpServers"]["layover"]
    assert server["command"] == "layover" and server["args"][0] == "mcp"
    assert set(FLAG.findall(" ".join(server["args"]))) <= help_flags("mcp")
