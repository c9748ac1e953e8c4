"""After a checkpoint of a running session (docs/history.md, "The freeze
rule"), the next overlay carries the same covers and is as locked as the
first: hidden secrets stay hidden, and umount, remount and move from inside
fail, even without the seccomp filter and from a nested namespace."""
import subprocess
import time

import pytest

from conftest import LAYOVER, real_dir

READ = ("cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/.config/gh/hosts.yml 2>/dev/null;"
        "for d in ~/.ssh ~/.aws ~/.config/gh; do ls -A $d; done")


def wait_for(path):
    for _ in range(500):
        if path.exists():
            return
        time.sleep(0.02)
    raise AssertionError("no " + str(path))


def test_the_next_overlay_hides_the_secrets_and_is_locked(sh):
    h = sh.home
    sig = real_dir("sig-")
    tries = ("umount {h} && echo UMOUNT-OK; umount -l {h} && echo LAZY-OK; "
             "mount -o remount,rw {h} && echo REMOUNT-OK; mount --move {h} /tmp && echo MOVE-OK; "
             "umount {h}/.ssh && echo UNHIDE-OK; test -e {h}/project/main.py && echo STILL-THERE").format(h=h)
    script = ("cd /; echo a > {h}/project/a.txt; while [ ! -e {s}/go ]; do sleep 0.02; done; "
              "(cd {h}/project && echo s*.txt) > {s}/view.txt; ({read}) > {s}/read.txt 2>&1; ({tries}) > {s}/tries.txt 2>&1; "
              "unshare -rm sh -c 'echo NESTED; {tries}' >> {s}/tries.txt 2>&1; "
              "echo after > {h}/project/after.txt; touch {s}/done; exec sleep 30").format(
                  h=h, s=sig, read=READ, tries=tries)
    env = dict(sh.lo.env, LAYOVER_TEST_NO_SECCOMP="1")
    p = subprocess.Popen([LAYOVER, "run", "--target", str(h), "--session", "ck", "--on-exit", "keep",
                          "--rw", str(sig), "--", "/bin/sh", "-c", script],
                         env=env, cwd=str(h), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    d = sh.lo.session_dir("ck")
    before = sh.secrets()
    try:
        wait_for(d / "upper" / "project" / "a.txt")
        r = sh.lo("checkpoint", "ck")
        assert r.returncode == 0 and r.stdout == b"session 'ck': step 1\n", r.stderr
        (sig / "go").touch()
        wait_for(sig / "done")
        out = (sig / "read.txt").read_bytes()
        for w in (b"SSH-PRIVATE-KEY", b"AWS-CREDENTIALS", b"NETRC-PASSWORD", b"GH-TOKEN"):
            assert w not in out
        assert out.strip() == b"", out
        ok = [l for l in (sig / "tries.txt").read_text().splitlines() if l.endswith("-OK")]
        assert ok == [], (sig / "tries.txt").read_text()
        assert (sig / "tries.txt").read_text().count("STILL-THERE") == 2
        # The write after the checkpoint landed in the new upper, not the real tree.
        assert (d / "upper" / "project" / "after.txt").read_text() == "after\n"
        assert (d / "steps" / "0001" / "project" / "a.txt").read_text() == "a\n"
        assert not (h / "project" / "after.txt").exists() and not (h / "project" / "a.txt").exists()
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert sh.secrets() == before


# Every other request that mounts a new overlay over a running session
# (docs/history.md, "A running session"): the new view must carry the same
# covers and locks as a checkpoint's.
# Each with the step files the command sees after it (the new view is mounted).
LIVE_OPS = {
    "rollback": ([("checkpoint", "ck"), ("rollback", "ck", "0")], ""),
    "rollback-undo": ([("checkpoint", "ck"), ("rollback", "ck", "0"), ("rollback", "ck", "--undo")], "s0.txt"),
    "revert": ([("checkpoint", "ck"), ("revert", "ck", "1")], ""),
    "fork": ([("fork", "ck", "ck2")], "s0.txt"),
    "squash": ([("checkpoint", "ck"), ("checkpoint", "ck"), ("checkpoint", "ck")], "s0.txt s1.txt s2.txt"),
}


@pytest.mark.parametrize("op", sorted(LIVE_OPS))
def test_every_live_remount_hides_the_secrets_and_is_locked(sh, op):
    h = sh.home
    sig = real_dir("sig-")
    tries = ("umount {h} && echo UMOUNT-OK; umount -l {h} && echo LAZY-OK; "
             "mount -o remount,rw {h} && echo REMOUNT-OK; mount --move {h} /tmp && echo MOVE-OK; "
             "umount {h}/.ssh && echo UNHIDE-OK; test -e {h}/project/main.py && echo STILL-THERE").format(h=h)
    # Each step's write waits for the host's go: a checkpoint of an
    # unchanged session makes no step.
    script = ("cd /; n=0; while [ ! -e {s}/go ]; do if [ -e {s}/next$n ]; then echo $n > {h}/project/s$n.txt; "
              "touch {s}/wrote$n; n=$((n+1)); fi; sleep 0.02; done; "
              "(cd {h}/project && echo s*.txt) > {s}/view.txt; ({read}) > {s}/read.txt 2>&1; ({tries}) > {s}/tries.txt 2>&1; "
              "unshare -rm sh -c 'echo NESTED; {tries}' >> {s}/tries.txt 2>&1; "
              "echo after > {h}/project/after.txt; touch {s}/done; exec sleep 30").format(
                  h=h, s=sig, read=READ, tries=tries)
    env = dict(sh.lo.env, LAYOVER_TEST_NO_SECCOMP="1")
    p = subprocess.Popen([LAYOVER, "run", "--target", str(h), "--session", "ck", "--on-exit", "keep",
                          "--max-steps", "2", "--rw", str(sig), "--", "/bin/sh", "-c", script],
                         env=env, cwd=str(h), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    before = sh.secrets()
    try:
        n = 0
        requests, view = LIVE_OPS[op]
        for req in requests:
            if req[0] in ("checkpoint", "fork"):
                (sig / ("next%d" % n)).touch()
                wait_for(sig / ("wrote%d" % n))
                n += 1
            r = sh.lo(*req)
            assert r.returncode == 0, (req, r.stdout, r.stderr)
        (sig / "go").touch()
        wait_for(sig / "done")
        assert (sig / "view.txt").read_text().strip() == (view or "s*.txt")
        out = (sig / "read.txt").read_bytes()
        assert out.strip() == b"", out
        ok = [l for l in (sig / "tries.txt").read_text().splitlines() if l.endswith("-OK")]
        assert ok == [], (sig / "tries.txt").read_text()
        assert (sig / "tries.txt").read_text().count("STILL-THERE") == 2
        assert (sh.lo.session_dir("ck") / "upper" / "project" / "after.txt").read_text() == "after\n"
        assert not (h / "project" / "after.txt").exists() and not (h / "project" / "s0.txt").exists()
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert sh.secrets() == before
