"""`apply -p`: hunk by hunk on a real pty (y, n with a reason, s, e with a
scripted $EDITOR, a, d, q, ?), checked on the real filesystem: the file's
bytes, the remainder in status/diff, a second apply, and undo's bytes."""
import json
import os
from pathlib import Path

import pexpect

from apply_util import tree
from conftest import LAYOVER
from test_apply_hunks import BASE, EDITS, NEW, edit_session, lines

HUNK = r"Apply this hunk \[y,n,q,a,d(,s)?,e,\?\]\? "
WHOLE = r"Apply this change \[y,n,q,\?\]\? "
WHY = r"Why not\? .*: "


def _apply_p(lo, name, *extra, env=None):
    e = dict(lo.env, TERM="dumb")
    e.update(env or {})
    return pexpect.spawn(LAYOVER, ["apply", name, "-p", *extra], env=e, cwd=str(lo.target), timeout=20)


def answer_hunks(c, answers):
    """Answers the hunks of a three-hunk file in turn (an `n` with no reason)."""
    for answer in answers:
        c.expect(r"/3\) " + HUNK)
        c.sendline(answer)
        if answer == "n":
            c.expect(WHY)
            c.sendline("")


def _finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_y_n_with_a_reason_then_the_rest_stays_in_the_session_and_undo_gives_the_bytes_back(lo):
    edit_session(lo, "p")
    before = tree(lo.target, mtimes=True)
    c = _apply_p(lo, "p")
    c.expect(r"\+five")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("y")
    c.expect(r"\+twenty-five")
    c.expect(r"\(2/3\) " + HUNK)
    c.sendline("n")
    c.expect(WHY)
    c.sendline("keep line 25")
    c.expect(r"\(3/3\) " + HUNK)
    c.sendline("y")
    c.expect(r"A  other.txt")
    c.expect(WHOLE)
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    c.expect(r"f.txt \(hunks 1,3 of 3\)")
    c.expect(r"undo record: (\S+)")
    undo = c.match.group(1).decode()
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "other.txt").exists()
    # The rejections were recorded, with the reason.
    rj = json.loads(lo("rejections", "p", "--json", check=True).stdout)
    assert sorted((x["path"], x["hunk"], x["reason"]) for x in rj["rejections"]) == [("f.txt", 2, "keep line 25"),
                                                                        ("other.txt", 0, "")]
    # Both in force: the added file's was "superseded: changed since" as soon as it was made (its
    # fingerprint was taken of an empty side), so the next apply took other.txt all the same.
    assert [(x["path"], x["state"]) for x in rj["rejections"]] == [("f.txt", "rejected"), ("other.txt", "rejected")]
    # The remainder against the new real file: hunk 2 only.
    out = lo("diff", "p", "--", "f.txt").stdout.decode()
    assert out.count("\n@@ ") == 1 and "+twenty-five" in out and "+five" not in out
    st = json.loads(lo("status", "p", "--json", check=True).stdout)
    assert sorted(x["path"] for x in st) == ["f.txt", "other.txt"]
    # Undo of the partial apply puts back exactly the bytes it replaced.
    r = lo("undo", undo)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert tree(lo.target, mtimes=True) == before
    # Apply again hunk 1 only, then a second (plain) apply takes the rest.
    assert lo("apply", "p", "--hunks", "f.txt:1", "--only", "f.txt", "--yes").returncode == 0
    r = lo("apply", "p", "--yes", "--include-rejected")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == NEW
    assert (lo.target / "other.txt").read_text() == "other\n"


def _three_hunk_session(lo, session):
    """f.txt of 60 lines on the target; the session edits lines 10, 14 and 40."""
    (lo.target / "f.txt").write_text(lines(60))
    new = lines(60, {10: "ten\n", 14: "fourteen\n", 40: "forty\n"})
    r = lo.run("cd '%s' && printf '%%s' \"$NEW\" > f.txt" % lo.target, session=session, env={"NEW": new})
    assert r.returncode == 0


def test_split_then_edit_with_a_scripted_editor(lo, tmp_path):
    _three_hunk_session(lo, "s")
    editor = tmp_path / "ed.sh"
    # First a context line broken (refused, asked again), then a good edit.
    editor.write_text("#!/bin/sh\nif [ -e \"$0.once\" ]; then sed -i -e 's/^ L38/ l38/' -e 's/^+forty/+FORTY/' \"$1\";\n"
                      "else touch \"$0.once\"; sed -i 's/^ l38/ L38/' \"$1\"; fi\n")
    editor.chmod(0o755)
    os.chmod(str(tmp_path), 0o755)
    c = _apply_p(lo, "s", env={"EDITOR": str(editor), "VISUAL": ""})
    c.expect(r"\(1/2\) Apply this hunk \[y,n,q,a,d,s,e,\?\]\? ")
    c.sendline("s")
    c.expect("Split into 2 hunks.")
    c.expect(r"\+ten")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("y")
    c.expect(r"\+fourteen")
    c.expect(r"\(2/3\) " + HUNK)
    c.sendline("n")  # a part of a hunk: no reason asked
    c.expect(r"\+forty")
    c.expect(r"\(3/3\) " + HUNK)
    c.sendline("e")
    c.expect("no longer applies")
    c.expect(r"Edit it again\? \[y/n\] ")
    c.sendline("y")
    c.expect(r"undo record: ")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {10: "ten\n", 40: "FORTY\n"})
    # A second apply takes the rest: the session's version whole.
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == lines(60, {10: "ten\n", 14: "fourteen\n", 40: "forty\n"})


def test_help_a_d_and_q(lo):
    (lo.target / "g.txt").write_text(BASE)
    (lo.target / "h.txt").write_text(BASE)
    script = ("cd '%s' && printf '%%s' \"$NEW\" > f.txt && printf '%%s' \"$NEW\" > g.txt && "
              "printf '%%s' \"$NEW\" > h.txt" % lo.target)
    (lo.target / "f.txt").write_text(BASE)
    assert lo.run(script, session="q", env={"NEW": NEW}).returncode == 0
    before = tree(lo.target, mtimes=True)
    c = _apply_p(lo, "q")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("?")
    c.expect("e - edit this hunk in \\$EDITOR")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("a")  # f.txt: all
    c.expect(r"diff --git a/g.txt")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("y")
    c.expect(r"\(2/3\) " + HUNK)
    c.sendline("d")  # the rest of g.txt: no
    c.expect(r"diff --git a/h.txt")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("q")
    c.expect(r"applied 2 change")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == NEW
    assert (lo.target / "g.txt").read_text() == lines(60, {5: EDITS[5]})
    assert (lo.target / "h.txt").read_text() == BASE
    # Ctrl+D (EOF) at the first question: nothing applied.
    after = tree(lo.target, mtimes=True)
    assert after != before
    c = _apply_p(lo, "q")
    c.expect([HUNK, WHOLE])
    c.sendeof()
    assert _finish(c) == 1
    assert tree(lo.target, mtimes=True) == after


def test_without_a_terminal_it_names_hunks_and_applies_nothing(lo):
    edit_session(lo, "n")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "n", "-p", input=b"y\n")
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "--hunks" in err and len(err.strip().splitlines()) == 1, err
    assert tree(lo.target, mtimes=True) == before


def test_exit_prompt_p_then_hunks_walks_the_picked_files_and_a_applies_the_answers(lo):
    edit_session(lo, "e")
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    c = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "e"], env=e, cwd=str(lo.target), timeout=20)
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("-other.txt")
    c.expect(r"Pick \(")
    c.sendline("hunks")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    c.expect(r"\(2/3\) " + HUNK)
    c.sendline("y")
    c.expect(r"\(3/3\) " + HUNK)
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    c.expect(r"1 change\(s\) chosen")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("a")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("still holds the changes not applied")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")  # the menu again, over the rest (prompt2)
    c.sendline("k")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {25: EDITS[25]})
    assert not (lo.target / "other.txt").exists()
    # The rest applies later, without a stale-copy conflict.
    r = lo("apply", "e", "--yes", "--include-rejected")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == NEW


def test_hostile_names_and_lines_are_shown_terminal_safe(lo):
    import io
    name = "e\x1b]0;pwn\x07.txt"
    (lo.target / name).write_text(BASE)
    r = lo.run("cd '%s' && printf 'l1\\033[2J\\n' > \"$N\" && printf '%%s' \"$REST\" >> \"$N\"" % lo.target,
               session="h", env={"N": name, "REST": BASE.split("\n", 1)[1]})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    c = _apply_p(lo, "h")
    seen = io.BytesIO()
    c.logfile_read = seen
    c.expect(r"\(1/1\) " + HUNK)
    c.sendline("y")
    c.expect(r"applied 1 change")
    assert _finish(c) == 0
    out = seen.getvalue()
    assert b"\x1b" not in out and b"\x07" not in out, out
    assert b"+l1^[[2J" in out
    assert (lo.target / name).read_bytes() == b"l1\x1b[2J\n" + BASE.split("\n", 1)[1].encode()


def test_exit_prompt_shows_rejections_and_s_and_a_skip_them_as_save_and_apply_do(lo, tmp_path):
    edit_session(lo, "xr")
    lo("reject", "xr", "f.txt:2", "-m", "keep line 25", check=True)
    lo("reject", "xr", "other.txt", "-m", "no new files", check=True)
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    c = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "xr"], env=e, cwd=str(lo.target), timeout=20)
    c.expect(r"R  f\.txt \[hunk 2\] rejected: keep line 25\r?\n")
    c.expect(r"R  other\.txt rejected: no new files\r?\n")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("s")
    c.expect(r"Save patch to .*: ")
    c.sendline(str(tmp_path / "xr.tar.zst"))
    c.expect(r"leaving out 2 rejected change\(s\)")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("a")
    # Said before the question, and counted out of it: f.txt (a hunk left out) is the one change applied.
    c.expect(r"skipping 2 rejected change\(s\)")
    c.expect(r"Apply 1 change to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("still holds the changes not applied")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")  # the menu again, over the rest (prompt2)
    c.sendline("k")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "other.txt").exists()
    # Kept, with the rejections still in force (the hunk is hunk 1 now).
    out = lo("status", "xr", "--no-pager", check=True).stdout.decode()
    assert "R  f.txt [hunk 1] rejected: keep line 25" in out and "R  other.txt rejected" in out, out
    shown = json.loads(lo("show", tmp_path / "xr.tar.zst", "--json", check=True).stdout)
    assert [x["path"] for x in shown] == ["f.txt"], shown


def test_exit_prompt_apply_of_picked_files_leaves_the_count_sessions_shows_at_what_is_left(lo):
    # sessions showed the exit's count (3) after [p] dropped one and [a] applied two.
    r = lo.run("cd '%s' && echo a > a1 && echo b > b1 && echo c > c1" % lo.target, session="pk")
    assert r.returncode == 0, r.stderr
    c = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "pk"], env=dict(lo.env, PAGER="cat", TERM="dumb"),
                      cwd=str(lo.target), timeout=20)
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("p")
    c.expect(r"Pick \(")
    c.sendline("-b1")
    c.expect(r"Pick \(")
    c.sendline("")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("a")
    c.expect(r"Apply 2 changes to .*\? \[y/N\] ")
    c.sendline("y")
    c.expect("still holds the changes not applied")
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")  # the menu again, over the rest (prompt2)
    c.sendline("k")
    assert _finish(c) == 0
    listed = {s["name"]: s for s in json.loads(lo("sessions", "--json", check=True).stdout)}
    assert (listed["pk"]["changes"], listed["pk"]["changes_exact"]) == (1, True), listed["pk"]


def test_answers_survive_a_conflicting_apply_and_only_what_changed_is_asked_again(lo):
    # newuser10: every answer was lost when the apply the walk built ended in a conflict, and the next
    # `apply -p` asked them all again. They are kept, keyed by path and content: the next walk offers
    # them, asks only the hunk that changed since, and a success drops them.
    (lo.target / "g.txt").write_text("g\n")
    edit_session(lo, "k", " && echo G > g.txt")
    (lo.target / "g.txt").write_text("mine\n")  # the real g.txt moves on: the apply conflicts on it
    before = tree(lo.target, mtimes=True)
    # early4: the conflict is said before g.txt's questions, which are not asked; a --dry-run keeps
    # the answers as a conflicting apply did (a conflict now comes before the questions).
    c = _apply_p(lo, "k", "--dry-run")
    answer_hunks(c, ("y", "n", "y"))  # f.txt's three hunks
    c.expect(r"g.txt conflicts with the target: .*left out, not asked about")
    c.expect(r"A  other.txt")
    c.expect(WHOLE)
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    c.expect(r"your 4 answer\(s\) are kept")
    assert _finish(c) == 0
    assert tree(lo.target, mtimes=True) == before
    # Again: the kept answers are offered; f.txt and other.txt take theirs, g.txt (no longer a
    # conflict) is asked.
    (lo.target / "g.txt").write_text("g\n")
    c = _apply_p(lo, "k")
    c.expect(r"reuse its 4 answers\? \[Y/n\] ")
    c.sendline("")
    i = c.expect([r"diff --git a/g.txt", r"diff --git a/f.txt", WHOLE])
    assert i == 0, c.before
    c.expect(HUNK)
    c.sendline("n")
    c.expect(WHY)
    c.sendline("")
    c.expect(r"reused 4 of the 4 answer\(s\)")
    c.expect(r"f.txt \(hunks 1,3 of 3\)")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert (lo.target / "g.txt").read_text() == "g\n"
    assert not (lo.target / "other.txt").exists()
    # Applied: nothing is kept, so the next walk asks from the start.
    c = _apply_p(lo, "k")
    assert c.expect([r"reuse its", HUNK, WHOLE]) != 0
    c.sendeof()
    assert _finish(c) == 1


def _keep_answers_by_a_conflicting_apply(lo, name):
    (lo.target / "g.txt").write_text("g\n")
    edit_session(lo, name, " && echo G > g.txt")
    (lo.target / "g.txt").write_text("mine\n")  # g.txt conflicts, left out unasked (early4)
    c = _apply_p(lo, name, "--dry-run")  # a dry run keeps the answers, as a conflicting apply did
    while c.expect([HUNK, WHOLE, r"answer\(s\) are kept"]) != 2:
        c.sendline("y")
    assert _finish(c) == 0
    kept = sorted((Path(lo.state) / "apply-p").iterdir())
    assert len(kept) == 1
    return kept[0]


def test_gc_removes_kept_answers_once_their_session_is_discarded_or_they_are_old(lo):
    # leftovers2: kept `apply -p` answers were never removed. gc keeps them while their session is
    # there and removes them once it is discarded; answers unused for --older-than go too.
    kept = _keep_answers_by_a_conflicting_apply(lo, "k")
    out = lo("gc", check=True).stdout.decode()
    assert "answers" not in out and kept.exists()
    lo("discard", "k", check=True)
    out = lo("gc", "--dry-run", check=True).stdout.decode()
    assert "would remove kept apply -p answers" in out and "their session is gone" in out and kept.exists()
    out = lo("gc", check=True).stdout.decode()
    assert "removed kept apply -p answers" in out and "their session is gone" in out, out
    assert not kept.exists()
    # Old: a session still there, answers not saved again for 31 days.
    kept = _keep_answers_by_a_conflicting_apply(lo, "k2")
    old = kept.stat().st_mtime - 31 * 86400
    os.utime(kept, (old, old))
    out = lo("gc", check=True).stdout.decode()
    assert "not used for 31d" in out and not kept.exists(), out
    # discard --now removes its session's answers at once.
    kept = _keep_answers_by_a_conflicting_apply(lo, "k3")
    lo("discard", "k3", "--now", check=True)
    assert not kept.exists()


def test_a_file_apply_merges_offers_the_hunks_of_the_merge_not_ones_undoing_your_edit(lo, tmp_path):
    # newuser10: on a copy edited since the patch's base, -p offered a hunk taking the edit back
    # ("-mine3 +l3"), while apply of the whole file merges and keeps it. The hunks are now the merge's.
    from test_apply_merge import lines as mlines, saved
    patch = saved(lo, tmp_path)
    (lo.target / "f.txt").write_text(mlines(40, {3: "mine3\n"}))
    c = _apply_p(lo, str(patch), "--target", str(lo.target))
    c.expect(r"its hunks are of what apply will write")
    c.expect(r"\(1/1\) " + HUNK)
    assert b"mine3" not in c.before and b"+agent30" in c.before, c.before
    c.sendline("y")
    c.expect(r"f.txt \(merged with changes made since\)")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == mlines(40, {3: "mine3\n", 30: "agent30\n"})


def test_a_dry_run_keeps_split_and_edit_answers_and_the_real_run_reuses_them_without_a_question(lo, tmp_path):
    _three_hunk_session(lo, "r")
    editor = tmp_path / "ed.sh"
    editor.write_text("#!/bin/sh\necho run >> \"$0.runs\"; sed -i 's/^+forty/+FORTY/' \"$1\"\n")
    editor.chmod(0o755)
    os.chmod(str(tmp_path), 0o755)
    env = {"EDITOR": str(editor), "VISUAL": ""}
    c = _apply_p(lo, "r", "--dry-run", env=env)
    c.expect(r"\(1/2\) " + HUNK)
    c.sendline("s")
    c.expect(r"\(1/3\) " + HUNK)
    c.sendline("y")
    c.expect(r"\(2/3\) " + HUNK)
    c.sendline("n")
    c.expect(r"\(3/3\) " + HUNK)
    c.sendline("e")
    c.expect(r"dry run: would apply")
    c.expect(r"your 4 answer\(s\) are kept")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60)
    c = _apply_p(lo, "r", env=env)
    c.expect(r"reuse its 4 answers\? \[Y/n\] ")
    c.sendline("y")
    i = c.expect([r"reused 4 of the 4 answer\(s\)", HUNK])
    assert i == 0, c.before
    c.expect(r"undo record: ")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == lines(60, {10: "ten\n", 40: "FORTY\n"})
    assert (tmp_path / "ed.sh.runs").read_text() == "run\n"  # the edit was reused, not made again


def test_exit_prompt_a_with_only_rejected_changes_applies_nothing_and_says_so_without_asking(lo):
    # Before: "Apply 1 change to ...? [y/N]", then y applied 0 changes.
    edit_session(lo, "ro")
    lo("reject", "ro", "f.txt", check=True)
    lo("reject", "ro", "other.txt", check=True)
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    c = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "ro"], env=e, cwd=str(lo.target), timeout=20)
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("a")
    c.expect(r"skipping 2 rejected change\(s\)")
    i = c.expect([r"every selected change is rejected; nothing left to apply \(\[p\] picks others; "
                  r"'layover rejections ro' lists the rejections\)", r"\[y/N\] "])
    assert i == 0, c.before
    c.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    c.sendline("k")
    assert _finish(c) == 0
    assert (lo.target / "f.txt").read_text() == BASE and not (lo.target / "other.txt").exists()
    assert lo("status", "ro", "--no-pager", check=True).returncode == 0


def _say(c, pattern, answer):
    """At the question matching pattern, answer; an `n` then gets no reason."""
    c.expect(pattern)
    c.sendline(answer)
    if answer == "n":
        c.expect(WHY)
        c.sendline("")


def test_apply_p_a_new_directory_y_then_asks_each_file_in_it_n_leaves_it_whole(lo):
    # As docs/cli.md says (newuser17 found it undocumented): y to a new dir makes it and asks about each change in
    # it; n leaves the dir and all it holds, with no question about its files.
    r = lo.run("cd '%s' && mkdir nd && echo a > nd/a && echo b > nd/b" % lo.target, session="nd")
    assert r.returncode == 0, r.stderr
    c = _apply_p(lo, "nd")
    _say(c, r"A +nd/?\s.*" + WHOLE, "n")
    assert _finish(c) in (0, 1)  # EOF: nothing asked after the dir's n (c.before holds the rest)
    assert "nd/a" not in c.before.decode(errors="replace") and not (lo.target / "nd").exists()
    c = _apply_p(lo, "nd")
    for pattern, answer in ((r"A +nd/?\s.*", "y"), (r"nd/a.*", "y"), (r"nd/b.*", "n")):
        _say(c, pattern + WHOLE, answer)
    assert _finish(c) == 0
    assert (lo.target / "nd/a").read_text() == "a\n" and not (lo.target / "nd/b").exists()
