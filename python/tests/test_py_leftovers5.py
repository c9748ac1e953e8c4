"""Leftovers (round 5) of the Python bindings. Each test fails before its fix."""
from __future__ import annotations

import pytest


def test_diff_of_an_empty_path_is_refused_not_every_file(sb):
    # Before: sb.diff(paths=[""]) ran `layover diff -- ''`, and '' (the
    # target itself) selected every change: a caller's empty variable
    # turned a one-file diff into the whole session's.
    sb.exec(["sh", "-c", "echo v2 > src/app.py; echo o > other.txt"])
    for paths in ([""], ["src/app.py", b""]):
        with pytest.raises(ValueError) as e:
            sb.diff(paths=paths)
        assert str(e.value) == ("paths holds an empty path (''), which would select every change; name paths "
                                "relative to the target, or pass no paths for the whole diff")
    d = sb.diff(paths=["src/app.py"])
    assert "+v2" in d and "other.txt" not in d
