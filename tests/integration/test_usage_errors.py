"""A usage error a new user provokes is one line on stderr: what is wrong and where the usage is.

Not the whole usage text after it (that scrolls the message away); --help prints the usage.
"""
import pytest

CASES = [
    (["diff", "s1", "--color=sometimes"], "'sometimes'", "layover diff --help"),
    (["show"], "missing FILE.tar.zst", "layover show --help"),
    (["show", "--bogus"], "'--bogus'", "layover show --help"),
    (["save", "s1"], "add -o FILE.tar.zst", "layover save --help"),
    (["save", "-o", "p.tar.zst"], "missing SESSION", "layover save --help"),
    (["checkpoint"], "missing SESSION", "layover checkpoint --help"),
    (["checkpoint", "s1", "s2"], "more than one session", "layover checkpoint --help"),
    (["log", "s1", "s2"], "more than one session", "layover log --help"),
    (["blame", "s1"], "a SESSION and one PATH", "layover blame --help"),
    (["rollback", "s1"], "a SESSION and a step number N", "layover rollback --help"),
    (["compare", "s1"], "two sessions, A and B", "layover compare --help"),
]


@pytest.mark.parametrize("args,names,fix", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_usage_error_is_one_line_naming_the_problem_and_the_help(lo, args, names, fix):
    r = lo(*args)
    err = r.stderr.decode()
    assert r.returncode == 2, err
    assert r.stdout == b""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("layover: %s: " % args[0]) and names in err, err
    assert err.endswith("; see '%s'\n" % fix), err


@pytest.mark.parametrize("verb", ["diff", "show", "save"])
def test_help_still_prints_the_whole_usage_on_stdout(lo, verb):
    r = lo(verb, "--help")
    assert r.returncode == 0 and r.stdout.decode().startswith("usage: layover " + verb), r
    assert len(r.stdout.decode().splitlines()) > 2


@pytest.mark.parametrize("args", [["show", "nope.tar.zst"], ["diff", "nope.tar.zst"], ["apply", "nope.tar.zst", "--yes"]],
                         ids=["show", "diff", "apply"])
def test_a_missing_patch_file_is_named_once_with_the_fix(lo, args):
    r = lo(*args)
    err = r.stderr.decode()
    assert r.returncode in (1, 2) and len(err.splitlines()) == 1, err
    assert "no patch file nope.tar.zst; check the path" in err, err
    assert err.count("nope.tar.zst") == (2 if args[0] == "diff" else 1), err  # diff names its operand first


def test_show_of_a_session_name_says_it_is_a_session_and_what_shows_it(lo):
    # `show` takes a patch file; a session's name gave "no patch file NAME".
    lo.run("echo x > new.txt", session="work", check=True)
    r = lo("show", "work")
    assert r.returncode == 1 and r.stdout == b""
    assert r.stderr.decode() == ("layover: 'work' is a session, not a patch file: 'layover status work' lists its "
                                 "changes, 'layover save work -o FILE.tar.zst' writes it as a patch\n")
    # A file of that name in the current dir is what is shown (here: not a patch).
    (lo.target / "work").write_text("not a patch\n")
    r = lo("show", "work")
    assert r.returncode == 1 and b"invalid patch work" in r.stderr, r.stderr


VERBS = ["run", "sessions", "status", "save", "show", "diff", "apply", "undo", "discard", "restore", "gc", "doctor",
         "config", "log", "blame", "rollback", "fork", "reject", "rejections", "checkpoint", "compare", "revert",
         "mcp"]


@pytest.mark.parametrize("verb", VERBS)
def test_an_unknown_option_is_one_line_naming_it_and_the_help_for_every_verb(lo, verb):
    # status and reject printed the whole usage after the reason; log, blame,
    # rollback, fork, checkpoint, compare and revert the usage line; discard
    # and restore the usage line alone, never saying what was wrong.
    r = lo(verb, "--bogus")
    err = r.stderr.decode()
    assert r.returncode == (125 if verb == "run" else 2), err
    assert r.stdout == b""
    assert len(err.splitlines()) == 1, err
    # Every verb's line has one form (cli::usage_error; mcp's is Python's).
    assert err == "layover: %s: unknown option '--bogus'; see 'layover %s --help'\n" % (verb, verb), err


@pytest.mark.parametrize("verb,typo,meant", [
    ("run", "--sesion", "--session"), ("run", "--no-hide-secret", "--no-hide-secrets"), ("status", "--jsn", "--json"),
    ("apply", "--dryrun", "--dry-run"), ("apply", "--no-default-ignore", "--no-default-ignores"),
    ("save", "--no-default-ignore", "--no-default-ignores"), ("undo", "--lst", "--last"), ("gc", "--older-then", "--older-than"),
    ("sessions", "--trsh", "--trash"), ("doctor", "--fx", "--fix"), ("diff", "--stats", "--stat"),
    ("log", "-json", "--json"), ("discard", "--rejectd", "--rejected"), ("mcp", "--targt", "--target")])
def test_a_mistyped_option_names_the_flag_it_was_meant_to_be(lo, verb, typo, meant):
    # Before, the line said only that the option was unknown.
    r = lo(verb, typo)
    err = r.stderr.decode()
    assert r.returncode == (125 if verb == "run" else 2), err
    assert err == "layover: %s: unknown option '%s' (did you mean '%s'?); see 'layover %s --help'\n" % (
        verb, typo, meant, verb), err


def test_a_far_or_hostile_option_gets_no_guess_and_stays_inert(lo):
    for verb in ("status", "save", "show", "sessions"):
        r = lo(verb, "--zzzzzzzz")
        assert b"did you mean" not in r.stderr, r.stderr
        r = lo(verb, "--j\x1b]52;c;eA==\x07son")
        assert r.returncode == 2 and b"\x1b" not in r.stderr and b"\x07" not in r.stderr, r.stderr


@pytest.mark.parametrize("args,names", [(["discard"], "missing SESSION"), (["restore"], "missing NAME"),
                                        (["discard", "s1", "--now", "--rejected"], "--now or --rejected"),
                                        (["restore", "a", "b"], "one NAME")], ids=lambda a: str(a))
def test_discard_and_restore_say_what_is_missing(lo, args, names):
    r = lo(*args)
    err = r.stderr.decode()
    assert r.returncode == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("layover: %s: " % args[0]) and names in err, err
    assert err.endswith("; see 'layover %s --help'\n" % args[0]), err
