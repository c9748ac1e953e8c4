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


def escape_script(h, sig, until_go):
    """The command: `until_go` (its own loop, left when SIG/go appears), then
    what it sees of the step files, reads the secrets, tries to unmount,
    remount and move the overlay, directly and nested; one last write."""
    tries = ("umount {h} && echo UMOUNT-OK; umount -l {h} && echo LAZY-OK; "
             "mount -o remount,rw {h} && echo REMOUNT-OK; mount --move {h} /tmp && echo MOVE-OK; "
             "umount {h}/.ssh && echo UNHIDE-OK; test -e {h}/project/main.py && echo STILL-THERE").format(h=h)
    return ("cd /; " + until_go + "; (cd {h}/project && echo s*.txt) > {s}/view.txt; "
            "({read}) > {s}/read.txt 2>&1; ({tries}) > {s}/tries.txt 2>&1; "
            "unshare -rm sh -c 'echo NESTED; {tries}' >> {s}/tries.txt 2>&1; "
            "echo after > {h}/project/after.txt; touch {s}/done; exec sleep 30").format(
                h=h, s=sig, read=READ, tries=tries)


def start(sh, sig, script, *extra):
    env = dict(sh.lo.env, LAYOVER_TEST_NO_SECCOMP="1")
    return subprocess.Popen([LAYOVER, "run", "--target", str(sh.home), "--session", "ck", "--on-exit", "keep",
                             *extra, "--rw", str(sig), "--", "/bin/sh", "-c", script],
                            env=env, cwd=str(sh.home), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def check_escape_failed(sh, sig):
    (sig / "go").touch()
    wait_for(sig / "done")
    out = (sig / "read.txt").read_bytes()
    for w in (b"SSH-PRIVATE-KEY", b"AWS-CREDENTIALS", b"NETRC-PASSWORD", b"GH-TOKEN"):
        assert w not in out
    assert out.strip() == b"", out
    ok = [l for l in (sig / "tries.txt").read_text().splitlines() if l.endswith("-OK")]
    assert ok == [], (sig / "tries.txt").read_text()
    assert (sig / "tries.txt").read_text().count("STILL-THERE") == 2
    # The write after it landed in the new upper, not the real tree.
    assert (sh.lo.session_dir("ck") / "upper" / "project" / "after.txt").read_text() == "after\n"
    assert not (sh.home / "project" / "after.txt").exists()


def test_the_next_overlay_hides_the_secrets_and_is_locked(sh):
    h = sh.home
    sig = real_dir("sig-")
    script = escape_script(h, sig, "echo a > {h}/project/a.txt; while [ ! -e {s}/go ]; do sleep 0.02; done".format(
        h=h, s=sig))
    p = start(sh, sig, script)
    d = sh.lo.session_dir("ck")
    before = sh.secrets()
    try:
        wait_for(d / "upper" / "project" / "a.txt")
        r = sh.lo("checkpoint", "ck")
        assert r.returncode == 0 and r.stdout == b"session 'ck': step 1\n", r.stderr
        check_escape_failed(sh, sig)
        assert (d / "steps" / "0001" / "project" / "a.txt").read_text() == "a\n"
        assert not (h / "project" / "a.txt").exists()
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert sh.secrets() == before


# Every other request that mounts a new overlay over a running session
# (docs/history.md, "A running session"): the new view must carry the same
# covers and locks as a checkpoint's. Each with the step files the command
# sees after it (the new view is mounted).
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
    # Each step's write waits for the host's word: a checkpoint of an
    # unchanged session makes no step.
    script = escape_script(h, sig, "n=0; while [ ! -e {s}/go ]; do if [ -e {s}/next$n ]; then "
                                   "echo $n > {h}/project/s$n.txt; touch {s}/wrote$n; n=$((n+1)); fi; "
                                   "sleep 0.02; done".format(h=h, s=sig))
    p = start(sh, sig, script, "--max-steps", "2")
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
        check_escape_failed(sh, sig)
        assert (sig / "view.txt").read_text().strip() == (view or "s*.txt")
        assert not (h / "project" / "s0.txt").exists()
    finally:
        p.terminate()
        p.communicate(timeout=30)
    assert sh.secrets() == before
