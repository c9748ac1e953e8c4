"""attack51: Sandbox.resume() looked the name up with the caller's own
environment, not the helper_env it was given (which Sandbox() itself runs
the helper with): a session whose state dir helper_env names was "not
found", where Sandbox(session=NAME, helper_env=...) resumed it."""
import os

import layover


def test_resume_looks_the_session_up_where_helper_env_says(make_sandbox, state_dir, tmp_path, monkeypatch):
    elsewhere = tmp_path / "other-state"
    elsewhere.mkdir(mode=0o700)
    monkeypatch.setenv("LAYOVER_STATE_DIR", str(elsewhere))  # the caller's own: not the sessions'
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    first = make_sandbox(state_dir=None, helper_env=env)
    first.run("open('f.txt', 'w').write('kept')")
    first.close()
    assert (state_dir / "sessions" / first.name).is_dir()  # where helper_env said
    again = layover.Sandbox.resume(first.name, helper_env=env)
    try:
        assert again.run("open('f.txt').read()").value == "'kept'"
    finally:
        again.close()
