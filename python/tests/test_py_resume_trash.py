"""Sandbox.resume() of a name that is no live session says why, as the CLI
does (newuser18 found it said "not found" for a session in the trash)."""
from __future__ import annotations

import pytest

import layover


def test_resume_of_a_trashed_session_says_it_is_in_the_trash_and_how_to_restore_it(sb, state_dir):
    sb.run("open('f.txt', 'w').write('x')")
    sb.close()
    sb.helper.run(["discard", sb.name])  # to the trash, as the exit prompt's [d] does
    with pytest.raises(layover.SandboxError) as e:
        layover.Sandbox.resume(sb.name, state_dir=state_dir)
    assert str(e.value) == ("layover: no session named '%s': it is in the trash (discarded); "
                            "'layover restore %s' brings it back" % (sb.name, sb.name)), str(e.value)
    sb.helper.run(["restore", sb.name])
    again = layover.Sandbox.resume(sb.name, state_dir=state_dir)
    try:
        assert again.run("open('f.txt').read()").value == "'x'"
    finally:
        again.close()


def test_resume_of_a_typo_names_the_session_it_likely_meant(sb, state_dir):
    sb.run("1")
    sb.close()
    with pytest.raises(layover.SandboxError, match=r"no session named '%sx'.*%s" % (sb.name, sb.name)):
        layover.Sandbox.resume(sb.name + "x", state_dir=state_dir)
