"""save/show on real sandbox sessions: a patch written atomically 0600 and
its errors one line naming the directory and the fix, a truncated patch, show
--contents in bounded memory and to a full stdout, a file cut short while
saved, a listing to a full disk.  The scenarios' status --json kinds and
patch members: test_capture_status.py."""
import os
import subprocess
import threading
import time

import pytest

from conftest import LAYOVER
from capture_util import discard_sessions, run_ok, save  # noqa: F401 (fixture)


def test_save_is_atomic_0600_and_errors_are_one_line(lo, tmp_path):
    run_ok(lo, "echo a > a")
    out = tmp_path / "p.tar.zst"
    save(lo, "s", out)
    assert (os.stat(out).st_mode & 0o777) == 0o600
    r = lo("save", "s", "-o", tmp_path / "no" / "such" / "dir.tar.zst")
    assert r.returncode == 1
    err = r.stderr.decode()
    assert err.startswith("layover: ") and err.count("\n") == 1
    r = lo("save", "nosuch", "-o", tmp_path / "q.tar.zst")
    assert r.returncode == 1 and not (tmp_path / "q.tar.zst").exists()
    assert lo("save", "s").returncode == 2
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_save_to_a_name_of_another_format_says_what_the_file_is(lo, tmp_path):
    # Before, `-o x.patch` wrote layover's tar.zst silently; `git apply x.patch` then failed.
    run_ok(lo, "echo a > a")
    # The command it names is the one to run (it named placeholders: 'layover diff SESSION > FILE.patch').
    patch = str(tmp_path / "x.patch").encode()
    for name, said in (("x.patch", b"not a text diff; 'layover diff s > " + patch + b"' writes one\n"),
                       ("x.DIFF", b"not a text diff"), ("x.zip", b"is a zstd-compressed tar whatever its name"),
                       ("x.tar.gz", b"whatever its name")):
        r = lo("save", "s", "-o", tmp_path / name)
        assert r.returncode == 0 and said in r.stderr, r.stderr
        assert (tmp_path / name).read_bytes()[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame all the same
    for name in ("y.tar.zst", "y.zst", "y"):
        r = lo("save", "s", "-o", tmp_path / name)
        assert r.returncode == 0 and b"note:" not in r.stderr, r.stderr


def test_save_errors_name_the_directory_and_the_fix(lo, tmp_path):
    # Not the temporary file beside the patch: the directory, and what to do.
    run_ok(lo, "echo a > a")
    missing = tmp_path / "no" / "such"
    r = lo("save", "s", "-o", missing / "p.tar.zst")
    assert r.returncode == 1
    assert r.stderr.decode() == "layover: cannot create %s/p.tar.zst: directory %s does not exist; " \
        "create it or pick another path\n" % (missing, missing)
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    r = lo("save", "s", "-o", ro / "p.tar.zst")
    assert r.returncode == 1 and ".tmp-" not in r.stderr.decode()
    assert "directory %s is not writable (Permission denied); pick a path" % ro in r.stderr.decode()
    r = lo("save", "s", "-o", tmp_path)  # a directory: refused before any work
    assert r.returncode == 1
    assert r.stderr.decode() == "layover: %s is a directory; name a file, e.g. -o %s/patch.tar.zst\n" % (
        tmp_path, tmp_path)
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name or p.suffix == ".zst"] == []
    assert list(ro.iterdir()) == []


def test_show_rejects_a_truncated_patch_with_one_line(lo, tmp_path):
    run_ok(lo, "head -c 300000 /dev/urandom > r.bin")
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    data = patch.read_bytes()
    bad = tmp_path / "bad.tar.zst"
    bad.write_bytes(data[: len(data) // 2])
    r = lo("show", bad)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "truncated" in err and err.count("\n") == 1 and str(bad) in err


def test_show_contents_streams_a_big_file_in_bounded_memory(lo, tmp_path):
    # Python's changed_files() reads `show --contents`; the helper writes each
    # file's base64 as the reader hands out its bytes, so a 96 MiB file is not
    # held whole (it was: its bytes and their base64, ~224 MiB).
    from test_security_audit import _max_rss_kib
    size = 96 << 20
    run_ok(lo, "yes 0123456789abcdef | head -c %d > big.bin && echo small > small.txt" % size)
    code, rss = _max_rss_kib([LAYOVER, "show", "s", "--contents"], lo.env)
    assert code == 0
    budget = (1024 if os.environ.get("LAYOVER_SANITIZED") else 64) * 1024
    assert rss < budget, "show --contents used %d MiB for a %d MiB file" % (rss // 1024, size >> 20)
    out = tmp_path / "contents.json"
    with open(str(out), "wb") as f:
        assert subprocess.run([LAYOVER, "show", "s", "--contents"], env=lo.env, stdout=f).returncode == 0
    import base64
    import json
    files = {base64.b64decode(e["path_b64"]): e["data_b64"] for e in json.loads(out.read_bytes())["files"]}
    big = base64.b64decode(files.pop(b"big.bin"))
    assert len(big) == size and big == (b"0123456789abcdef\n" * (size // 17 + 1))[:size]
    assert {p: base64.b64decode(d) for p, d in files.items()} == {b"small.txt": b"small\n"}


def test_show_contents_fails_when_stdout_is_full(lo):
    # The JSON's tail sits in stdio's buffer until exit: a full disk (here
    # /dev/full) fails only when it is flushed, and a cut-off JSON must not
    # end with exit 0.
    run_ok(lo, "printf x > small.txt")
    with open("/dev/full", "wb") as full:
        r = subprocess.run([LAYOVER, "show", "s", "--contents"], env=lo.env, stdout=full, stderr=subprocess.PIPE)
    assert r.returncode != 0
    assert r.stderr == b"layover: show --contents: writing the contents to stdout failed (a closed pipe?)\n"


def test_save_of_a_running_session_names_a_file_cut_short(lo, tmp_path):
    # A running session rewrites its files while save reads them: a file
    # truncated mid-read failed the save with a bare "file shrank while being
    # read" (no path, no advice); it is said as any other change is.
    script = "for i in $(seq 2000); do head -c 3000000 /dev/zero > big0; head -c 3000000 /dev/zero > big1; done"
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), "--on-exit", "keep", "--session", "live", "--",
                          "/bin/sh", "-c", script], env=lo.env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not (lo.upper("live") / "big1").exists() and time.time() < deadline:
            time.sleep(0.1)
        failures = []
        for i in range(40):
            r = lo("save", "live", "-o", str(tmp_path / "p.tar.zst"))
            if r.returncode != 0:
                failures.append(r.stderr.decode(errors="replace"))
            if len(failures) >= 10:
                break
        assert failures, "no save met a change"
        for f in failures:
            assert "changed while the patch was being written" in f, f
    finally:
        p.terminate()  # layover run passes it on to the command
        p.wait(timeout=60)


def test_save_names_a_real_file_cut_short_meanwhile(lo, tmp_path):
    # The real (lower) file is read for its base while save runs; something
    # outside the sandbox truncating it mid-read failed the save with a bare
    # "file shrank while being read": now the path and "try again".
    size = 8 << 20
    (lo.target / "big").write_bytes(b"a" * size)
    run_ok(lo, "printf more >> big")
    stop = [False]

    def rewrite():
        with open(lo.target / "big", "r+b") as f:
            while not stop[0]:
                f.truncate(0)
                f.write(b"b" * size)
                f.flush()
                f.seek(0)

    t = threading.Thread(target=rewrite)
    t.start()
    failures = []
    try:
        for i in range(60):
            r = lo("save", "s", "-o", str(tmp_path / "p.tar.zst"))
            if r.returncode != 0:
                failures.append(r.stderr.decode(errors="replace"))
            if len(failures) >= 5:
                break
    finally:
        stop[0] = True
        t.join()
    assert failures, "no save met a change"
    for f in failures:
        assert len(f.splitlines()) == 1, f
        assert "big" in f and "try again" in f, f


def test_show_contents_of_a_linked_sparse_file_in_bounded_memory(lo, tmp_path):
    # A hard link repeats its file's bytes: they were kept whole in memory for
    # it, and a session's sparse file (a few bytes in the patch) with a link
    # to it made `show --contents` allocate its whole size (1 TiB: aborted, or
    # the OOM killer). Its bytes are read again for the link, as they come.
    size = 600 << 20  # a multiple of 3
    run_ok(lo, "truncate -s %d big && printf end >> big && ln big linked" % size)
    patch = save(lo, "s", tmp_path / "p.tar.zst")
    # (ASan maps terabytes of shadow: no address-space limit then.)
    limit = [] if os.environ.get("LAYOVER_SANITIZED") else ["prlimit", "--as=%d" % (400 << 20)]
    show = subprocess.Popen(limit + [LAYOVER, "show", str(patch), "--contents"], env=lo.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tail = b""
    for block in iter(lambda: show.stdout.read(1 << 20), b""):
        tail = (tail + block)[-200:]
    err = show.stderr.read()
    assert show.wait() == 0, err.decode(errors="replace")
    # The link comes last: its bytes end as the file's do (the size a multiple of 3).
    assert tail.endswith(b"A" * 100 + b'ZW5k"}]}\n'), tail


@pytest.mark.parametrize("args", [["status", "s", "--json"], ["status", "s"], ["diff", "s"], ["sessions", "--json"]],
                         ids=lambda a: " ".join(a))
def test_a_listing_to_a_full_disk_is_an_error_not_exit_0(lo, args):
    # Each verb's output to a file that refused part of it (a full disk; here
    # /dev/full) ended with exit 0 and a cut-off listing (found by the attack
    # pass of 27 Nov); one line naming the fix now, exit 1.
    run_ok(lo, "printf x > small.txt")
    with open("/dev/full", "wb") as full:
        r = subprocess.run([LAYOVER] + args + ["--no-pager"] * (args[0] != "sessions"), env=lo.env, stdout=full,
                           stderr=subprocess.PIPE)
    err = r.stderr.decode()
    assert r.returncode == (2 if args[0] == "diff" else 1) and len(err.splitlines()) == 1, err  # diff: as diff(1)
    assert err.startswith("layover") and args[0] in err, err
    assert "its output was not all written" in err or "No space left on device" in err, err  # diff says its write
    # A reader that goes away (`| head`) is not one.
    p = subprocess.Popen([LAYOVER] + args + ["--no-pager"] * (args[0] != "sessions"), env=lo.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    assert b"not all written" not in p.stderr.read()
    p.wait()
