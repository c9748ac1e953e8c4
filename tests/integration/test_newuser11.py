"""A Python agent author's first day (newuser11), the helper's side. Each
test fails before its fix."""
from apply_util import saved_patch_and_copy as _patch


def test_rollback_past_the_steps_of_a_session_without_any_says_so(lo):
    # Before: "the session has steps 1..0".
    assert lo.run("echo x > new.txt", session="nos").returncode == 0
    r = lo("rollback", "nos", "3")
    assert r.returncode != 0
    assert "no step 3: the session has no frozen steps (0 is the real tree alone); see 'layover log'" \
        in r.stderr.decode(), r.stderr
    assert lo("checkpoint", "nos").returncode == 0
    r = lo("rollback", "nos", "3")
    assert "no step 3: the session has steps 1..1 (0 is the real tree alone)" in r.stderr.decode(), r.stderr


def test_a_patch_that_adds_a_directory_applied_twice_writes_nothing(lo, tmp_path):
    # Before: the second apply listed the new dir ("exists on the target now
    # (a dir), but the patch expects it absent") and each file in it ("is
    # new on the target inside a directory the patch deletes or replaces")
    # as conflicts; a patch of files alone was fine since newuser10.
    patch, copy = _patch(lo, tmp_path, "mkdir -p d/e; echo z > d/z; printf '#!/bin/sh\\n' > d/e/run; "
                         "chmod 755 d/e/run; ln -s z d/l; : > d/empty; echo n > new.txt", "twd")
    assert lo("apply", patch, "--target", copy, "--yes").returncode == 0
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == "nothing to apply to %s\n" % copy, r.stdout
    assert r.stderr.decode() == ("layover: apply: already on the target as the patch makes them, so left as they "
                                 "are: d, new.txt\n"), r.stderr
    # Not the same tree: an extra file, another byte, another mode: conflicts still.
    (copy / "d" / "mine").write_text("mine\n")
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 1 and "d/mine" in r.stderr.decode(), r.stderr
    (copy / "d" / "mine").unlink()
    (copy / "d" / "z").write_text("y\n")
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 1 and "  d: exists on the target now" in r.stderr.decode(), r.stderr
    (copy / "d" / "z").write_text("z\n")
    (copy / "d" / "e" / "run").chmod(0o644)
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 1 and "  d: exists on the target now" in r.stderr.decode(), r.stderr
    (copy / "d" / "e" / "run").chmod(0o755)
    (copy / "d" / "l").unlink()
    (copy / "d" / "l").symlink_to("other")
    r = lo("apply", patch, "--target", copy, "--yes")
    assert r.returncode == 1 and "  d: exists on the target now" in r.stderr.decode(), r.stderr
