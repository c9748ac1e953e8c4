"""status/save/show on real sandbox sessions: every scenario checks the
`status --json` kinds, the saved patch's members (GNU tar and bsdtar) and the
reader's view (`show --json`)."""
import os
import subprocess
import time

import pytest

from conftest import LAYOVER, missing_feature
from capture_util import (by_path, discard_sessions, manifest_of, run_ok, save, show_json,  # noqa: F401 (fixture)
                          status_json, tar_members)


def test_create_modify_delete_rename_files_and_dirs(lo, tmp_path, home):
    run_ok(lo, "echo new > new.txt && echo more >> notes.txt && rm docs/readme.txt && "
               "mv old/a.txt moved.txt && mkdir -p fresh/sub && echo z > fresh/sub/z.txt")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"new.txt"]["kind"] == "added" and ch[b"new.txt"]["type"] == "file"
    assert ch[b"new.txt"]["size"] == 4
    assert ch[b"notes.txt"]["kind"] == "modified"
    assert ch[b"docs/readme.txt"]["kind"] == "deleted" and ch[b"docs/readme.txt"]["old_type"] == "file"
    assert ch[b"old/a.txt"]["kind"] == "deleted"
    assert ch[b"moved.txt"]["kind"] == "added"
    assert ch[b"fresh"]["kind"] == "added" and ch[b"fresh"]["type"] == "dir"
    assert ch[b"fresh/sub/z.txt"]["kind"] == "added"
    # Directories whose only change is their mtime (docs/, old/) are not listed.
    assert b"docs" not in ch and b"old" not in ch
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    verbose, names = tar_members(patch)
    assert names[0] == ".layover/manifest.json" and names[-1] == ".layover/sums"
    for n in ["new.txt", "notes.txt", "docs/.wh.readme.txt", "old/.wh.a.txt", "moved.txt", "fresh/", "fresh/sub/z.txt"]:
        assert n in names, n
    assert not any(n.startswith("./") for n in names)
    assert set(by_path(show_json(lo, patch))) == set(ch)
    # The real tree is untouched.
    assert (home / "docs" / "readme.txt").read_text() == "hello\nworld\n"


def test_rm_rf_and_recreate_is_compared_with_the_real_dir(lo, tmp_path, home):
    # The remade dir is opaque in the upper layer, but compared with the real
    # old/ entry by entry: what it lacks is deleted, the rest added or kept.
    run_ok(lo, "rm -rf old && mkdir old && echo c > old/c.txt && echo a > old/a.txt")
    ch = by_path(status_json(lo, "s"))
    assert {p: c["kind"] for p, c in ch.items()} == {b"old/c.txt": "added", b"old/sub": "deleted"}
    assert ch[b"old/sub"]["old_type"] == "dir"
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    _, names = tar_members(patch)
    assert "old/.wh.sub" in names and "old/c.txt" in names
    assert not any(n.endswith(".wh..wh..opq") for n in names) and "old/a.txt" not in names
    base = {b["path"]: b for b in manifest_of(patch)["base"]}
    # The deleted real subtree is in base, so an edit deep inside is noticed.
    assert base["old/sub/b.txt"]["type"] == "file" and len(base["old/sub/b.txt"]["fingerprint"]) == 32
    assert "old/a.txt" not in base
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert sorted(os.listdir(str(home / "old"))) == ["a.txt", "c.txt"]
    assert (home / "old" / "a.txt").read_text() == "a\n" and (home / "old" / "c.txt").read_text() == "c\n"


def test_rm_rf_and_an_identical_recreate_is_no_change(lo):
    # rm -rf node_modules && npm install, when nothing changed: no lump.
    run_ok(lo, "cp -a old .keep && rm -rf old && cp -a .keep old && rm -rf .keep")
    assert status_json(lo, "s") == []
    r = lo("status", "s")
    assert r.returncode == 0 and b"old" not in r.stdout


def test_rm_rf_is_a_dir_deletion_with_its_subtree_in_base(lo, tmp_path):
    run_ok(lo, "rm -rf old")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"old"]["kind"] == "deleted" and ch[b"old"]["old_type"] == "dir"
    assert len(ch) == 1
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    _, names = tar_members(patch)
    assert ".wh.old" in names
    base = {b["path"] for b in manifest_of(patch)["base"]}
    assert {"old", "old/a.txt", "old/sub", "old/sub/b.txt"} <= base


def test_chmod_only_is_metadata_on_files_and_dirs(lo, tmp_path):
    run_ok(lo, "chmod 600 notes.txt && chmod 700 docs")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"notes.txt"]["kind"] == "metadata"
    assert ch[b"notes.txt"]["mode"] == 0o600 and ch[b"notes.txt"]["old_mode"] == 0o644
    assert ch[b"docs"]["kind"] == "metadata" and ch[b"docs"]["mode"] == 0o700
    assert len(ch) == 2


def test_copy_up_without_change_and_touch_are_not_changes(lo):
    run_ok(lo, "cat notes.txt >> notes.txt.tmp && rm notes.txt.tmp && touch notes.txt docs/readme.txt && "
               "echo hello > x && rm x && python3 -c 'open(\"notes.txt\",\"r+\").close()'")
    assert status_json(lo, "s") == []
    r = lo("status", "s")
    assert r.stdout.decode().strip() == "no changes"


def test_type_changes_file_dir_symlink(lo, tmp_path):
    run_ok(lo, "rm notes.txt && mkdir notes.txt && rm -r old && ln -s docs old && rm link && echo f > link && "
               "rm docs/readme.txt && ln -s /etc/hostname docs/readme.txt")
    ch = by_path(status_json(lo, "s"))
    assert (ch[b"notes.txt"]["kind"], ch[b"notes.txt"]["old_type"], ch[b"notes.txt"]["type"]) == ("type_changed", "file", "dir")
    assert (ch[b"old"]["kind"], ch[b"old"]["old_type"], ch[b"old"]["type"]) == ("type_changed", "dir", "symlink")
    assert ch[b"old"]["link_target"] == "docs"
    assert (ch[b"link"]["old_type"], ch[b"link"]["type"]) == ("symlink", "file")
    assert (ch[b"docs/readme.txt"]["old_type"], ch[b"docs/readme.txt"]["type"]) == ("file", "symlink")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    verbose, names = tar_members(patch)
    assert "old -> docs" in verbose
    assert "notes.txt/" in names
    assert by_path(show_json(lo, patch))[b"old"]["kind"] == "type_changed"


def test_fifo_is_captured_and_socket_is_reported_not_stored(lo, tmp_path):
    run_ok(lo, "mkfifo pipe && python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"sock\")'")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"pipe"]["type"] == "fifo" and ch[b"pipe"]["captured"] is True
    assert ch[b"sock"]["type"] == "socket" and ch[b"sock"]["kind"] == "added"
    assert ch[b"sock"]["captured"] is False
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    verbose, names = tar_members(patch)
    assert "pipe" in names and "sock" not in names
    assert any(line.startswith("p") and line.endswith(" pipe") for line in verbose.splitlines())
    assert "not captured" in lo("status", "s").stdout.decode()


def test_hardlinks_are_stored_as_hardlinks(lo, tmp_path):
    run_ok(lo, "echo shared > one && ln one two && ln one three")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    verbose, names = tar_members(patch)
    assert "three link to one" in verbose and "two link to one" in verbose
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["tar", "--zstd", "-xf", str(patch), "-C", str(out)], check=True)
    assert os.stat(out / "one").st_ino == os.stat(out / "two").st_ino
    assert (out / "two").read_text() == "shared\n"


def test_odd_names_newline_space_invalid_utf8(lo, tmp_path):
    run_ok(lo, "printf a > \"$(printf 'new\\nline')\" && printf b > 'with space' && "
               "printf c > \"$(printf 'bad\\377name')\" && mkdir \"$(printf 'd\\351')\" && printf d > é.txt")
    changes = status_json(lo, "s")
    ch = by_path(changes)
    assert set(ch) == {b"new\nline", b"with space", b"bad\xffname", b"d\xe9", "é.txt".encode()}
    bad = ch[b"bad\xffname"]
    assert "path_b64" in bad and "\\xff" in bad["path"]
    assert "path_b64" not in ch[b"new\nline"] and "path_b64" not in ch["é.txt".encode()]
    text = lo("status", "s").stdout.decode()
    assert '"new\\nline"' in text and '"bad\\xffname"' in text
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["bsdtar", "-xf", str(patch), "-C", str(out)], check=True)
    assert (out / os.fsdecode(b"bad\xffname")).read_bytes() == b"c"
    assert (out / "new\nline").read_bytes() == b"a"
    assert (out / "é.txt").read_bytes() == b"d"
    assert set(by_path(show_json(lo, patch))) == set(ch)


def test_sparse_1gib_file_is_stored_sparse(lo, tmp_path):
    run_ok(lo, "truncate -s 1G big && printf tail | dd of=big bs=1 seek=1073741820 conv=notrunc 2>/dev/null")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"big"]["size"] == 1 << 30
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    assert os.path.getsize(patch) < 1 << 20
    verbose, _ = tar_members(patch)
    assert "1073741824" in verbose
    r = subprocess.run(["tar", "--zstd", "-xOf", str(patch), "big"], capture_output=True)
    assert r.stdout[-4:] == b"tail" and len(r.stdout) == 1 << 30 and r.stdout.count(b"\0") == (1 << 30) - 4


def test_chmod_000_file_and_dir_still_save(lo, tmp_path):
    run_ok(lo, "echo secret > locked.txt && chmod 000 locked.txt && mkdir vault && echo v > vault/in && "
               "chmod 000 vault && chmod 000 notes.txt")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"locked.txt"]["mode"] == 0 and ch[b"vault"]["mode"] == 0
    assert ch[b"vault/in"]["kind"] == "added"
    assert ch[b"notes.txt"]["kind"] == "metadata"
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    out = subprocess.run(["tar", "--zstd", "-xOf", str(patch), "locked.txt", "vault/in"], capture_output=True)
    assert out.stdout == b"secret\nv\n"


def test_real_file_edited_after_copy_up_is_stale(lo, tmp_path, home):
    run_ok(lo, "echo sandbox >> notes.txt && echo x >> docs/readme.txt")
    time.sleep(0.05)
    (home / "notes.txt").write_text("edited by the user meanwhile\n")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    base = {b["path"]: b for b in manifest_of(patch)["base"]}
    assert base["notes.txt"]["stale"] is True
    assert base["docs/readme.txt"]["stale"] is False
    assert "changed on disk after the sandbox's version" in lo("show", patch).stdout.decode()


def test_status_marks_a_stale_copy_as_show_does(lo, home):
    run_ok(lo, "echo sandbox >> notes.txt && echo x >> docs/readme.txt")
    time.sleep(0.05)
    (home / "notes.txt").write_text("edited by the user meanwhile\n")
    lines = lo("status", "s", check=True).stdout.decode().splitlines()
    assert [ln for ln in lines if "changed on disk after the sandbox's version" in ln] == ["M  notes.txt  (changed on disk after the sandbox's version)"]
    ch = by_path(status_json(lo, "s"))
    assert ch[b"notes.txt"]["stale"] is True and ch[b"docs/readme.txt"]["stale"] is False


def test_user_xattrs_kept_overlay_markers_never_leak(lo, tmp_path):
    r = subprocess.run(["setfattr", "-n", "user.probe", "-v", "1", str(tmp_path)], capture_output=True)
    if r.returncode != 0:
        missing_feature("user.* xattrs on the test filesystem")
    run_ok(lo, "setfattr -n user.color -v blue notes.txt && rm -rf old && mkdir old && "
               "setfattr -n user.overlay.mine -v own docs/readme.txt")
    ch = by_path(status_json(lo, "s"))
    assert ch[b"notes.txt"]["kind"] == "metadata"
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["bsdtar", "--xattrs", "-xf", str(patch), "-C", str(out)], check=True)
    got = subprocess.run(["getfattr", "-d", "-m", "-", "--absolute-names", "-R", str(out)], capture_output=True).stdout.decode()
    assert 'user.color="blue"' in got
    assert 'user.overlay.mine="own"' in got
    assert "user.overlay.opaque" not in got and "overlay.overlay" not in got


def test_status_works_while_the_session_runs(lo):
    args = ["run", "--target", lo.target, "--on-exit", "keep", "--session", "live", "--", "/bin/sh", "-c",
            "echo x > live.txt && sleep 30"]
    p = subprocess.Popen([LAYOVER, *map(str, args)],
                         env=lo.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=str(lo.target))
    try:
        seen = False
        for _ in range(100):
            r = lo("status", "live", "--json")
            if r.returncode == 0 and b"live.txt" in r.stdout:
                seen = True
                break
            time.sleep(0.1)
        assert seen, "status never showed the running session's file"
        listed = lo("sessions", "--json")
        assert b'"running"' in listed.stdout
    finally:
        p.kill()
        p.wait()


def test_deep_and_wide_trees_small_versions(lo, tmp_path):
    run_ok(lo, "d=deep; mkdir -p $d; i=0; while [ $i -lt 300 ]; do d=$d/d; i=$((i+1)); done; mkdir -p $d && "
               "echo bottom > $d/f && mkdir wide && cd wide && i=0; while [ $i -lt 2000 ]; do : > f$i; i=$((i+1)); done")
    ch = status_json(lo, "s")
    assert len(ch) == 1 + 300 + 1 + 1 + 2000  # deep, its 300 dirs, f, wide, files
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    assert len(show_json(lo, patch)) == len(ch)


@pytest.mark.stress
def test_stress_15tb_sparse_file(lo, tmp_path):
    run_ok(lo, "truncate -s 15T huge && printf end | dd of=huge bs=1 seek=$((15*1024*1024*1024*1024-3)) conv=notrunc 2>/dev/null")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    assert os.path.getsize(patch) < 1 << 20
    assert by_path(show_json(lo, patch))[b"huge"]["size"] == 15 << 40


@pytest.mark.stress
def test_stress_15tb_sparse_file_with_60k_segments(lo, tmp_path):
    """A sparse map of 60,000 entries (over 1 MiB of map lines with 14-digit
    offsets) is read with the headers: it must not count as pax header."""
    run_ok(lo, "python3 -c 'import os\nfd = os.open(\"holey\", os.O_WRONLY | os.O_CREAT)\n"
               "os.ftruncate(fd, 15 << 40)\nfor i in range(60000): os.pwrite(fd, b\"x\", (i + 1) * ((15 << 40) // 60001))\n'")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    assert os.path.getsize(patch) < 8 << 20
    assert by_path(show_json(lo, patch))[b"holey"]["size"] == 15 << 40
    listing = subprocess.run(["tar", "--zstd", "-tvf", str(patch)], capture_output=True, check=True).stdout
    assert b"holey" in listing


@pytest.mark.stress
def test_stress_200k_entries(lo, tmp_path):
    run_ok(lo, "mkdir many && cd many && python3 -c 'import os\nfor i in range(200000): open(\"f%d\" % i, \"w\").close()'",)
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    assert len(show_json(lo, patch)) == 200001


@pytest.mark.stress
def test_stress_5000_deep_dirs(lo, tmp_path):
    run_ok(lo, "python3 -c 'import os\nfor i in range(5000):\n    os.mkdir(\"d\"); os.chdir(\"d\")\nopen(\"f\",\"w\").write(\"x\")'")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    assert len(show_json(lo, patch)) == 5001


def test_cached_status_notices_a_rewrite_with_the_same_size_and_mtime(lo, home):
    """Issue 20's verdict cache (SESSION/verdicts): a repeated status of an
    ended session reads no file whose stats are unchanged, yet a file
    rewritten after the first status, with its size and mtime put back, is
    still seen: its contents against the real file, and its secrets."""
    token = "glpat-" + "aB3dE5gH7jK9mN1pQ2sT4"  # built here: no token-shaped literal in the source
    plain = "x" * (len(token) + 2) + "\n"
    run_ok(lo, "printf 'HELLO\\nworld\\n' > docs/readme.txt && touch old/a.txt && printf '%s' '" + plain +
           "' > plain.txt")
    time.sleep(2.2)  # past the racy window: only files whose ctime is 2 s older than the scan are cached
    first = by_path(status_json(lo, "s"))
    assert first[b"docs/readme.txt"]["kind"] == "modified"  # same size as the real file: contents compared
    assert b"old/a.txt" not in first  # copied up, unchanged
    assert first[b"plain.txt"]["kind"] == "added" and first[b"plain.txt"]["risks"] == []
    cache = lo.session_dir("s") / "verdicts"
    assert cache.stat().st_mode & 0o777 == 0o600
    stored = cache.read_bytes()
    for path in (b"docs/readme.txt", b"old/a.txt", b"plain.txt"):
        assert path in stored, path
    assert by_path(status_json(lo, "s")) == first  # from the cache: the same answer
    up = lo.upper("s")

    def rewrite(rel, data):
        st = os.stat(up / rel)
        assert len(data) == st.st_size
        (up / rel).write_bytes(data)
        os.utime(up / rel, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.stat(up / rel).st_mtime_ns == st.st_mtime_ns

    # The rewrites below stand in for what the key must catch, made by hand in
    # the upper layer, in place: the status snapshot of an ended session
    # trusts that layer (only layover writes it, and bumps the session's
    # generation first: test_status_snapshot.py), so it goes, and the
    # verdict cache is what answers.
    for snap in ("status-snapshot", "status-snapshot-full"):
        (lo.session_dir("s") / snap).unlink(missing_ok=True)
    rewrite("docs/readme.txt", b"hello\nworld\n")  # now what the real file holds
    rewrite("old/a.txt", b"b\n")  # now differs
    rewrite("plain.txt", ("T=" + token + "\n").encode())  # now holds a secret
    again = by_path(status_json(lo, "s"))
    assert b"docs/readme.txt" not in again
    assert again[b"old/a.txt"]["kind"] == "modified"
    assert again[b"plain.txt"]["risks"] == ["secret: GitLab token on line 1 (glpat-…)"]
    assert (home / "docs" / "readme.txt").read_text() == "hello\nworld\n"
    out = lo("status", "s", "--no-pager").stdout.decode()  # the text listing, from the updated cache
    assert "old/a.txt" in out and "docs/readme.txt" not in out and "GitLab token" in out


def test_a_remade_dir_over_a_real_wh_name_still_saves_and_applies(lo, tmp_path, home):
    # A real entry named .wh.* cannot be a whiteout member of its own: the
    # remade dir over it stays a replacement, as before it was compared.
    (home / "old" / ".wh.odd").write_text("odd\n")
    run_ok(lo, "rm -rf old && mkdir old && echo c > old/c.txt")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    _, names = tar_members(patch)
    assert "old/c.txt" in names
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert sorted(os.listdir(str(home / "old"))) == ["c.txt"]
