"""Per-hunk apply (`apply --hunks/--exclude-hunks`, `diff --hunk-numbers`):
the real file gets its base with only the chosen hunks; the rest stays in the
session, a second apply takes it, undo gives back the exact bytes."""
import json
import os
import subprocess

from apply_util import tree


def lines(n, edits=None):
    edits = edits or {}
    return "".join(edits.get(i, "l%d\n" % i) for i in range(1, n + 1))


BASE = lines(60)
EDITS = {5: "five\n", 25: "twenty-five\n", 45: "forty-five\n"}  # three hunks
NEW = lines(60, EDITS)


def edit_session(lo, name, extra=""):
    (lo.target / "f.txt").write_text(BASE)
    script = "cd '%s' && printf '%%s' \"$NEW\" > f.txt && echo other > other.txt%s" % (lo.target, extra)
    r = lo.run(script, session=name, env={"NEW": NEW})
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def hunk_headers(lo, name, *paths):
    r = lo("diff", name, "--hunk-numbers", "--", *paths)
    assert r.returncode == 1, r.stderr.decode(errors="replace")
    return [l for l in r.stdout.decode().splitlines() if l.startswith("@@ ")]


def test_hunk_numbers_are_git_apply_safe_and_a_partial_apply_leaves_the_rest_in_the_session(lo, tmp_path):
    edit_session(lo, "h")
    heads = hunk_headers(lo, "h", "f.txt")
    assert [h.rsplit("@@", 1)[1] for h in heads] == [" hunk 1", " hunk 2", " hunk 3"]
    # The numbered diff still applies with git.
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "f.txt").write_text(BASE)
    (copy / "other.txt").write_text("")
    os.unlink(str(copy / "other.txt"))
    diff = lo("diff", "h", "--hunk-numbers", "--", "f.txt").stdout
    g = subprocess.run(["git", "apply", "-"], input=diff, cwd=str(copy), capture_output=True)
    assert g.returncode == 0, g.stderr.decode()
    assert (copy / "f.txt").read_text() == NEW

    r = lo("apply", "h", "--hunks", "f.txt:1,3", "--only", "f.txt", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert "f.txt (hunks 1,3 of 3)" in r.stdout.decode(), r.stdout.decode()
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "other.txt").exists()
    # The remainder, against the new real file: hunk 2 only, and no stale note.
    r = lo("diff", "h", "--", "f.txt")
    assert r.returncode == 1
    out = r.stdout.decode()
    assert out.count("\n@@ ") == 1 and "+twenty-five" in out and "+five" not in out
    assert b"changed on the real filesystem" not in r.stderr
    st = json.loads(lo("status", "h", "--json", check=True).stdout)
    assert sorted(c["path"] for c in st) == ["f.txt", "other.txt"]
    # A second apply takes the rest, without a stale-copy conflict.
    r = lo("apply", "h", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == NEW
    assert (lo.target / "other.txt").read_text() == "other\n"


def test_exclude_hunks_and_undo_restores_the_exact_bytes(lo):
    edit_session(lo, "x")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "x", "--exclude-hunks", "f.txt:2", "--yes", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert out["partial"] == [{"path": "f.txt", "hunks": [1, 3], "of": 3}]
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert (lo.target / "other.txt").read_text() == "other\n"
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert tree(lo.target, mtimes=True) == before
    # The session still has everything; after the undo it applies whole.
    r = lo("apply", "x", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == NEW


def test_a_missing_hunk_a_binary_file_or_a_moved_file_applies_nothing(lo):
    edit_session(lo, "e", " && printf 'a\\0b' > bin.dat")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "e", "--hunks", "f.txt:4", "--yes")
    assert r.returncode == 1
    assert b"f.txt has 3 hunks, no hunk 4" in r.stderr and b"nothing was applied" in r.stderr
    r = lo("apply", "e", "--hunks", "bin.dat:1", "--yes")
    assert r.returncode == 1
    assert b"bin.dat" in r.stderr and b"nothing was applied" in r.stderr
    r = lo("apply", "e", "--hunks", "nosuch.txt:1", "--yes")
    assert r.returncode == 1 and b"not among the changes" in r.stderr
    r = lo("apply", "e", "--hunks", "f.txt", "--yes")
    assert r.returncode == 2 and b"names no hunk" in r.stderr
    r = lo("apply", "e", "--hunks", "x")  # no --yes: the bad value is reported first
    assert r.returncode == 2 and b"--hunks " in r.stderr and b"--yes" not in r.stderr.split(b"\n")[0], r.stderr
    assert tree(lo.target, mtimes=True) == before
    # The real file moved since the base: a conflict, even with --force.
    (lo.target / "f.txt").write_text(BASE + "tail\n")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "e", "--hunks", "f.txt:1", "--force", "--yes")
    assert r.returncode == 1 and b"conflict" in r.stderr
    assert tree(lo.target, mtimes=True) == before


def test_hunks_of_a_file_the_patch_also_adds_as_a_hard_link_are_refused_not_spread(lo):
    # The agent edits f.txt and adds g.txt as a hard link to it: diff lists
    # g.txt whole, so a part of f.txt must not reach it through the link.
    edit_session(lo, "l", " && ln f.txt g.txt")
    before = tree(lo.target, mtimes=True)
    for choice in (("--hunks", "f.txt:1"), ("--exclude-hunks", "f.txt:1,2,3")):
        r = lo("apply", "l", *choice, "--yes")
        err = r.stderr.decode(errors="replace")
        assert r.returncode == 1 and "g.txt is a hard link to it" in err and "nothing was applied" in err, err
        assert tree(lo.target, mtimes=True) == before
    # Without the other name, or with every hunk, it applies.
    r = lo("apply", "l", "--hunks", "f.txt:1,2,3", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    f, g = lo.target / "f.txt", lo.target / "g.txt"
    assert f.read_text() == NEW and g.read_text() == NEW and f.stat().st_ino == g.stat().st_ino
    assert lo("undo", "--last", "--target", lo.target).returncode == 0
    r = lo("apply", "l", "--hunks", "f.txt:2", "--exclude", "g.txt", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert f.read_text() == lines(60, {25: EDITS[25]}) and not g.exists()
