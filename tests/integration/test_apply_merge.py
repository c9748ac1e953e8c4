"""Originals in saved patches (layover-patch/3, and the older /2 layout) and
the 3-way merge at apply when the real file moved since the base."""
import json
import subprocess

from apply_util import read_patch, tree


def lines(n, edits=None):
    edits = edits or {}
    return "".join(edits.get(i, "l%d\n" % i) for i in range(1, n + 1))


BASE = lines(40)
AGENT = lines(40, {30: "agent30\n"})


def saved(lo, tmp_path, *flags):
    (lo.target / "f.txt").write_text(BASE)
    r = lo.run("cd '%s' && printf '%%s' \"$NEW\" > f.txt" % lo.target, session="m", env={"NEW": AGENT})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / "m.tar.zst"
    lo("save", "m", "-o", patch, *flags, check=True)
    return patch


def test_save_carries_the_original_and_a_moved_file_merges(lo, tmp_path):
    patch = saved(lo, tmp_path)
    manifest, members = read_patch(patch)
    assert manifest["format"] == "layover-patch/3"
    assert [o["size"] for o in manifest["originals"]] == [len(BASE)]
    names = [m.name for m, _ in members]
    # The original right before its file, so zstd compresses one against the other.
    assert names == [".layover/manifest.json", ".layover/original", "f.txt", ".layover/sums"]
    assert members[1][1] == BASE.encode() and members[2][1] == AGENT.encode()
    # The real file moves on at a place the agent did not touch.
    (lo.target / "f.txt").write_text(lines(40, {3: "mine3\n"}))
    r = lo("apply", patch, "--target", lo.target, "--dry-run", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 0 and [m["path"] for m in out["merged"]] == ["f.txt"], r.stderr
    assert (lo.target / "f.txt").read_text() == lines(40, {3: "mine3\n"})
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert "f.txt (merged with changes made since)" in r.stdout.decode()
    assert (lo.target / "f.txt").read_text() == lines(40, {3: "mine3\n", 30: "agent30\n"})
    assert lo("undo", "--last", "--target", lo.target).returncode == 0
    assert tree(lo.target, mtimes=True) == before


def test_overlapping_changes_conflict_with_ranges_and_markers_only_when_asked(lo, tmp_path):
    patch = saved(lo, tmp_path)
    (lo.target / "f.txt").write_text(lines(40, {30: "mine30\n"}))
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1
    assert out["merge_conflicts"] == [{"path": "f.txt", "ranges": [
        {"base": [30, 1], "target": [30, 1], "patch": [30, 1]}]}]
    assert "lines 30" in out["conflicts"][0]["reason"]
    assert tree(lo.target, mtimes=True) == before
    r = lo("apply", patch, "--target", lo.target, "--yes", "--conflict=markers")
    assert r.returncode == 1 and b"conflict markers written" in r.stderr
    assert (lo.target / "f.txt").read_text() == lines(29) + (
        "<<<<<<< target\nmine30\n=======\nagent30\n>>>>>>> patch\n") + "".join("l%d\n" % i for i in range(31, 41))


def test_no_originals_and_a_hostile_original(lo, tmp_path):
    patch = saved(lo, tmp_path, "--no-originals")
    manifest, members = read_patch(patch)
    assert manifest["format"] == "layover-patch/1" and "originals" not in manifest
    (lo.target / "f.txt").write_text(lines(40, {3: "mine3\n"}))
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 1 and b"content changed on the target" in r.stderr
    # An original that is not the base's content (sums made consistent), or
    # one cut off: the patch is refused as hostile.
    from apply_util import write_patch
    from patch_builder import with_sums
    (lo.target / "f.txt").write_text(BASE)
    good = saved(lo, tmp_path)
    manifest, members = read_patch(good)
    for change, expect in ((lambda d: b"X" + d[1:], b"does not match its fingerprint"),
                           (lambda d: d[:-5], b"the manifest says")):
        forged = [(i, change(d) if i.name == ".layover/original" else d) for i, d in members]
        bad = tmp_path / "bad.tar.zst"
        write_patch(bad, with_sums(forged))
        r = lo("show", bad)
        assert r.returncode != 0 and expect in r.stderr, r.stderr
        r = lo("apply", bad, "--target", lo.target, "--yes")
        assert r.returncode == 1 and expect in r.stderr
        assert (lo.target / "f.txt").read_text() == BASE


def as_v2(manifest, members):
    """The same patch in the layover-patch/2 layout: one .layover/originals
    member after the payload holding every original back to back."""
    from apply_util import replace_manifest
    from patch_builder import with_sums
    import tarfile
    blob = b"".join(d for i, d in members if i.name == ".layover/original")
    rest = [(i, d) for i, d in members if i.name not in (".layover/original", ".layover/sums")]
    return with_sums(replace_manifest(rest, dict(manifest, format="layover-patch/2")) +
                     [(tarfile.TarInfo(".layover/originals"), blob)])


def test_an_old_v2_patch_still_merges_and_layouts_do_not_mix(lo, tmp_path):
    from apply_util import write_patch
    from patch_builder import with_sums
    manifest, members = read_patch(saved(lo, tmp_path))
    old = tmp_path / "old.tar.zst"
    write_patch(old, as_v2(manifest, members))
    (lo.target / "f.txt").write_text(lines(40, {3: "mine3\n"}))
    r = lo("apply", old, "--target", lo.target, "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "f.txt").read_text() == lines(40, {3: "mine3\n", 30: "agent30\n"})
    # A /3 patch holding the /2 member, or the reverse, is refused.
    from apply_util import replace_manifest
    v2 = [(i, d) for i, d in as_v2(manifest, members) if i.name != ".layover/sums"]
    v3 = [(i, d) for i, d in members if i.name != ".layover/sums"]
    for forged, expect in ((replace_manifest(v2, manifest), b"has a .layover/originals member"),
                           (replace_manifest(v3, dict(manifest, format="layover-patch/2")),
                            b"has a .layover/original member")):
        bad = tmp_path / "bad.tar.zst"
        write_patch(bad, with_sums(forged))
        r = lo("show", bad)
        assert r.returncode != 0 and expect in r.stderr, r.stderr


def test_a_stale_base_carries_no_original_and_stays_a_conflict(lo, tmp_path):
    """The real file changed after the sandbox copied it up: its content now is
    not the agent's base, so save stores no original for it (a merge against
    it would silently take back the real edit) and apply names the stale copy."""
    (lo.target / "f.txt").write_text(BASE)
    r = lo.run("cd '%s' && printf '%%s' \"$NEW\" > f.txt" % lo.target, session="st", env={"NEW": AGENT})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    moved = lines(40, {3: "mine3\n"})
    (lo.target / "f.txt").write_text(moved)
    patch = tmp_path / "st.tar.zst"
    lo("save", "st", "-o", patch, check=True)
    manifest, members = read_patch(patch)
    assert manifest.get("originals", []) == []
    assert ".layover/original" not in [m.name for m, _ in members]
    r = lo("apply", patch, "--target", lo.target, "--yes", "--json")
    out = json.loads(r.stdout)
    assert r.returncode == 1 and "stale" in out["conflicts"][0]["reason"], out
    assert out.get("merged", []) == []
    assert (lo.target / "f.txt").read_text() == moved


def test_a_moved_file_the_patch_also_adds_as_a_hard_link_stays_a_conflict(lo, tmp_path):
    # g.txt, a hard link to f.txt in the patch, is listed with the agent's
    # content: a merge of f.txt would reach it too, so nothing merges.
    (lo.target / "f.txt").write_text(BASE)
    r = lo.run("cd '%s' && printf '%%s' \"$NEW\" > f.txt && ln f.txt g.txt" % lo.target, session="m",
               env={"NEW": AGENT})
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / "m.tar.zst"
    lo("save", "m", "-o", patch, check=True)
    (lo.target / "f.txt").write_text(lines(40, {3: "mine3\n"}))
    before = tree(lo.target, mtimes=True)
    r = lo("apply", patch, "--target", lo.target, "--yes")
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 1 and "f.txt" in err and "content changed on the target" in err, err
    assert tree(lo.target, mtimes=True) == before


def test_diff_of_a_moved_file_says_whether_apply_merges_it(lo, tmp_path):
    # A reviewer's diff named every file moved on since the base "apply will report a conflict",
    # also one that apply then merged without a word: the note now says which it will be.
    patch = saved(lo, tmp_path)
    note = ("layover: note: f.txt changed on the real filesystem since the session's base was recorded; the diff "
            "shows its current content, and apply will %s\n")
    (lo.target / "f.txt").write_text(lines(40, {3: "mine3\n"}))
    r = lo("diff", patch, "--target", lo.target)
    merges = ("layover: note: f.txt changed on the real filesystem since the session's base was recorded; the diff "
              "shows what apply will write: the patch's changes merged into its current content (they do not "
              "overlap)\n")
    assert r.returncode == 1 and merges in r.stderr.decode(), r.stderr
    assert "report a conflict" not in r.stderr.decode()
    r = lo("apply", patch, "--target", lo.target, "--dry-run", "--json")
    assert [m["path"] for m in json.loads(r.stdout)["merged"]] == ["f.txt"]
    # Overlapping, or with its mode changed (apply merges neither): a conflict, as before.
    (lo.target / "f.txt").write_text(lines(40, {30: "mine30\n"}))
    r = lo("diff", patch, "--target", lo.target)
    assert note % "report a conflict" in r.stderr.decode(), r.stderr
    (lo.target / "f.txt").write_text(lines(40, {3: "mine3\n"}))
    (lo.target / "f.txt").chmod(0o444)
    r = lo("diff", patch, "--target", lo.target)
    assert note % "report a conflict" in r.stderr.decode(), r.stderr
    r = lo("apply", patch, "--target", lo.target, "--dry-run", "--json")
    assert json.loads(r.stdout)["merged"] == [] and json.loads(r.stdout)["conflicts"]


def test_diff_of_an_edited_copy_shows_what_apply_writes_not_the_edit_undone(lo, tmp_path):
    # newuser10: the reviewer edited line 3 of their copy, where the patch changes only line 30. diff
    # showed "-mine3 +l3" (the patch undoing the edit) where apply merges and keeps it: diff now shows
    # the merge, and the real file after apply is exactly the copy with diff's output applied.
    import shutil
    patch = saved(lo, tmp_path)
    mine = lines(40, {3: "mine3\n"})
    (lo.target / "f.txt").write_text(mine)
    r = lo("diff", patch, "--target", lo.target)
    out = r.stdout.decode()
    assert r.returncode == 1 and "-l30\n+agent30\n" in out, out
    assert "mine3" not in out and "+l3\n" not in out, out
    copy = tmp_path / "copy"
    shutil.copytree(lo.target, copy)
    subprocess.run(["git", "apply", "--unidiff-zero", "-"], cwd=copy, input=r.stdout, check=True)
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 0 and b"(merged with changes made since)" in r.stdout, r.stderr
    assert (lo.target / "f.txt").read_text() == (copy / "f.txt").read_text() == lines(
        40, {3: "mine3\n", 30: "agent30\n"})
    # Applied: diff now shows nothing left to write, as apply finds nothing to apply.
    assert lo("diff", patch, "--target", lo.target).stdout == b""
    r = lo("apply", patch, "--target", lo.target, "--yes")
    assert r.returncode == 0 and b"nothing to apply" in r.stdout, r.stdout


def test_originals_follow_the_walk_past_a_deleted_dirs_subtree_and_repeat_no_content(lo, tmp_path):
    # save finds each modified file's base record a few records past the
    # last one found (docs/performance.md, "Save, round 11"); a deleted dir
    # of 100 files puts 100 more base records between a.txt's and c.txt's,
    # and d.txt shares a.txt's base: the originals are the same as by path.
    t = lo.target
    (t / "a.txt").write_text(lines(20))
    (t / "b").mkdir()
    for i in range(100):
        (t / "b" / ("f%03d" % i)).write_text("gone %d\n" % i)
    (t / "c.txt").write_text(lines(30))
    (t / "d.txt").write_text(lines(20))
    (t / "e.txt").write_text(lines(40))
    r = lo.run("cd '%s' && rm -r b && for f in a c d e; do echo new >> $f.txt; done" % t, session="w")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    patch = tmp_path / "w.tar.zst"
    lo("save", "w", "-o", patch, check=True)
    manifest, members = read_patch(patch)
    assert manifest["format"] == "layover-patch/3"
    assert len([b for b in manifest["base"] if b["path"].startswith("b/")]) == 100
    assert [o["size"] for o in manifest["originals"]] == [len(lines(20)), len(lines(30)), len(lines(40))]
    names = [m.name for m, _ in members]
    assert names == [".layover/manifest.json", ".layover/original", "a.txt", ".wh.b", ".layover/original",
                     "c.txt", "d.txt", ".layover/original", "e.txt", ".layover/sums"], names
    originals = [data for m, data in members if m.name == ".layover/original"]
    assert originals == [lines(20).encode(), lines(30).encode(), lines(40).encode()]
    # It applies: the edits in place, b gone.
    r = lo("apply", patch, "--target", t, "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (t / "d.txt").read_text() == lines(20) + "new\n" and (t / "e.txt").read_text() == lines(40) + "new\n"
    assert not (t / "b").exists()
