"""Step records in saved patches (docs/history.md "Records in patches"): a
patch carries the session's history in its manifest; `show --steps` and
`log FILE` show it, hostile labels escaped; a one-run session's patch is
unchanged."""
import json
import subprocess

from capture_util import manifest_of


def run_ok(lo, cmd, session, *extra):
    r = lo.run(cmd, *extra, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def members(patch):
    r = subprocess.run(["tar", "--zstd", "-tf", str(patch)], capture_output=True)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout.decode().split()


def test_patch_carries_the_step_records(lo, tmp_path):
    run_ok(lo, "echo a > a.txt; echo changed > notes.txt", "rec")
    run_ok(lo, "rm docs/readme.txt", "rec", "--label", "evil \x1b]0;pwned\x07 \x1b[2J")
    run_ok(lo, "echo b > b.txt; chmod 600 a.txt", "rec")
    out = tmp_path / "p.tar.zst"
    r = lo("save", "rec", "-o", out, "--no-originals")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    m = manifest_of(out)
    # Readable by the reader that came before: same format, no new member
    # (the records are a manifest field, which that reader skips).
    assert m["format"] == "layover-patch/1"
    assert members(out) == [".layover/manifest.json", "a.txt", "b.txt", "docs/.wh.readme.txt", "notes.txt",
                            ".layover/sums"]
    st = m["steps"]
    assert [(s["step"], s.get("live", False)) for s in st] == [(1, False), (2, False), (3, True)]
    assert sorted((p["path"], p["kind"]) for p in st[0]["paths"]) == [("a.txt", "A"), ("notes.txt", "M")]
    assert st[1]["paths"] == [{"path": "docs/readme.txt", "kind": "D"}]
    assert st[1]["label"] == "evil \x1b]0;pwned\x07 \x1b[2J"
    assert sorted((p["path"], p["kind"]) for p in st[2]["paths"]) == [("a.txt", "mode"), ("b.txt", "A")]
    assert all(s["end"] for s in st[:2]) and st[2]["start"]
    # show --steps and log FILE: the same history, newest first, escaped.
    shown = lo("show", out, "--steps")
    logged = lo("log", out)
    assert shown.returncode == 0 and logged.returncode == 0, shown.stderr + logged.stderr
    assert shown.stdout == logged.stdout
    lines = shown.stdout.decode().splitlines()
    assert lines[0].endswith("(session 'rec'): 2 steps and live changes")
    assert lines[1].lstrip().startswith("(live)") and "+1 ~1 -0" in lines[1]
    assert lines[2].lstrip().startswith("2 ") and "+0 ~0 -1" in lines[2]
    assert b"\x1b" not in shown.stdout and b"\x07" not in shown.stdout
    assert "evil \\x1b]0;pwned\\x07" in lines[2]
    j = json.loads(lo("log", out, "--json").stdout)
    assert [s["step"] for s in j["steps"]] == [None, 2, 1]
    assert j["steps"][1]["label"] == "evil \x1b]0;pwned\x07 \x1b[2J"
    # A partial save carries the paths it holds only.
    part = tmp_path / "part.tar.zst"
    assert lo("save", "rec", "-o", part, "--", "b.txt").returncode == 0
    paths = [p["path"] for s in manifest_of(part)["steps"] for p in s["paths"]]
    assert paths == ["b.txt"]


def test_one_run_patch_has_no_records(lo, tmp_path):
    run_ok(lo, "echo a > a.txt", "one")
    out = tmp_path / "p.tar.zst"
    assert lo("save", "one", "-o", out).returncode == 0
    assert "steps" not in manifest_of(out)
    r = lo("log", out)
    assert r.returncode == 0
    assert b"no step records" in r.stdout


def test_diff_groups_by_step_and_git_apply_takes_it(lo):
    run_ok(lo, "echo a > a.txt", "g")
    run_ok(lo, "echo changed >> notes.txt", "g", "--label", "edit notes \x1b[2J")
    run_ok(lo, "echo b > b.txt; echo a2 >> a.txt", "g")
    r = lo("diff", "g")
    assert r.returncode == 1, r.stderr
    out = r.stdout.decode()
    headers = [l for l in out.splitlines() if l.startswith("# ")]
    assert headers == ["# step 2: \"edit notes \\x1b[2J\"", "# live changes (not yet a step): /bin/sh -c echo b > b.txt; "
                       "echo a2 >> a.txt"]
    # Each file under the last step that touched it, oldest step first.
    assert out.index(headers[0]) < out.index("+++ b/notes.txt") < out.index(headers[1]) < out.index("+++ b/a.txt")
    assert out.index("+++ b/a.txt") < out.index("+++ b/b.txt")
    # git apply ignores the header lines.
    git = subprocess.run(["git", "apply", "--check", "-v", "-"], input=r.stdout, cwd=str(lo.target),
                         capture_output=True)
    assert git.returncode == 0, git.stderr.decode()
    assert git.stderr.decode().count("Checking patch") == 3
    # --flat: one lump, the same diff without the headers, in path order.
    flat = lo("diff", "g", "--flat").stdout.decode()
    assert "# " not in flat
    assert sorted(flat.splitlines()) == sorted(l for l in out.splitlines() if not l.startswith("# "))
    assert flat.index("+++ b/a.txt") < flat.index("+++ b/b.txt") < flat.index("+++ b/notes.txt")
    # The patch apply builds carries the records too; apply never reads them.
    r = lo("apply", "g", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert (lo.target / "a.txt").read_bytes() == b"a\na2\n" and (lo.target / "b.txt").read_bytes() == b"b\n"
    assert (lo.target / "notes.txt").read_bytes().endswith(b"three\nchanged\n")


def test_a_step_that_removes_and_remakes_a_dir_records_only_what_differs(lo):
    # The record compares the remade dir with the view below it, as capture
    # does: no T for old/, no A for each file copied back.
    run_ok(lo, "cp -a old .k && rm -rf old && cp -a .k old && rm -rf .k && echo c > old/c.txt && rm old/a.txt",
           "remade")
    run_ok(lo, "true", "remade")  # freezes the first run as step 1
    r = lo("log", "remade", "--json")
    assert r.returncode == 0, r.stderr
    steps = json.loads(r.stdout)["steps"]
    assert sorted((p["path"], p["kind"]) for p in steps[-1]["paths"]) == [("old/a.txt", "D"), ("old/c.txt", "A")]
    r = lo("blame", "remade", "old/sub/b.txt")
    assert r.returncode == 1 and b"no step of session 'remade' touched old/sub/b.txt" in r.stderr, r.stderr


def test_a_step_that_sets_the_agents_own_overlay_named_xattr_records_it_and_revert_takes_it_back(lo):
    # The agent's own user.overlay.mine is stored escaped in the layer
    # (user.overlay.overlay.mine): it is a "mode" change of the step like any
    # user xattr (it was left out with overlayfs's markers), so its revert
    # takes it back.
    run_ok(lo, "setfattr -n user.overlay.mine -v x docs/readme.txt && setfattr -n user.plain -v y notes.txt", "xa")
    run_ok(lo, "echo c > c.txt", "xa")
    steps = json.loads(lo("log", "xa", "--json", check=True).stdout)["steps"]
    step1 = [s for s in steps if s["step"] == 1][0]
    assert sorted((p["path"], p["kind"]) for p in step1["paths"]) == [("docs/readme.txt", "mode"), ("notes.txt", "mode")]
    r = lo("revert", "xa", "1")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    st = [c["path"] for c in json.loads(lo("status", "xa", "--json", check=True).stdout)]
    assert st == ["c.txt"], st
