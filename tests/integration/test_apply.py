"""`layover apply` / `layover undo` through the real pipeline (run -> save -> apply),
as an unprivileged user: results compared byte for byte with the same edits made
directly on a copy of the original tree."""
import base64
import json
import os
import subprocess
from pathlib import Path

import pytest

from apply_util import copy_tree, tree
from conftest import LAYOVER

# Every capture-matrix case that tar can carry, as shell edits run from the tree root.
MATRIX_SETUP = r"""
set -e
echo keep > meta.txt; chmod 644 meta.txt
mkdir -p mdir; echo k > mdir/k; chmod 755 mdir
echo f > f2d
mkdir -p d2f/deep; echo x > d2f/deep/x
echo f > f2l
ln -s notes.txt l2f
mkdir -p opq/inner; echo a > opq/a; echo b > opq/inner/b
echo shared > hl_a; ln hl_a hl_b
mkfifo fifo2f
mkdir -p xdir; echo x > xdir/x.txt
"""
MATRIX_EDIT = r"""
set -e
echo more >> notes.txt
echo new > added.txt
rm docs/readme.txt
rm -r old
mkdir -p newdir/sub; echo deep > newdir/sub/f; chmod 750 newdir
chmod 600 meta.txt
chmod 700 mdir
rm f2d; mkdir f2d; echo in > f2d/in
rm -r d2f; echo nowfile > d2f
rm f2l; ln -s docs f2l
rm l2f; echo was-link > l2f
rm link; ln -s added.txt link
rm -rf opq; mkdir opq; echo c > opq/c
mkfifo newfifo; chmod 640 newfifo
rm fifo2f; echo nowfile > fifo2f
echo h > h1; ln h1 h2
echo appended >> hl_a
echo sp > 'sp ace.txt'
printf 'nl' > "$(printf 'new\nline')"
printf 'bad' > "$(printf 'bad\377name')"
printf '#!/bin/sh\n' > run.sh; chmod 755 run.sh
python3 -c "import os; os.setxattr('xdir/x.txt', 'user.note', b'hello')"
python3 -c "import os; os.setxattr('added.txt', 'user.tag', b'\x00bin')"
"""


def sh(script, cwd):
    subprocess.run(["/bin/sh", "-c", script], cwd=str(cwd), check=True)


def prepare(lo, tmp_path):
    """Set up the rich tree; return (original copy, expected after-edit copy)."""
    sh(MATRIX_SETUP, lo.target)
    orig = tmp_path / "orig"
    expected = tmp_path / "expected"
    for d in (orig, expected):
        copy_tree(lo.target, d)
    sh(MATRIX_EDIT, expected)
    return orig, expected


def run_edit(lo, script, **kw):
    r = lo.run("cd '%s' && %s" % (lo.target, script), **kw)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r


def apply_json(lo, *args, **kw):
    r = lo("apply", *args, "--json", **kw)
    out = json.loads(r.stdout.decode() or "null")
    return r, out


def test_apply_every_matrix_case_gives_the_tree_the_sandbox_saw_and_undo_restores_it(lo, tmp_path):
    orig, expected = prepare(lo, tmp_path)
    before_mtimes = tree(lo.target, mtimes=True)
    run_edit(lo, MATRIX_EDIT, session="m")
    patch = tmp_path / "m.tar.zst"
    lo("save", "m", "-o", patch, check=True)
    r, out = apply_json(lo, patch, "--target", lo.target, "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    assert out["conflicts"] == [] and out["error"] is None
    assert out["undo"] and Path(out["undo"]).is_dir()
    assert tree(lo.target) == tree(expected)
    # The in-place update kept the target's hard link (hl_b sees the new bytes).
    assert os.stat(str(lo.target / "hl_a")).st_ino == os.stat(str(lo.target / "hl_b")).st_ino
    # Nothing left behind by staging.
    assert not [p for p in os.listdir(str(lo.target)) if p.startswith(".layover-tmp")]

    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert tree(lo.target, mtimes=True) == before_mtimes
    assert tree(lo.target) == tree(orig)
    assert not (lo.target / ".layover-undo").exists()


def test_apply_session_by_name_and_summary(lo):
    run_edit(lo, "echo changed > notes.txt && echo n > fresh.txt")
    sessions = json.loads(lo("sessions", "--json", check=True).stdout)
    name = sessions[0]["name"]
    r = lo("apply", name, "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    text = r.stdout.decode()
    assert "applied 2 change(s)" in text and "fresh.txt" in text and "layover undo" in text
    assert (lo.target / "notes.txt").read_text() == "changed\n"
    assert (lo.target / "fresh.txt").read_text() == "n\n"


def test_a_partial_apply_leaves_the_count_sessions_shows_at_what_is_left(lo):
    # sessions showed the exit's count (3) after apply -- a1 took one: status said 2.
    run_edit(lo, "echo a > a1 && echo b > b1 && echo c > c1", session="part")

    def count():
        return {s["name"]: (s["changes"], s["changes_exact"])
                for s in json.loads(lo("sessions", "--json", check=True).stdout)}["part"]

    assert count() == (3, True)
    lo("apply", "part", "--yes", "--", "a1", check=True)
    assert count() == (2, True)
    lo("apply", "part", "--yes", "--exclude", "c1", check=True)
    assert count() == (1, True)
    assert lo("status", "part", check=True).stdout.decode().splitlines()[-1] == "1 change: 1 added"


def test_apply_dry_run_changes_nothing(lo):
    run_edit(lo, "echo changed > notes.txt && rm -r old", session="d")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "d", "--dry-run")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert "would apply 2" in r.stdout.decode()
    assert tree(lo.target, mtimes=True) == before
    assert not (lo.target / ".layover-undo").exists()


def test_apply_without_yes_and_without_a_terminal_refuses_and_writes_nothing(lo):
    run_edit(lo, "echo changed > notes.txt", session="y")
    before = tree(lo.target, mtimes=True)
    r = lo("apply", "y")
    assert r.returncode == 2
    assert b"--yes" in r.stderr
    assert tree(lo.target, mtimes=True) == before


def test_apply_into_a_read_only_directory_names_it_and_the_fix(lo):
    # The temporary staging name is not the user's business: the directory is.
    (lo.target / "ro").mkdir()
    (lo.target / "ro" / "f").write_text("old\n")
    os.chmod(lo.target / "ro", 0o555)
    try:
        run_edit(lo, "echo new > ro/f", session="ro")
        r = lo("apply", "ro", "--yes")
    finally:
        os.chmod(lo.target / "ro", 0o755)
    err = r.stderr.decode()
    assert r.returncode == 1 and err.count("\n") == 1, err
    assert "its directory on the target is not writable (Permission denied); make it writable (chmod u+w) " \
        "and apply again; nothing was applied" in err and ".layover-tmp" not in err
    assert (lo.target / "ro" / "f").read_text() == "old\n" and not (lo.target / "ro" / "g").exists()


def test_an_only_path_that_matches_no_change_is_named(lo, tmp_path):
    # A typo in --only (or PATH...) applies nothing: stderr says which path matched nothing.
    run_edit(lo, "echo changed > notes.txt && echo n > fresh.txt", session="typo")
    r = lo("apply", "typo", "--only", "note.txt", "--yes")
    assert r.returncode == 0 and "nothing to apply" in r.stdout.decode()
    assert r.stderr.decode() == ("layover: apply: 'note.txt' matches no change (paths are relative to the target "
                                 "%s; 'layover status typo' lists the changes)\n" % lo.target)
    assert (lo.target / "notes.txt").read_text() != "changed\n" and not (lo.target / "fresh.txt").exists()
    # status, diff and blame say so too (they printed "no changes" / an empty diff, exit 0, and blame
    # "no step touched note.txt", with nothing on which tree the path is taken from).
    for verb in ("status", "diff"):
        r = lo(verb, "typo", "--", "note.txt")
        assert r.returncode == 0 and r.stderr.decode().endswith(
            "layover: %s: 'note.txt' matches no change (paths are relative to the target %s; 'layover status "
            "typo' lists the changes)\n" % (verb, lo.target)), (verb, r.stderr)
    r = lo("status", "typo", "--", "fresh.txt")
    assert r.returncode == 0 and b"matches no change" not in r.stderr and b"fresh.txt" in r.stdout
    r = lo("blame", "typo", "note.txt")
    assert r.returncode == 1 and r.stderr.decode() == (
        "layover: no step of session 'typo' touched note.txt (paths are relative to the target %s)\n" % lo.target)
    # save too (it wrote an empty patch without a word); a path that matches is not named.
    r = lo("save", "typo", "-o", tmp_path / "typo.tar.zst", "--", "note.txt", "fresh.txt", "nope/")
    err = r.stderr.decode()
    assert r.returncode == 0 and (tmp_path / "typo.tar.zst").exists(), err
    for name in ("note.txt", "nope"):
        assert ("layover: save: '%s' matches no change (paths are relative to the target %s; 'layover status "
                "typo' lists the changes)\n" % (name, lo.target)) in err, err
    assert "'fresh.txt'" not in err
    r = lo("show", tmp_path / "typo.tar.zst", "--json")
    assert [c["path"] for c in json.loads(r.stdout)] == ["fresh.txt"], r.stdout
    # Of a patch file, the command that lists its changes is `show FILE` (it named `status`, which
    # takes a session, and the most recent one when none is named).
    for verb in ("diff", "apply"):
        r = lo(verb, tmp_path / "typo.tar.zst", *(["--dry-run"] if verb == "apply" else []), "--", "note.txt")
        assert ("layover: %s: 'note.txt' matches no change (paths are relative to the target %s; 'layover show "
                "%s' lists the changes)\n" % (verb, lo.target, tmp_path / "typo.tar.zst")) in r.stderr.decode(), \
            r.stderr
    r = lo("save", "typo", "-o", tmp_path / "all.tar.zst")
    assert r.returncode == 0 and b"matches no change" not in r.stderr, r.stderr
    r = lo("apply", "typo", "--yes", "--", "fresh.txt", "nope/")  # one matches: it applies, the other is named
    assert r.returncode == 0 and "'nope' matches no change" in r.stderr.decode()
    assert "'fresh.txt'" not in r.stderr.decode()
    assert (lo.target / "fresh.txt").read_text() == "n\n"


def test_apply_of_a_running_session_is_refused(lo):
    proc = subprocess.Popen(
        [LAYOVER, "run", "--target", str(lo.target),
         "--session", "live", "--on-exit", "keep", "--", "/bin/sh", "-c",
         "echo x > '%s/live.txt'; sleep 30" % lo.target],
        env=lo.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        import time
        for _ in range(100):
            if (lo.upper("live") / "live.txt").exists():
                break
            time.sleep(0.05)
        r = lo("apply", "live", "--yes")
        assert r.returncode == 1
        assert b"still running" in r.stderr and b"stop it first" in r.stderr
        assert not (lo.target / "live.txt").exists()
        r = lo("apply", "live", "--yes", "--json")
        assert r.returncode == 1 and json.loads(r.stdout)["error"].startswith("session live is still running")
        # A dry run writes nothing: it reads the running session, as status
        # does, and says its changes may still change.
        r = lo("apply", "live", "--dry-run")
        assert r.returncode == 0, r.stderr
        assert b"dry run: would apply 1 change(s)" in r.stdout and b"live.txt" in r.stdout, r.stdout
        assert b"is still running" in r.stderr and b"may still change" in r.stderr, r.stderr
        r = lo("apply", "live", "--dry-run", "--json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["running"] is True and out["dry_run"] is True and out["error"] is None, out
        assert [p["path"] for p in out["applied"]] == ["live.txt"], out
        assert not (lo.target / "live.txt").exists()
        assert proc.poll() is None  # still running
        assert [s["status"] for s in json.loads(lo("sessions", "--json").stdout) if s["name"] == "live"] == ["running"]
    finally:
        proc.kill()
        proc.wait()


def test_apply_file_replaced_by_fifo_applies_without_a_false_conflict(lo, tmp_path):
    (lo.target / "f2fifo").write_text("s\n")
    run_edit(lo, "rm f2fifo && mkfifo f2fifo", session="ff")
    r, out = apply_json(lo, "ff", "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    import stat as st
    assert st.S_ISFIFO(os.lstat(str(lo.target / "f2fifo")).st_mode)


def test_unreadable_modes_apply_and_undo_as_an_ordinary_user(lo, tmp_path):
    # A file made 000 and a new directory made 000 (with content) or 300:
    # apply runs as the user, who cannot open them afterwards; the durable
    # flush and the undo record must cope, and undo must restore exactly.
    before = tree(lo.target, mtimes=True)
    edit = ("chmod 000 notes.txt && mkdir -p nd/locked nd/wonly && echo x > nd/locked/f && echo y > nd/wonly/g && "
            "chmod 000 nd/locked && chmod 300 nd/wonly")
    run_edit(lo, edit, session="modes")
    r, out = apply_json(lo, "modes", "--yes", "--undo-to", tmp_path / "undo.tar.zst")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    assert (tmp_path / "undo.tar.zst").stat().st_size > 0
    t = lo.target
    assert os.lstat(str(t / "notes.txt")).st_mode & 0o7777 == 0
    assert os.lstat(str(t / "nd" / "locked")).st_mode & 0o7777 == 0
    assert os.lstat(str(t / "nd" / "wonly")).st_mode & 0o7777 == 0o300
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr
    assert tree(lo.target, mtimes=True) == before


def test_a_file_dated_before_1970_with_a_fraction_of_a_second_applies_with_its_mtime(lo):
    run_edit(lo, "echo old > ancient.txt && touch -d '1969-12-31 23:59:58.25 UTC' ancient.txt && "
             "ln -s ancient.txt oldlink && touch -h -d '1969-12-31 23:59:59.5 UTC' oldlink", session="t0")
    r, out = apply_json(lo, "t0", "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    assert os.lstat(str(lo.target / "ancient.txt")).st_mtime_ns == -1750000000
    assert (lo.target / "ancient.txt").read_text() == "old\n"
    assert os.lstat(str(lo.target / "oldlink")).st_mtime_ns == -500000000


def getfacl(path):
    r = subprocess.run(["getfacl", "-c", "-n", str(path)], capture_output=True, check=True)
    return r.stdout.decode()


def test_a_replaced_file_and_a_replaced_directory_keep_their_posix_acls(lo):
    t = lo.target
    subprocess.run(["setfacl", "-m", "u:12345:r", str(t / "notes.txt")], check=True)
    subprocess.run(["setfacl", "-m", "u:12345:rx,d:u:12345:rx", str(t / "docs")], check=True)
    assert "user:12345:r--" in getfacl(t / "notes.txt")
    run_edit(lo, "echo new > notes.txt && rm -r docs && mkdir docs && echo n > docs/new.txt", session="acl")
    r, out = apply_json(lo, "acl", "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    assert (t / "notes.txt").read_text() == "new\n"
    assert (t / "docs" / "new.txt").read_text() == "n\n"
    assert "user:12345:r--" in getfacl(t / "notes.txt")
    acl = getfacl(t / "docs")
    assert "user:12345:r-x" in acl and "default:user:12345:r-x" in acl, acl


def test_a_setgid_directory_keeps_its_bit_through_a_mode_change_and_undo_restores_it_exactly(lo):
    t = lo.target
    os.chmod(str(t / "docs"), 0o2755)
    if os.stat(str(t / "docs")).st_mode & 0o7777 != 0o2755:
        raise AssertionError("this filesystem or user cannot set setgid on a directory")
    before = tree(t, mtimes=True)
    # g+w on the setgid dir, and setuid on a file that had none: the first
    # keeps the setgid bit the directory has, the second is never set.
    run_edit(lo, "chmod 2775 docs && chmod 4644 notes.txt", session="sgid")
    r, out = apply_json(lo, "sgid", "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    assert os.stat(str(t / "docs")).st_mode & 0o7777 == 0o2775
    assert os.stat(str(t / "notes.txt")).st_mode & 0o7777 == 0o644
    r = lo("undo", out["undo"])
    assert r.returncode == 0, r.stderr
    assert os.stat(str(t / "docs")).st_mode & 0o7777 == 0o2755
    assert tree(t, mtimes=True) == before


def test_apply_json_lists_every_path_in_the_one_path_shape_non_utf8_bytes_exact(lo):
    # The same {"path", "path_b64"?} objects as status --json: a name that is
    # not UTF-8 comes back display-escaped with its exact bytes beside it.
    run_edit(lo, "printf x > \"$(printf 'bad\\377name')\" && echo ok > plain.txt", session="u8")
    r, out = apply_json(lo, "u8", "--yes")
    assert r.returncode == 0, (r.stderr.decode(errors="replace"), out)
    by_bytes = {base64.b64decode(p["path_b64"]) if "path_b64" in p else p["path"].encode(): p
                for p in out["applied"]}
    assert set(by_bytes) == {b"bad\xffname", b"plain.txt"}
    assert "path_b64" not in by_bytes[b"plain.txt"]
    assert "\\xff" in by_bytes[b"bad\xffname"]["path"]
    assert "applied_b64" not in out
    assert (lo.target / os.fsdecode(b"bad\xffname")).read_bytes() == b"x"


def test_an_option_after_the_double_dash_is_named_as_such(lo):
    # `apply S -- f.c --yes` read '--yes' as a path: stderr said "'--yes' matches no change (paths are
    # relative to the target ...)" and then "pass --yes", which the user had typed.
    run_edit(lo, "echo changed > notes.txt", session="dd")
    r = lo("apply", "dd", "--", "notes.txt", "--yes")
    err = r.stderr.decode()
    assert r.returncode == 2 and err.startswith(
        "layover: apply: '--yes' matches no change: a word after '--' is a path, not an option; put options "
        "before '--'\n"), err
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"
    for verb in ("status", "diff"):
        r = lo(verb, "dd", "--", "notes.txt", "--json")
        assert "'--json' matches no change: a word after '--' is a path" in r.stderr.decode(), (verb, r.stderr)
    r = lo("apply", "dd", "--yes", "--", "notes.txt")
    assert r.returncode == 0 and b"matches no change" not in r.stderr, r.stderr


def test_undo_of_a_partial_apply_gives_the_session_its_count_back(lo):
    # apply --only recounts what `sessions` shows (2 -> 1); its undo put the change back out of the
    # real tree but left the count at 1 while status listed 2.
    run_edit(lo, "echo changed > notes.txt && echo n > fresh.txt", session="pc")

    def count():
        s = [s for s in json.loads(lo("sessions", "--json").stdout) if s["name"] == "pc"][0]
        return s["changes"], s["changes_exact"], s["state"]

    assert count() == (2, True, "kept")
    r = lo("apply", "pc", "--yes", "--only", "notes.txt")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert count() == (1, True, "kept")
    r = lo("undo", "--last", "--target", lo.target)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert count() == (2, True, "kept")
    assert lo("status", "pc").stdout.decode().splitlines()[-1] == "2 changes: 1 added, 1 modified"
    # A whole apply and its undo: applied, then kept with its count.
    assert lo("apply", "pc", "--yes").returncode == 0 and count() == (2, True, "applied")
    assert lo("undo", "--last", "--target", lo.target).returncode == 0 and count() == (2, True, "kept")


def test_undo_of_a_record_already_undone_says_so_not_no_patch_file(lo):
    """The record an undo removed, given again, read as a missing patch file
    ('no patch file R; check the path (a patch is what save -o wrote)'):
    found by the attack pass of 27 Nov (attack21)."""
    run_edit(lo, "echo changed > notes.txt", session="ud")
    r = lo("apply", "ud", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    record = [ln.split(": ", 1)[1] for ln in r.stdout.decode().splitlines() if ln.startswith("undo record: ")][0]
    assert lo("undo", record, "--target", lo.target).returncode == 0
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"
    r = lo("undo", record, "--target", lo.target)
    assert r.returncode == 1
    assert r.stderr.decode() == ("layover: undo: no undo record or undo patch %s (an undo removes its record); "
                                 "'layover undo --list' lists the records left\n" % record)
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_an_undo_finished_after_a_failure_names_what_it_restored(lo):
    # An undo stopped by a read-only dir keeps its journal; the next undo finished it but said
    # "restored 0 path(s)" (and --json "applied": []), as if nothing had come back.
    run_edit(lo, "echo changed > notes.txt && echo n > docs/fresh.txt", session="ro")
    assert lo("apply", "ro", "--yes").returncode == 0
    os.chmod(lo.target / "docs", 0o555)
    try:
        r = lo("undo", "--last", "--target", lo.target)
        assert r.returncode == 1 and b"the undo is incomplete" in r.stderr, r.stderr
    finally:
        os.chmod(lo.target / "docs", 0o755)
    r = lo("undo", "--last", "--target", lo.target)
    out = r.stdout.decode()
    assert r.returncode == 0 and b"finished an interrupted undo" in r.stderr, r.stderr
    assert out == "restored 2 path(s)\n  docs/fresh.txt  (removed: the apply added it)\n  notes.txt\n", out
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n" and not (lo.target / "docs/fresh.txt").exists()
    s = [s for s in json.loads(lo("sessions", "--json").stdout) if s["name"] == "ro"][0]
    assert s["state"] == "kept" and s["changes"] == 2, s


def test_a_path_given_from_a_subdir_names_the_path_that_would_match(lo):
    # From docs/, `diff S -- readme.txt` (as git takes it) matched nothing, and the line said only that
    # paths are relative to the target: it now names the path that would match.
    run_edit(lo, "echo more >> docs/readme.txt", session="sub")
    for verb in ("status", "diff", "apply"):
        extra = ["--dry-run"] if verb == "apply" else []
        r = lo(verb, "sub", *extra, "--", "readme.txt", "nope.txt", cwd=lo.target / "docs")
        err = r.stderr.decode()
        assert ("layover: %s: 'readme.txt' matches no change (paths are relative to the target %s, not the current "
                "directory): 'docs/readme.txt' would match\n" % (verb, lo.target)) in err, (verb, err)
        assert ("layover: %s: 'nope.txt' matches no change (paths are relative to the target %s; 'layover status "
                "sub' lists the changes)\n" % (verb, lo.target)) in err, (verb, err)


def test_undo_list_without_target_names_the_tree_last_applied_to(lo):
    # `undo --list` (default $HOME) said only "no undo records for $HOME" while the applies were on a
    # project; `undo --last` named that tree, --list did not.
    run_edit(lo, "echo n > fresh.txt", session="ul")
    assert lo("apply", "ul", "--yes").returncode == 0
    r = lo("undo", "--list", env={"HOME": str(lo.state)})
    assert r.returncode == 0 and r.stdout.decode() == "no undo records for %s\n" % os.path.realpath(lo.state)
    assert r.stderr.decode() == ("layover: undo: the newest apply elsewhere was on %s: 'layover undo --list "
                                 "--target %s'\n" % (lo.target, lo.target)), r.stderr
    r = lo("undo", "--list", "--target", lo.target)
    assert r.returncode == 0 and "ul" in r.stdout.decode() and r.stderr == b""


def test_an_empty_path_after_the_double_dash_is_a_usage_error_not_the_whole_tree(lo, tmp_path):
    # `apply S --yes -- "$F"` with F unset applied every change ('' normalized to the root, which selects
    # all); status/diff/save listed all. Python and MCP already refuse paths=[""].
    run_edit(lo, "echo changed > notes.txt && echo n > fresh.txt", session="ep")
    want = ("an empty path (''), which would select every change; name paths relative to the target, or give "
            "none for all of them (an unset variable, as in -- \"$F\", gives '')")
    for argv in (("apply", "ep", "--yes", "--", ""), ("status", "ep", "--", "notes.txt", ""),
                 ("diff", "ep", "--", ""), ("save", "ep", "-o", str(tmp_path / "ep.patch"), "--", "")):
        r = lo(*argv)
        err = r.stderr.decode()
        assert r.returncode == 2 and want in err and len(err.splitlines()) == 1, (argv, r.returncode, err)
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert not (lo.target / "fresh.txt").exists() and not (tmp_path / "ep.patch").exists()
    r = lo("diff", "ep", "--", ".")
    assert r.returncode == 1 and b"+changed" in r.stdout, r.stderr  # diff: 1 = differences


def test_apply_lists_a_directory_with_its_slash_as_status_does(lo):
    # status listed "A  build/" and apply "A build": the same change, two spellings.
    run_edit(lo, "mkdir -p build/sub && echo x > build/sub/o && rm -r old && echo b > notes.txt", session="sl")
    assert "A  build/  (1 file, 2 B)" in lo("status", "sl").stdout.decode()
    r = lo("apply", "sl", "--yes")
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    lines = [ln.split("  [")[0] for ln in out.splitlines() if ln.startswith("  ")]
    assert lines == ["  A build/", "  A build/sub/", "  A build/sub/o", "  M notes.txt", "  D old/"], out
    assert (lo.target / "build/sub/o").read_text() == "x\n" and not (lo.target / "old").exists()
