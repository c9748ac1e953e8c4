"""Every piece of advice an error prints names flags the verb accepts.

Finds `layover VERB ... --flag` in the C++ sources' string literals (each
literal, and the literals of one statement joined, so advice built from
pieces is seen whole) and checks each flag against `layover VERB --help`,
which lists every flag the verb's parser takes."""
import os
import re
import subprocess
from pathlib import Path

from conftest import LAYOVER

VERB_RE = re.compile(r"layover (run|sessions|status|save|show|diff|apply|undo|discard|restore|doctor|gc)\b([^'`]*)")
FLAG_RE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _sources():
    root = Path(os.environ.get("LAYOVER_SOURCE_ROOT", Path(__file__).resolve().parents[2]))
    src = root / "src" if (root / "src" / "helper").is_dir() else root
    files = [p for d in ("helper", "review", "capture") for p in (src / d).rglob("*.cc")]
    assert files, "no C++ sources found under %s" % src
    return files


def _statements(text):
    """The string literals of each statement (up to a ';' outside them), joined."""
    text = re.sub(r"^\s*//[^\n]*", "", text, flags=re.M)
    lits = []
    for m in re.finditer(r'"((?:[^"\\\n]|\\.)*)"|;', text):
        if m.group(0) == ";":
            if lits:
                yield " ".join(lits).replace("\\n", " ")
            lits = []
        else:
            lits.append(m.group(1))
    if lits:
        yield " ".join(lits).replace("\\n", " ")


def _advice():
    found = {}
    for f in _sources():
        for joined in _statements(f.read_text(errors="replace")):
            for m in VERB_RE.finditer(joined):
                verb, rest = m.group(1), m.group(2)
                # The advice ends where the quoted command does, or at the next sentence.
                rest = re.split(r"[)\]]|; |, or |\. ", rest)[0]
                for flag in FLAG_RE.findall(rest):
                    found.setdefault((verb, flag), set()).add("%s: %s" % (f.name, joined[:120]))
    return found


def test_every_flag_in_error_advice_is_one_the_verb_accepts():
    found = _advice()
    assert len(found) >= 5, found  # the scan finds advice at all
    helps = {}
    bad = []
    for (verb, flag), where in sorted(found.items()):
        if verb not in helps:
            r = subprocess.run([LAYOVER, verb, "--help"], capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
            helps[verb] = (r.stdout + r.stderr).decode(errors="replace")
            assert r.returncode == 0, "layover %s --help failed: %s" % (verb, helps[verb])
        if flag == "--help":
            continue  # accepted when `VERB --help` printed help, checked below
        if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", helps[verb]):
            bad.append("layover %s does not accept %s (advice in %s)" % (verb, flag, sorted(where)[0]))
    assert not bad, "\n".join(bad)


def test_the_scan_catches_a_flag_the_verb_lacks():
    # The check itself can fail: undo's help does not list apply's --exclude.
    r = subprocess.run([LAYOVER, "undo", "--help"], capture_output=True, timeout=30)
    assert b"--exclude" not in r.stdout and b"--force" in r.stdout
    joined = list(_statements('x = "fix: re-run \'layover undo " + id + " --exclude GLOB\'";'))
    m = VERB_RE.search(joined[0])
    assert m and "--exclude" in FLAG_RE.findall(m.group(2))
