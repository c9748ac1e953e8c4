"""What a new user following README.md and docs/cli.md stumbled on (newuser18),
through the real CLI."""
import os


def _run(lo, target, session, cmd):
    r = lo("run", "--target", target, "--session", session, "--on-exit", "keep", "--", "/bin/sh", "-c", cmd)
    assert r.returncode == 0, r.stderr
    return r


def test_discard_now_of_a_trashed_session_deletes_it_from_the_trash_for_good(lo, home, state_dir):
    # A session discarded to the trash could not be deleted at once: `discard --now NAME` said "it is in the
    # trash ... 'layover restore NAME' brings it back", so freeing its space took a restore and a second discard.
    _run(lo, home, "big", "echo 1 > one.txt")
    assert lo("discard", "big").returncode == 0
    assert os.path.isdir(state_dir / "trash" / "big")
    r = lo("discard", "big", "--now")
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"layover: deleted 'big' from the trash, for good\n", r.stderr
    assert not os.path.exists(state_dir / "trash" / "big")
    assert not os.path.exists(state_dir / "sessions" / "big")
    assert lo("sessions", "--trash").stdout == b"the trash is empty\n"
    assert not (home / "one.txt").exists()  # the real tree never saw it
    # A second entry of the same name (NAME.1) is deleted by its trash entry's name, as restore takes it.
    _run(lo, home, "big", "echo 2 > two.txt")
    assert lo("discard", "big").returncode == 0
    _run(lo, home, "big", "echo 3 > three.txt")
    assert lo("discard", "big").returncode == 0
    assert sorted(os.listdir(state_dir / "trash")) == ["big", "big.1"]
    assert lo("discard", "big.1", "--now").returncode == 0
    assert os.listdir(state_dir / "trash") == ["big"]
    # Without --now, a trashed name is still refused, and the message names both ways out.
    r = lo("discard", "big")
    assert r.returncode == 1
    assert (b"no session named 'big': it is in the trash (discarded); 'layover restore big' brings it back"
            in r.stderr), r.stderr
    assert os.listdir(state_dir / "trash") == ["big"]


def test_discard_now_of_a_live_session_still_wins_over_a_trashed_one_of_that_name(lo, home, state_dir):
    _run(lo, home, "twice", "echo 1 > one.txt")
    assert lo("discard", "twice").returncode == 0
    _run(lo, home, "twice", "echo 2 > two.txt")
    r = lo("discard", "twice", "--now")
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"layover: discarded session 'twice'\n", r.stderr
    assert not os.path.exists(state_dir / "sessions" / "twice")
    assert os.path.isdir(state_dir / "trash" / "twice")  # the trashed one is left alone


def test_gc_trash_empties_the_whole_trash_at_once_and_leaves_kept_sessions(lo, home, state_dir):
    # No verb emptied the trash at once: gc took only entries older than 24h, --older-than does not reach it.
    _run(lo, home, "t1", "echo 1 > one.txt")
    _run(lo, home, "t2", "echo 2 > two.txt")
    _run(lo, home, "keep", "echo 3 > three.txt")
    assert lo("discard", "t1").returncode == 0
    assert lo("discard", "t2").returncode == 0
    r = lo("gc", "--trash", "--dry-run")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "would remove trash t1 (" in out and "would remove trash t2 (" in out, out
    assert sorted(os.listdir(state_dir / "trash")) == ["t1", "t2"]  # a dry run removes nothing
    r = lo("gc", "--trash")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "removed trash t1 (" in out and "removed trash t2 (" in out, out
    assert os.listdir(state_dir / "trash") == []
    assert lo("sessions", "--trash").stdout == b"the trash is empty\n"
    assert lo("status", "keep").stdout.decode() == "A  three.txt\n1 change: 1 added\n"  # a kept session stays
    assert b"--trash" in lo("gc", "--help").stdout
