"""The docs match the code (issue 18), cheaply: docs/cli.md, the man page and README.md.
- every flag of every verb's --help (long and one-letter) is in that verb's
  section of docs/cli.md and of the man page made from it; each usage line of
  cli.md names only flags its verb's --help shows, and every flag of a
  verb's --help usage line is in cli.md's; every other flag cli.md
  names is one some verb accepts or another program's; the man page's
  sections hold the same flags as cli.md's;
- README.md's runnable blocks run (as the unprivileged user, in a scratch
  home), and every layover command, flag and make target it shows exists.
docs/troubleshooting.md against the sources: test_docs_match.py."""
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
        from layover._mcp_schema import tool_list
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
    assert "+hi" in (home / "tour.diff").read_text() and not (project / "tour.diff").exists()


def test_python_md_runnable_blocks_run_in_a_scratch_home(real_dir):
    """docs/python.md's runnable examples, copied into files as a new user
    would (newuser15), run as the unprivileged user over a fresh ~/project;
    then the real tree holds what the example applied. Its first example
    wrote notes.txt and said kind='added': over the README tour's project
    it was 'modified'."""
    blocks = runnable_blocks((SOURCE / "docs" / "python.md").read_text())
    assert [lang for lang, _ in blocks] == ["python"], blocks
    home, state = real_dir / "home", real_dir / "state"
    (home / "project").mkdir(parents=True)
    state.mkdir()
    for d in (home, home / "project", state):
        d.chmod(0o700)
        if ROOT:
            os.chown(d, int(os.environ["LAYOVER_TEST_UID"]), int(os.environ["LAYOVER_TEST_UID"]))
    os.chmod(real_dir, 0o755)
    path = real_dir / "example.py"
    path.write_text(blocks[0][1])
    path.chmod(0o644)
    r = as_user("python3", path, cwd=home, extra={
        "HOME": home, "PATH": "%s:/usr/bin:/bin" % BUILD, "LAYOVER_STATE_DIR": state,
        "PYTHONPATH": SOURCE / "python"})
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0, out + err
    assert "+++ b/hello.txt" in out and "+hi" in out, out
    assert (home / "project" / "hello.txt").read_text() == "hi\n"  # applied after the block, as it says


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
