#!/usr/bin/env python3
"""Make the man page layover(1) from docs/cli.md, at build time, so the two
cannot disagree:  helper/dist/man.py docs/cli.md VERSION > layover.1

The Markdown used in docs/cli.md is small: '#'/'##'/'###' headings,
paragraphs, '- ' lists, indented or fenced code blocks, pipe tables,
`code`, **bold**, *emphasis* and [text](link). Each becomes plain roff
(man(7) macros only), which `man -l` and `mandoc -T lint` accept.
"""
import os
import re
import sys
import time

NAME = "layover \\- run a program over an overlay of a real tree, then review, apply or discard its changes"


def escape(text):
    """Roff-escape plain text: backslashes, and a leading . or ' would be a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return text


def inline(text):
    """Markdown inline markup to roff fonts."""
    out = []
    # `code` first: its content is literal.
    for i, part in enumerate(re.split(r"`([^`]*)`", text)):
        if i % 2:
            out.append("\\fB" + escape(part) + "\\fR")
            continue
        part = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", part)
        part = escape(part)
        part = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", part)
        part = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", part)
        out.append(part)
    line = "".join(out)
    if line.startswith((".", "'")):
        line = "\\&" + line
    return line


def code_line(line):
    line = escape(line)
    return "\\&" + line if line.startswith((".", "'")) else line


def table_rows(lines):
    rows = []
    for ln in lines:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", ln.strip().strip("|"))]
        if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
            continue
        rows.append([c.replace("\\|", "|") for c in cells])
    return rows


def convert(md, version):
    # The date: SOURCE_DATE_EPOCH (reproducible builds), else today.
    when = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", time.time())))
    out = ['.TH LAYOVER 1 %s "layover %s" "User Commands"' % (time.strftime("%Y-%m-%d", when), version),
           ".SH NAME", NAME]
    lines = md.splitlines()
    i = 0
    para = []

    def flush():
        if para:
            out.append(".PP")
            out.extend(inline(p) for p in para)
            para.clear()

    while i < len(lines):
        ln = lines[i]
        s = ln.strip()
        if s.startswith("<!--"):
            while "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        if not s:
            flush()
            i += 1
            continue
        m = re.match(r"(#+)\s+(.*)", ln)
        if m:
            flush()
            level, title = len(m.group(1)), m.group(2)
            if level == 1:
                out.append(".SH DESCRIPTION")
            elif level == 2:
                out.append(".SH " + inline(title.upper()))
            else:
                out.append(".SS " + inline(title))
            i += 1
            continue
        if s.startswith("```"):
            flush()
            i += 1
            out.extend([".PP", ".nf", ".RS 4"])
            while i < len(lines) and not lines[i].strip().startswith("```"):
                out.append(code_line(lines[i]))
                i += 1
            out.extend([".RE", ".fi"])
            i += 1
            continue
        if ln.startswith("    ") and not para:
            out.extend([".PP", ".nf", ".RS 4"])
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                if not lines[i].strip() and not (i + 1 < len(lines) and lines[i + 1].startswith("    ")):
                    break
                out.append(code_line(lines[i][4:]))
                i += 1
            out.extend([".RE", ".fi"])
            continue
        if s.startswith("|"):
            flush()
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            rows = table_rows(block)
            head, body = rows[0], rows[1:]
            for row in body:
                out.append(".TP")
                out.append(inline(row[0]) or "\\&")
                rest = ["%s: %s" % (head[k], row[k]) if k > 1 else row[k] for k in range(1, len(row)) if row[k]]
                out.append(inline("; ".join(rest)) or "\\&")
            continue
        if re.match(r"(- |\d+\. )", s):
            flush()
            out.extend([".IP \\(bu 2"])
            out.append(inline(re.sub(r"^(- |\d+\. )", "", s)))
            i += 1
            while i < len(lines) and lines[i].strip() and lines[i].startswith("  ") and \
                    not re.match(r"(- |\d+\. )", lines[i].strip()):
                out.append(inline(lines[i].strip()))
                i += 1
            continue
        para.append(s)
        i += 1
    flush()
    out += [".SH SEE ALSO", "The documents in docs/ of the source:",
            "design.md, security.md, python.md, mcp.md, patch\\-format.md, troubleshooting.md."]
    # No paragraph macro right after a heading (mandoc -T lint warns).
    out = [ln for k, ln in enumerate(out) if not (ln == ".PP" and out[k - 1].startswith((".SH", ".SS")))]
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: helper/dist/man.py docs/cli.md VERSION")
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write(convert(f.read(), sys.argv[2]))


if __name__ == "__main__":
    main()
