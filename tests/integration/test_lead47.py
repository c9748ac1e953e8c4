"""The lead's own finds of 28 Nov (stop 47)."""
import subprocess

from conftest import real_dir


def test_a_file_the_command_writes_at_once_outside_the_target_is_never_an_earlier_runs(lo):
    # The exit line's "(N of them from earlier runs)" compared each file's
    # ctime with CLOCK_REALTIME at the run's start; a ctime comes from the
    # kernel's coarse clock, up to a tick behind, so a file written in the
    # run's first tick read as an earlier run's (test_newcomer8 failed so
    # under a loaded `make test`: "(from earlier runs)" for all 3 files).
    home = real_dir("lead47-home-")
    (home / "project").mkdir()
    lo.env["HOME"] = str(home)
    lo.target = home / "project"
    try:
        wrong = []
        for i in range(40):
            r = lo.run("echo %d > ~/.lead47_%02d" % (i, i), session="e")
            assert r.returncode == 0, r.stderr
            line = [x for x in r.stderr.split(b"\n") if b"outside the target (not applied): " in x]
            assert len(line) == 1, r.stderr
            ok = (b"earlier" not in line[0] if i == 0 else
                  line[0].endswith(b"files: %s (%d of them from earlier runs)" % (
                      b", ".join(b"~/.lead47_%02d" % k for k in range(min(i + 1, 3))) + (b", \xe2\x80\xa6" if i > 2 else b""), i)))
            if not ok:
                wrong.append((i, line[0]))
        assert wrong == [], "%d of 40 runs wrong: %r" % (len(wrong), wrong[:4])
    finally:
        subprocess.run(["rm", "-rf", str(home)])
