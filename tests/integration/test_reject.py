"""Rejections (`layover reject`, `rejections`, `status`, `apply`): a rejected
change or hunk stays in the session, later applies skip it, and a new edit by
the agent supersedes the rejection."""
import json
import os

from test_apply_hunks import BASE, EDITS, NEW, edit_session, lines


def test_reject_refuses_what_is_not_there_and_records_nothing(lo):
    edit_session(lo, "r0", extra=" && printf '\\0\\1' > bin.dat")
    for args, code, text in [
        (["nope.txt"], 1, "nope.txt is not a change of this session"),
        (["f.txt:4"], 1, "f.txt has 3 hunks, no hunk 4"),
        (["bin.dat:1"], 1, "bin.dat has no hunks"),
        (["other.txt:1"], 1, "other.txt has no hunks (it is added"),
        (["f.txt", "-m", "two\nlines"], 2, "not one line"),
        (["f.txt", "g.txt"], 2, "one PATH[:HUNK] at a time"),
    ]:
        r = lo("reject", "r0", *args)
        assert r.returncode == code, (args, r.stderr.decode())
        assert text in r.stderr.decode(), (args, r.stderr.decode())
    assert not (lo.session_dir("r0") / "rejections.json").exists()
    r = lo("reject", "nosuch", "f.txt")
    assert r.returncode == 1 and b"nosuch" in r.stderr


def test_rejected_hunk_and_file_are_skipped_by_apply_and_shown_by_status(lo):
    edit_session(lo, "r1")
    r = lo("reject", "r1", "f.txt:2", "-m", "keep line 25")
    assert r.returncode == 0, r.stderr.decode()
    assert "f.txt [hunk 2] rejected: keep line 25" in r.stdout.decode()
    assert lo("reject", "r1", "other.txt", "-m", "no new files", check=True).returncode == 0

    out = lo("status", "r1", "--no-pager", check=True).stdout.decode()
    assert "R  f.txt [hunk 2] rejected: keep line 25\n" in out, out
    assert "R  other.txt rejected: no new files\n" in out, out
    # `status NAME -- PATH` shows PATH's R lines only.
    out = lo("status", "r1", "--no-pager", "--", "f.txt", check=True).stdout.decode()
    assert "R  f.txt [hunk 2] rejected: keep line 25\n" in out and "other.txt" not in out, out
    st = {c["path"]: c for c in json.loads(lo("status", "r1", "--json", check=True).stdout)}
    assert [(x["hunk"], x["reason"], x["state"]) for x in st["f.txt"]["rejected"]] == [(2, "keep line 25", "rejected")]
    assert st["other.txt"]["rejected"][0]["hunk"] == 0
    rj = json.loads(lo("rejections", "r1", "--json", check=True).stdout)
    assert [x["seq"] for x in rj["rejections"]] == [1, 2] and rj["next_seq"] == 3

    r = lo("apply", "r1", "--yes")
    assert r.returncode == 0, r.stderr.decode()
    assert "skipping 2 rejected change(s)" in r.stderr.decode()
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "other.txt").exists()
    # The session keeps them; the rejected hunk is still in force (now hunk 1).
    out = lo("status", "r1", "--no-pager", check=True).stdout.decode()
    assert "R  f.txt [hunk 1] rejected: keep line 25" in out, out
    r = lo("apply", "r1", "--yes", "--include-rejected")
    assert r.returncode == 0, r.stderr.decode()
    assert (lo.target / "f.txt").read_text() == NEW
    assert (lo.target / "other.txt").read_text() == "other\n"


def test_a_new_edit_supersedes_the_rejection(lo):
    edit_session(lo, "r2")
    lo("reject", "r2", "f.txt", "-m", "no", check=True)
    # The agent edits the file again: the rejection no longer holds.
    r = lo.run("cd '%s' && echo more >> f.txt" % lo.target, session="r2")
    assert r.returncode == 0, r.stderr.decode()
    out = lo("status", "r2", "--no-pager", check=True).stdout.decode()
    assert "R  f.txt rejected (superseded: changed since): no" in out, out
    r = lo("apply", "r2", "--yes", "--only", "f.txt")
    assert r.returncode == 0, r.stderr.decode()
    assert "not skipped: f.txt rejected (superseded" in r.stderr.decode()
    assert (lo.target / "f.txt").read_text() == NEW + "more\n"
    assert BASE != NEW


def layer_bytes(root):
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (st.st_mode, st.st_size, p.read_bytes() if p.is_file() and not p.is_symlink()
                                         else None)
    return out


def test_discard_rejected_drops_them_from_an_unstepped_session(lo):
    edit_session(lo, "d1")
    lo("reject", "d1", "f.txt:2", check=True)
    lo("reject", "d1", "other.txt", check=True)
    r = lo("discard", "d1", "--rejected")
    assert r.returncode == 0, r.stderr.decode()
    assert "dropped 2 rejected change(s)" in r.stdout.decode()
    # The real tree is untouched; the session holds the rest only.
    assert (lo.target / "f.txt").read_text() == BASE and not (lo.target / "other.txt").exists()
    st = {c["path"]: c for c in json.loads(lo("status", "d1", "--json", check=True).stdout)}
    assert list(st) == ["f.txt"] and st["f.txt"]["rejected"] == []
    out = lo("diff", "d1", "--", "f.txt").stdout.decode()
    assert out.count("\n@@ ") == 2 and "+five" in out and "+forty-five" in out and "twenty-five" not in out
    assert json.loads(lo("rejections", "d1", "--json", check=True).stdout)["rejections"] == []
    lo("apply", "d1", "--yes", check=True)
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})


def test_discard_rejected_removes_a_nested_file_from_the_live_upper(lo):
    # The parent is opened beneath the upper (no symlink on the way), and
    # only the rejected file goes: its sibling in the same new dir stays.
    edit_session(lo, "d3", extra=" && mkdir -p a/b && echo x > a/b/new.txt && echo y > a/b/keep.txt")
    lo("reject", "d3", "a/b/new.txt", check=True)
    r = lo("discard", "d3", "--rejected")
    assert r.returncode == 0, r.stderr.decode()
    upper = lo.session_dir("d3") / "upper"
    assert not (upper / "a/b/new.txt").exists() and (upper / "a/b/keep.txt").read_text() == "y\n"
    paths = [c["path"] for c in json.loads(lo("status", "d3", "--json", check=True).stdout)]
    assert "a/b/new.txt" not in paths and "a/b/keep.txt" in paths, paths
    assert not (lo.target / "a").exists()


def test_discard_rejected_never_changes_a_frozen_step(lo):
    (lo.target / "g.txt").write_text("real g\n")
    edit_session(lo, "d2", extra=" && echo a > a.txt && echo agent > g.txt")
    r = lo.run("cd '%s' && echo c > c.txt" % lo.target, session="d2")  # the resume freezes step 1
    assert r.returncode == 0, r.stderr.decode()
    steps = lo.session_dir("d2") / "steps"
    assert (steps / "0001").is_dir()
    before = layer_bytes(steps)
    for what in ("a.txt", "g.txt", "c.txt", "f.txt:1"):
        lo("reject", "d2", what, "-m", "not " + what, check=True)
    r = lo("discard", "d2", "--rejected")
    assert r.returncode == 0, r.stderr.decode()
    assert "dropped 4 rejected change(s)" in r.stdout.decode(), (r.stdout.decode(), lo("rejections", "d2").stdout)
    assert layer_bytes(steps) == before
    st = {c["path"]: c["kind"] for c in json.loads(lo("status", "d2", "--json", check=True).stdout)}
    assert st == {"f.txt": "modified", "other.txt": "added"}, st
    out = lo("diff", "d2", "--", "f.txt").stdout.decode()
    assert out.count("\n@@ ") == 2 and "+five" not in out and "+twenty-five" in out
    assert (lo.target / "g.txt").read_text() == "real g\n"
    assert not (lo.target / "a.txt").exists() and (lo.target / "f.txt").read_text() == BASE
    r = lo("discard", "d2", "--rejected")
    assert r.returncode == 0 and "no rejected changes in force" in r.stdout.decode()


def test_discard_rejected_keeps_the_user_xattrs_of_what_it_puts_back(lo):
    # The file put back from the real tree (a change an earlier step holds)
    # and the file rewritten without a hunk keep their user xattrs: without
    # them each was a change of its own, and apply took the real xattrs away.
    g = lo.target / "g.txt"
    g.write_text("real g\n")
    os.setxattr(str(g), "user.tag", b"g-real")
    (lo.target / "f.txt").write_text(BASE)
    os.setxattr(str(lo.target / "f.txt"), "user.tag", b"f-real")
    gd = lo.target / "gd"  # a dir the put-back file needs in the live upper
    gd.mkdir()
    (gd / "h.txt").write_text("real h\n")
    os.setxattr(str(gd), "user.dtag", b"d-real")
    script = ("cd '%s' && printf '%%s' \"$NEW\" > f.txt && setfattr -n user.agent -v 1 f.txt && echo agent > g.txt"
              " && echo agent > gd/h.txt" % lo.target)
    r = lo.run(script, session="dx", env={"NEW": NEW})
    assert r.returncode == 0, r.stderr.decode()
    r = lo.run("cd '%s' && echo c > c.txt" % lo.target, session="dx")  # the resume freezes step 1
    assert r.returncode == 0, r.stderr.decode()
    lo("reject", "dx", "g.txt", check=True)
    lo("reject", "dx", "gd/h.txt", check=True)
    lo("reject", "dx", "f.txt:2", check=True)
    r = lo("discard", "dx", "--rejected")
    assert r.returncode == 0 and "dropped 3 rejected change(s)" in r.stdout.decode(), r.stderr.decode()
    st = {c["path"]: c["kind"] for c in json.loads(lo("status", "dx", "--json", check=True).stdout)}
    assert st == {"c.txt": "added", "f.txt": "modified"}, st
    lo("apply", "dx", "--yes", check=True)
    f = str(lo.target / "f.txt")
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert (os.getxattr(f, "user.tag"), os.getxattr(f, "user.agent")) == (b"f-real", b"1")
    assert g.read_text() == "real g\n" and os.getxattr(str(g), "user.tag") == b"g-real"
    assert (gd / "h.txt").read_text() == "real h\n" and os.getxattr(str(gd), "user.dtag") == b"d-real"


def test_save_leaves_out_rejected_changes_unless_include_rejected(lo, tmp_path):
    edit_session(lo, "s1")
    lo("reject", "s1", "f.txt:2", "-m", "keep line 25", check=True)
    lo("reject", "s1", "other.txt", "-m", "no new files", check=True)
    patch, whole = tmp_path / "s1.tar.zst", tmp_path / "s1-all.tar.zst"
    r = lo("save", "s1", "-o", patch)
    assert r.returncode == 0, r.stderr.decode()
    err = r.stderr.decode()
    assert "leaving out 2 rejected change(s)" in err and "  f.txt [hunk 2] rejected: keep line 25" in err, err
    r = lo("save", "s1", "-o", whole, "--include-rejected")
    assert r.returncode == 0 and "leaving out" not in r.stderr.decode(), r.stderr.decode()
    shown = {c["path"]: c for c in json.loads(lo("show", patch, "--json", check=True).stdout)}
    assert sorted(shown) == ["f.txt"], shown
    assert sorted(c["path"] for c in json.loads(lo("show", whole, "--json", check=True).stdout)) == [
        "f.txt", "other.txt"]
    # The patch's f.txt is the session's without hunk 2: applied, the real file gets hunks 1 and 3 only.
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr.decode()
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "other.txt").exists()
    # The session is untouched: its rejections still hold.
    out = lo("status", "s1", "--no-pager", check=True).stdout.decode()
    assert "R  other.txt rejected: no new files" in out, out


def test_on_exit_apply_skips_rejected_changes_and_keeps_the_session(lo):
    edit_session(lo, "oe", " && echo t > third.txt")
    lo("reject", "oe", "f.txt:2", "-m", "keep line 25", check=True)
    lo("reject", "oe", "other.txt", check=True)
    r = lo.run("true", session="oe", on_exit="apply")  # resumed, then applied at its end
    assert r.returncode == 0, r.stderr.decode()
    err = r.stderr.decode()
    assert "skipping 2 rejected change(s)" in err and "still holds the rejected changes" in err, err
    assert (lo.target / "f.txt").read_text() == lines(60, {5: EDITS[5], 45: EDITS[45]})
    assert not (lo.target / "other.txt").exists()
    out = lo("status", "oe", "--no-pager", check=True).stdout.decode()
    assert "R  f.txt [hunk 1] rejected: keep line 25" in out and "R  other.txt rejected" in out, out
    # `sessions` counts what the session still holds (f.txt's rejected hunk and other.txt; third.txt is
    # applied), as after the exit prompt's partial apply; it kept the count of before the apply, 3.
    assert (lo.target / "third.txt").read_text() == "t\n"
    s = [s for s in json.loads(lo("sessions", "--json").stdout) if s["name"] == "oe"][0]
    assert (s["changes"], s["changes_exact"]) == (2, True), s
