"""A person at the exit prompt and a reviewer handed a patch file
(newuser13): what they met, each test failing before its fix. Checked on the
real filesystem afterwards."""
import os
from pathlib import Path

import pexpect

from conftest import LAYOVER

ROOT = Path(os.environ.get("LAYOVER_SOURCE_ROOT") or Path(__file__).resolve().parents[2])

MENU = r"What now.*\? \[r/a/s/p/K/d\] "


def _prompt(lo, name, **env_extra):
    """`layover on-exit prompt NAME`, as run starts it, in a pty."""
    env = dict(lo.env, PAGER="cat", TERM="dumb")
    env.update(env_extra)
    return pexpect.spawn(LAYOVER, ["on-exit", "prompt", name], env=env, cwd=str(lo.target), timeout=30)


def _finish(child):
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def test_question_mark_at_the_menu_says_what_each_letter_does(lo, home):
    # Before: '?', 'help' and a word the menu names a choice by ('diff') all got
    # "layover: unknown choice '?'", which did not say what the choices were.
    lo.run("echo four >> notes.txt", session="s", check=True)
    child = _prompt(lo, "s")
    child.expect(MENU)
    child.sendline("?")
    child.expect(r"  r  review: the diff of the changes")
    child.expect(r"  d  discard: asks, then moves the session to the trash")
    child.expect(MENU)
    child.sendline("help")
    child.expect(r"  k  keep \(also Enter, Ctrl\+C, Ctrl\+D\)")
    child.expect(MENU)
    child.sendline("x")
    child.expect_exact("layover: unknown choice 'x'; answer r, a, s, p, k or d (? says what each does)")
    child.expect(MENU)
    child.sendline("diff")  # the word the menu names [r] by
    child.expect(r"\+four")
    child.expect(MENU)
    child.sendline("keep")
    child.expect("kept")
    assert _finish(child) == 0
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\n"
    assert (lo.state / "sessions" / "s" / "upper").is_dir()


def test_question_mark_in_pick_shows_the_help_and_changes_no_pick(lo, home):
    # Before: '?' was taken as a glob: it picked just the one-letter names
    # ("Pick (1 of 2 changes picked"), and [a] then applied only f.
    lo.run("echo x > f; echo four >> notes.txt", session="s", check=True)
    child = _prompt(lo, "s")
    child.expect(MENU)
    child.sendline("p")
    child.expect(r"Pick \(2 of 2 changes picked")
    child.sendline("?")
    child.expect(r"  Paths, directories and globs pick what they name")
    child.expect(r"Pick \(2 of 2 changes picked")
    child.sendline("")
    child.expect(MENU)
    child.sendline("a")
    child.expect(r"Apply 2 changes to .*\? \[y/N\] ")
    child.sendline("y")
    child.expect("applied 2 change")
    assert _finish(child) == 0
    assert (home / "f").read_text() == "x\n"
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\nfour\n"


def test_s_warns_of_the_secrets_in_the_patch_as_save_does(lo, home, tmp_path):
    # Before: `layover save` warned "the patch holds 1 secret(s); look before
    # sharing it", the prompt's [s] wrote the same patch without a word.
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    lo.run("echo %s > creds.txt; echo four >> notes.txt" % key, session="s", check=True)
    out = tmp_path / "p.tar.zst"
    child = _prompt(lo, "s")
    child.expect(MENU)
    child.sendline("s")
    child.expect(r"Save patch to \[.*\]: ")
    child.sendline(str(out))
    child.expect_exact("layover: saved %s" % out)
    child.expect_exact("layover: save: warning: the patch holds 1 secret(s); look before sharing it:")
    child.expect_exact("creds.txt:1: AWS access key id (AKIA")
    child.expect(MENU)
    child.sendline("k")
    assert _finish(child) == 0
    assert out.stat().st_size > 0 and not (home / "creds.txt").exists()
    # The file [s] wrote is the one save writes: show lists the same two changes.
    r = lo("show", out)
    assert r.returncode == 0 and b"A  creds.txt" in r.stdout and b"M  notes.txt" in r.stdout, r


def test_a_damaged_patch_is_one_line_naming_it_and_the_fix_and_writes_nothing(lo, home, tmp_path):
    # Before: "invalid patch p.tar.zst: the patch is truncated (...)": what to do was not said.
    lo.run("head -c 200000 /dev/urandom > r.bin; echo four >> notes.txt", session="s", check=True)
    good = tmp_path / "p.tar.zst"
    assert lo("save", "s", "-o", good).returncode == 0
    data = good.read_bytes()
    cut = tmp_path / "cut.tar.zst"
    cut.write_bytes(data[: len(data) // 2])
    bad = tmp_path / "bad.tar.zst"
    bad.write_bytes(data[:100] + bytes(b ^ 0xFF for b in data[100:108]) + data[108:])
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and not p.is_symlink()}
    fix = "; copy it again whole, or ask for a new 'layover save -o FILE'\n"
    for f, why in ((cut, "the patch is truncated (the zstd stream ends mid-frame)"),
                   (bad, "the patch is corrupt (zstd: ")):
        for verb, prefix, code in ((["show"], "", 1), (["diff"], "diff %s: " % f, 2),
                                   (["apply", "--yes", "--target", home], "apply: ", 1)):
            r = lo(verb[0], f, *verb[1:])
            err = r.stderr.decode()
            assert r.returncode == code and r.stdout == b"", (verb, r)
            assert err.startswith("layover: %sinvalid patch %s: %s" % (prefix, f, why)), err
            assert err.endswith(fix) and err.count("\n") == 1, err
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file() and not p.is_symlink()} == before
    assert not (home / "r.bin").exists()
    # The same patch, whole, applies.
    r = lo("apply", good, "--yes", "--target", home)
    assert r.returncode == 0, r.stderr
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\nfour\n"


def test_apply_p_shows_each_changes_risk_marks_as_the_listings_do(lo, home, tmp_path):
    # Before: show, diff and the exit prompt marked `.bashrc` "! shell startup
    # file" and tool.sh "! executable"; `apply -p` (and the prompt's `hunks`)
    # asked about them with no mark at all.
    (home / ".bashrc").write_text("# bashrc\n")
    lo.run("echo 'alias ls=\"rm -rf\"' >> .bashrc; printf '#!/bin/sh\\n' > tool.sh; chmod +x tool.sh",
           session="s", check=True)
    patch = tmp_path / "p.tar.zst"
    assert lo("save", "s", "-o", patch).returncode == 0
    env = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["apply", str(patch), "--target", str(home), "-p"], env=env, cwd=str(home),
                          timeout=30)
    child.expect_exact("diff --git a/.bashrc b/.bashrc  ! shell startup file\r\n")
    child.expect(r"Apply this hunk \[[^\]]*\]\? ")
    child.sendline("n")
    child.expect_exact("A  tool.sh  (added file, 10 B)  ! executable\r\n")
    child.expect(r"Apply this change \[y,n,q,\?\]\? ")
    child.sendline("y")
    child.expect("applied 1 change")
    assert _finish(child) == 0
    assert (home / ".bashrc").read_text() == "# bashrc\n"
    assert (home / "tool.sh").read_text() == "#!/bin/sh\n" and (home / "tool.sh").stat().st_mode & 0o111
    # The exit prompt's `hunks` walks with the summary's marks (home rules: the target is $HOME).
    child = _prompt(lo, "s", HOME=str(home))
    child.expect_exact("M  .bashrc  ! shell startup file")
    child.expect(MENU)
    child.sendline("p")
    child.expect(r"Pick \(")
    child.sendline("hunks")
    child.expect_exact("diff --git a/.bashrc b/.bashrc  ! shell startup file\r\n")
    child.sendintr()
    child.expect("kept")
    assert _finish(child) == 0
    assert (home / ".bashrc").read_text() == "# bashrc\n"


def test_s_to_a_directory_saves_the_default_name_in_it_and_tilde_is_home(lo, home, tmp_path):
    # Before: a directory answered "/tmp exists. Overwrite it? [y/N]", and `~`
    # alone saved a file named "~" in the current directory (the target).
    lo.run("echo four >> notes.txt", session="s", check=True)
    out, myhome = tmp_path / "out", tmp_path / "me"
    out.mkdir()
    myhome.mkdir()
    child = _prompt(lo, "s", HOME=str(myhome))
    for answer in (str(out), "~"):
        child.expect(MENU)
        child.sendline("s")
        child.expect(r"Save patch to \[.*\]: ")
        child.sendline(answer)
        child.expect(r"layover: saved (\S+);")
        assert not child.match.group(1).decode().endswith("/~")
    child.expect(MENU)
    child.sendline("k")
    assert _finish(child) == 0
    for d in (out, myhome):
        saved = list(d.iterdir())
        assert len(saved) == 1 and saved[0].name.startswith("layover-") and saved[0].name.endswith(".tar.zst"), saved
        assert lo("show", saved[0]).returncode == 0
    assert not (home / "~").exists() and not (tmp_path / "~").exists()


def test_apply_names_the_size_it_wrote_for_a_merged_file(lo, home, tmp_path):
    # Before: "M f.txt (merged with changes made since)  [0644, 58 B]": the
    # patch's size, while the file written (the real one's edit kept) held 72.
    (home / "f.txt").write_text("".join("line %d\n" % i for i in range(1, 9)))
    lo.run("sed -i 's/^line 2$/line TWO/' f.txt", session="s", check=True)
    patch = tmp_path / "p.tar.zst"
    assert lo("save", "s", "-o", patch).returncode == 0
    (home / "f.txt").write_text((home / "f.txt").read_text().replace("line 8\n", "line 8 and more here\n"))
    r = lo("apply", patch, "--yes", "--target", home)
    assert r.returncode == 0, r.stderr
    written = (home / "f.txt").read_bytes()
    assert b"line TWO\n" in written and b"line 8 and more here\n" in written
    assert "  M f.txt (merged with changes made since)  [0644, %d B]\n" % len(written) in r.stdout.decode(), r.stdout


def test_a_pager_that_is_not_there_is_named_and_the_diff_still_shown(lo, home):
    # Before: `sh: 1: nonexistent-pager: not found` and no diff at all, at the
    # prompt's [r] as with `layover diff` at a terminal.
    lo.run("echo four >> notes.txt", session="s", check=True)
    env = dict(lo.env, PAGER="nonexistent-pager --flag", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["diff", "s"], env=env, cwd=str(home), timeout=30)
    child.expect_exact("layover: cannot run the pager 'nonexistent-pager' ($PAGER); showing the output unpaged "
                       "(PAGER=cat turns paging off)")
    child.expect_exact("+four")
    assert _finish(child) == 1  # changes, as diff(1)
    child = _prompt(lo, "s", PAGER="/no/such/less")
    child.expect(MENU)
    child.sendline("r")
    child.expect_exact("layover: cannot run the pager '/no/such/less'")
    child.expect_exact("+four")
    child.expect(MENU)
    child.sendline("k")
    assert _finish(child) == 0


def test_apply_p_help_says_s_splits_only_when_the_question_offers_it(lo, home, tmp_path):
    # Before: '?' listed "s - split this hunk into smaller hunks" under a
    # question that offered no s ([y,n,q,a,d,e,?]), and s was refused.
    lo.run("echo four >> notes.txt", session="s", check=True)
    patch = tmp_path / "p.tar.zst"
    assert lo("save", "s", "-o", patch).returncode == 0
    child = pexpect.spawn(LAYOVER, ["apply", str(patch), "--target", str(home), "-p"],
                          env=dict(lo.env, PAGER="cat", TERM="dumb"), cwd=str(home), timeout=30)
    child.expect_exact("Apply this hunk [y,n,q,a,d,e,?]? ")
    child.sendline("?")
    child.expect_exact("s - split this hunk into smaller hunks (when the question lists s)")
    child.expect_exact("Apply this hunk [y,n,q,a,d,e,?]? ")
    child.sendline("q")
    assert _finish(child) == 0
    assert (home / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_the_docs_name_the_prompts_diff_by_its_letter():
    # Before: docs/cli.md said "The exit prompt's `[d]iff` groups the same way";
    # at the prompt d discards (it asks first), r shows the diff.
    doc = (ROOT / "docs" / "cli.md").read_text()
    assert "[d]iff" not in doc
    assert "The exit prompt's `[r]` (review diff) groups the same way." in doc


def test_s_declining_to_overwrite_says_nothing_was_saved(lo, home, tmp_path):
    # Before: answering no to "Overwrite it?" went back to the menu without a
    # word, as if the save had happened.
    lo.run("echo four >> notes.txt", session="s", check=True)
    there = tmp_path / "there.tar.zst"
    there.write_bytes(b"mine\n")
    child = _prompt(lo, "s")
    child.expect(MENU)
    child.sendline("s")
    child.expect(r"Save patch to \[.*\]: ")
    child.sendline(str(there))
    child.expect_exact("exists. Overwrite it? [y/N] ")
    child.sendline("")
    child.expect_exact("layover: not saved; %s is as it was ([s] asks for another file)" % there)
    child.expect(MENU)
    child.sendline("k")
    assert _finish(child) == 0
    assert there.read_bytes() == b"mine\n"
