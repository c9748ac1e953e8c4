"""A usage error a new user provokes is one line on stderr: what is wrong and where the usage is.

Not the whole usage text after it (that scrolls the message away); --help prints the usage.
"""
import pytest

CASES = [
    (["diff"], "missing SESSION or PATCH", "layover diff --help"),
    (["diff", "s1", "--color=sometimes"], "'sometimes'", "layover diff --help"),
    (["show"], "missing FILE.tar.zst", "layover show --help"),
    (["show", "--bogus"], "'--bogus'", "layover show --help"),
    (["save", "s1"], "add -o FILE.tar.zst", "layover save --help"),
    (["save", "-o", "p.tar.zst"], "missing SESSION", "layover save --help"),
]


@pytest.mark.parametrize("args,names,fix", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_usage_error_is_one_line_naming_the_problem_and_the_help(lo, args, names, fix):
    r = lo(*args)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert r.stdout == b""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("layover") and names in err and fix in err, err


@pytest.mark.parametrize("verb", ["diff", "show", "save"])
def test_help_still_prints_the_whole_usage_on_stdout(lo, verb):
    r = lo(verb, "--help")
    assert r.returncode == 0 and r.stdout.decode().startswith("usage: layover " + verb), r
    assert len(r.stdout.decode().splitlines()) > 2
