"""A Python agent author's first day (newuser11), the helper's side. Each
test fails before its fix."""


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
