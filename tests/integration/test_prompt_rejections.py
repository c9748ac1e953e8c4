"""The exit prompt's rejections against its pick (docs/review.md,
"Rejections"): `[s]`'s "leaving out N rejected change(s)" counts the
rejections that leave something out of this save, each once, and a
rejected dir left unpicked in [p] no longer takes away what is picked in
it. Checked in the saved patch and the real tree afterwards."""
import json
import re

from test_apply_hunks import edit_session
from test_attack39 import MENU, _finish, _pick


def _save(c, path):
    c.sendline("s")
    c.expect(r"Save patch to .*: ")
    c.sendline(str(path))
    c.expect(r"saved |not saved")
    said = re.findall(r"leaving out (\d+) rejected change", c.before.decode(errors="replace"))
    c.expect(MENU)
    return int(said[0]) if said else 0


def _in(lo, patch):
    r = lo("apply", patch, "--target", lo.target, "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    return sorted(x["path"] for x in json.loads(r.stdout)["applied"])


def test_s_counts_each_rejection_that_leaves_something_out_once(lo, tmp_path):
    # A file inside a rejected dir, a hunk of a file rejected whole, a file [p] left out: rejected too,
    # but nothing more is left out for them. [s] said 'leaving out 4' (or 5) where 2 rejections left
    # something out of the save (nd and f.txt).
    edit_session(lo, "cnt", " && mkdir nd && echo a > nd/a && echo b > nd/b && echo h > h.txt")
    for what in ("nd", "nd/a", "f.txt:2", "f.txt", "h.txt"):
        lo("reject", "cnt", what, check=True)
    c = _pick(lo, "cnt", ["-h.txt"])
    assert _save(c, tmp_path / "p.tar.zst") == 2
    assert _in(lo, tmp_path / "p.tar.zst") == ["other.txt"]
    # [a] names the same two, and asks about the one change left.
    c.sendline("a")
    c.expect(r"skipping (\d+) rejected change\(s\):")
    assert c.match.group(1) == b"2"
    c.expect(r"Apply (\d+) changes? to")
    assert c.match.group(1) == b"1", c.before
    listed = c.before.decode(errors="replace")
    assert "nd rejected" in listed and "f.txt rejected" in listed and "nd/a" not in listed, listed
    assert "hunk" not in listed and "h.txt" not in listed, listed
    c.sendline("n")
    c.expect(MENU)
    c.sendline("k")
    assert _finish(c) == 0
    # `layover save` counts alike (no pick: h.txt counts).
    r = lo("save", "cnt", "-o", tmp_path / "all.tar.zst")
    assert r.returncode == 0 and "leaving out 3 rejected change(s)" in r.stderr.decode(), r.stderr.decode()
    assert _in(lo, tmp_path / "all.tar.zst") == ["other.txt"]


def test_a_file_picked_inside_a_rejected_dir_left_unpicked_is_applied_and_saved(lo, tmp_path):
    r = lo.run("cd '%s' && mkdir -p top/nd && echo a > top/nd/a && echo b > top/nd/b && echo x > top/x"
               % lo.target, session="pk")
    assert r.returncode == 0, r.stderr
    lo("reject", "pk", "top/nd", "-m", "no build dirs", check=True)
    # The dir unpicked, a file in it picked: the rejection of the dir no longer takes the file (it took
    # it before: 'Apply 2 changes?', then top/nd/a not applied); the dir comes along to hold it.
    c = _pick(lo, "pk", ["top", "-top/nd", "+top/nd/a"])
    assert _save(c, tmp_path / "p.tar.zst") == 0
    assert _in(lo, tmp_path / "p.tar.zst") == ["top", "top/nd", "top/nd/a", "top/x"]
    c.sendline("a")
    c.expect(r"Apply (\d+) changes? to .*\[y/N\] ")
    assert c.match.group(1) == b"3" and b"skipping" not in c.before, c.before
    c.sendline("y")
    c.expect("applied")
    c.expect(MENU)
    c.sendline("k")
    assert _finish(c) == 0
    assert (lo.target / "top/nd/a").read_text() == "a\n" and (lo.target / "top/x").read_text() == "x\n"
    assert not (lo.target / "top/nd/b").exists()


def test_a_rejected_dir_left_picked_takes_what_it_holds(lo, tmp_path):
    r = lo.run("cd '%s' && mkdir -p top/nd && echo a > top/nd/a && echo b > top/nd/b && echo x > top/x"
               % lo.target, session="pd")
    assert r.returncode == 0, r.stderr
    lo("reject", "pd", "top/nd", "-m", "no build dirs", check=True)
    c = _pick(lo, "pd", ["-top/nd/b"])
    assert _save(c, tmp_path / "p.tar.zst") == 1
    assert _in(lo, tmp_path / "p.tar.zst") == ["top", "top/x"]
    c.sendline("a")
    c.expect(r"skipping 1 rejected change\(s\):")
    c.expect(r"Apply (\d+) changes? to .*\[y/N\] ")
    assert c.match.group(1) == b"2", c.before
    c.sendline("y")
    c.expect("applied")
    c.expect(MENU)
    c.sendline("k")
    assert _finish(c) == 0
    assert (lo.target / "top/x").read_text() == "x\n" and not (lo.target / "top/nd").exists()
