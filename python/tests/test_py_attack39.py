"""attack39: Sandbox()'s wrong types beside network's (newuser17 made
network=True a TypeError): on_exit=True was a ValueError, and a helper_env
value that is not a str was taken, to fail at start() as a TypeError naming
nothing ("expected str, bytes or os.PathLike object, not int")."""
import os

import pytest

import layover


def test_on_exit_given_as_a_bool_is_a_type_error(target, state_dir):
    with pytest.raises(TypeError) as e:
        layover.Sandbox(target, state_dir=state_dir, on_exit=True)
    assert str(e.value) == "on_exit must be a str, one of ('keep', 'discard', 'apply', 'prompt'), not bool True"
    assert os.listdir(state_dir) == []


def test_a_helper_env_value_that_is_not_a_str_is_a_type_error_naming_it(target, state_dir):
    with pytest.raises(TypeError) as e:
        layover.Sandbox(target, state_dir=state_dir, helper_env=dict(os.environ, JOBS=4))
    assert str(e.value) == "helper_env: names and values must be str, not helper_env['JOBS'] = 4; pass str(value)"
    assert os.listdir(state_dir) == []
