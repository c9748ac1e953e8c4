"""The config file (issue 16): ${XDG_CONFIG_HOME:-~/.config}/layover/config.toml
sets defaults for long options; the command line wins; a bad line is an
exact error; the file is read on the host only, so an agent writing it inside
the sandbox changes nothing. And the one flag table (helper/cli/common/flags.cc)
matches every verb's --help text and parser, both ways."""
import os
import re
import subprocess

import pytest

from conftest import LAYOVER, real_dir

PATCH = os.path.join(os.path.dirname(LAYOVER), "layover-patch")

# Talks to itself over 127.0.0.1: works with --network loopback, fails with none (lo down).
BIND = ("import socket\nsrv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n"
        "socket.create_connection(srv.getsockname(), timeout=3); print('bound')")


def lay(*args, env, cwd=None, binary=LAYOVER):
    return subprocess.run([binary, *map(str, args)], capture_output=True, env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, timeout=60)


@pytest.fixture
def cfg(tmp_path, state_dir):
    xdg = tmp_path / "xdg"
    (xdg / "layover").mkdir(parents=True)
    env = dict(os.environ, XDG_CONFIG_HOME=str(xdg), LAYOVER_STATE_DIR=str(state_dir))
    env.pop("LAYOVER_SESSION", None)
    path = xdg / "layover" / "config.toml"

    def write(text):
        path.write_text(text)
        path.chmod(0o600)

    return type("Cfg", (), {"env": env, "path": path, "write": staticmethod(write)})


# --- the flag table against the verbs' own --help and parsers ---

def table():
    """verb -> {name: (arg, repeat)} from `layover config --keys`."""
    r = lay("config", "--keys", env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.decode().splitlines():
        verb, flag, arg, rep = line.split()[:4]
        out.setdefault(verb, {})[flag[2:]] = (arg, rep == "repeatable")
    return out


def verbs_in_usage():
    text = lay("--help", env=dict(os.environ)).stdout.decode()
    return [m.group(1) for m in re.finditer(r"^  ([a-z-]+)", text, re.M)]


def help_flags(verb):
    """name -> (arg, repeat) as the verb's --help shows it; quoted text ('apply
    --undo-to FILE' in undo's) names another verb's flags and is left out."""
    r = lay(verb, "--help", env=dict(os.environ))
    text = re.sub(r"(?<![A-Za-z])'[^']*'(?![A-Za-z])", "", (r.stdout + r.stderr).decode())
    out = {}
    for m in re.finditer(r"(?<![\w-])--([a-z][a-z-]*)(\[=|=|\s[A-Z]|)", text):
        name, after = m.group(1), m.group(2)
        arg = "[=VALUE]" if after == "[=" else "VALUE" if after else "-"
        old = out.get(name, ("-", False))[0]
        rep = bool(re.search(r"\[--%s[^\]]*\]\.\.\." % re.escape(name), text))
        out[name] = (arg if old == "-" else old, rep or out.get(name, ("-", False))[1])
    out.pop("no-config", None)  # every verb's, through main (docs/cli.md)
    return out


def test_every_flag_in_each_verbs_help_is_in_the_table_and_back():
    tab = table()
    for verb in verbs_in_usage():
        shown = help_flags(verb)
        rows = tab.get(verb, {})
        assert set(shown) == set(rows), "%s: --help shows %s, the table (helper/cli/common/flags.cc) has %s" % (
            verb, sorted(shown), sorted(rows))
        for name, (arg, rep) in rows.items():
            assert shown[name][0] == arg, "%s --%s: help shows %s, table says %s" % (verb, name, shown[name][0], arg)
            if shown[name][1]:
                assert rep, "%s --%s: help shows it repeatable, the table does not" % (verb, name)
    assert set(tab) - set(verbs_in_usage()) == set(), "table verbs missing from 'layover --help'"


def test_no_help_line_is_wider_than_120_columns():
    # A usage line of 247 columns (diff's) wrapped mid-flag on any terminal.
    for verb in [None] + verbs_in_usage():
        r = lay(*([verb] if verb else []), "--help", env=dict(os.environ))
        wide = [l for l in (r.stdout + r.stderr).decode().splitlines() if len(l) > 120]
        assert wide == [], "%s --help: %s" % (verb or "layover", wide)


SAMPLES = {"network": "none", "on-exit": "keep", "home": "ro", "timeout": "1h", "max-pids": "100",
           "max-size": "1G", "max-memory": "1G", "min-free": "1G", "tmp-size": "1G", "ipc-fd": "3", "env": "A=b",
           "session": "abc", "color": "never", "max-members": "5", "max-stored-bytes": "5M",
           "max-logical-bytes": "5M", "max-name-len": "100", "max-pax-header": "1000", "keep-undo": "20",
           "keep-undo-days": "30", "older-than": "30d", "conflict": "markers",
           "max-steps": "3"}


def test_every_table_flag_is_accepted_by_its_verbs_parser(tmp_path):
    env = dict(os.environ, LAYOVER_STATE_DIR=str(tmp_path / "st"), XDG_CONFIG_HOME=str(tmp_path / "x"))
    for verb, rows in table().items():
        for name, (arg, _) in rows.items():
            flag = "--%s=%s" % (name, SAMPLES.get(name, "x")) if arg != "-" else "--" + name
            r = lay(verb, flag, "--help", env=env, cwd=str(tmp_path))
            err = r.stderr.decode()
            assert r.returncode == 0 and "unknown" not in err, "%s %s: %s" % (verb, flag, err)


# --- precedence, with real runs ---

def test_network_none_from_the_file_and_the_command_line_wins(require_sandbox, cfg, home):
    cfg.write("# defaults\nnetwork = \"none\"\n")
    base = ["run", "--target", home, "--on-exit", "discard"]
    r = lay(*base, "--", "python3", "-c", BIND, env=cfg.env)
    assert r.returncode != 0 and b"bound" not in r.stdout, r.stderr
    r = lay(*base, "--network", "loopback", "--", "python3", "-c", BIND, env=cfg.env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"bound\n"
    # --no-config drops the file: the built-in default (loopback) again.
    r = lay("run", "--no-config", *base[1:], "--", "python3", "-c", BIND, env=cfg.env)
    assert r.returncode == 0 and r.stdout == b"bound\n", r.stderr
    # A [run] table wins over the top level.
    cfg.write("network = \"loopback\"\n[run]\nnetwork = \"none\"\n")
    r = lay(*base, "--", "python3", "-c", BIND, env=cfg.env)
    assert r.returncode != 0 and b"bound" not in r.stdout


def test_repeatable_lists_extend_and_config_shows_origins(require_sandbox, cfg, home):
    (home / "a.txt").write_text("A\n")
    (home / "b.txt").write_text("B\n")
    cfg.write("hide = [\"%s\"]\n[run]\ntimeout = \"2h\"\n" % (home / "a.txt"))
    r = lay("run", "--target", home, "--on-exit", "discard", "--hide", home / "b.txt", "--",
            "/bin/sh", "-c", "cat a.txt b.txt; echo end", env=cfg.env, cwd=str(home))
    assert r.stdout == b"end\n", r.stderr  # both hidden: the file's and the command line's
    out = lay("config", "run", "--hide", "x", "--network", "host", env=cfg.env).stdout.decode()
    lines = {ln.split(" = ")[0]: ln for ln in out.splitlines() if " = " in ln}
    assert re.fullmatch(r'hide = \["%s", "x"\] +# config\.toml:1 \+ command line' % re.escape(str(home / "a.txt")),
                        lines["hide"])
    assert re.fullmatch(r'network = "host" +# command line', lines["network"])
    assert re.fullmatch(r'timeout = "2h" +# config\.toml:3', lines["timeout"])
    assert re.fullmatch(r'max-pids = "4096" +# default', lines["max-pids"])
    assert lay("config", "--path", env=cfg.env).stdout.decode() == str(cfg.path) + "\n"


def test_a_bad_line_is_an_exact_error_and_nothing_runs(require_sandbox, cfg, home):
    cfg.write("network = \"none\"\nhide-secrets false\n")
    r = lay("run", "--target", home, "--", "/bin/sh", "-c", "echo ran > ran.txt", env=cfg.env)
    assert r.returncode == 125
    assert r.stderr.decode() == ("layover run: %s:2: expected '=' after 'hide-secrets'; write key = value, "
                                 "e.g. network = \"none\"\n" % cfg.path)
    assert not (home / "ran.txt").exists()
    assert lay("sessions", env=cfg.env).returncode == 2
    cfg.write("[run]\nnetwrk = \"none\"\n")
    r = lay("status", env=cfg.env)
    assert r.returncode == 2
    assert r.stderr.decode() == ("layover status: %s:2: unknown key 'netwrk' in [run]; did you mean 'network' "
                                 "(run)?\n" % cfg.path)
    cfg.write("\n\n[run]\nmax-pids = 3\n")
    r = lay("run", "--target", home, "--", "true", env=cfg.env)
    assert r.stderr.decode() == ("layover run: %s:4: bad --max-pids '3'; use a number from 8 to 4194304\n"
                                 % cfg.path)
    assert lay("sessions", "--no-config", env=cfg.env).returncode == 0


def test_patch_verbs_see_the_file_once_whether_execd_or_run_directly(cfg, tmp_path):
    cfg.write("[diff]\ncolor = \"sometimes\"\n")
    for binary in (LAYOVER, PATCH):
        r = lay("diff", "nosuch.tar.zst", env=cfg.env, cwd=str(tmp_path), binary=binary)
        err = r.stderr.decode()
        assert r.returncode == 2, err
        assert err.count("--color takes auto, always or never, not 'sometimes'") == 1, err
        assert err.count("layover: diff also had options from %s (line 2)" % cfg.path) == 1, err


def test_an_agent_writing_the_config_inside_changes_nothing(require_sandbox, state_dir):
    root = real_dir("cfg-")
    home = root / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), LAYOVER_STATE_DIR=str(state_dir))
    env.pop("XDG_CONFIG_HOME", None)
    try:
        script = ("mkdir -p ~/.config/layover && printf 'network = \"none\"\\n' > ~/.config/layover/config.toml"
                  " && %s config run" % LAYOVER)
        r = lay("run", "--target", home, "--no-hide-secrets", "--session", "agent", "--on-exit", "keep",
                "--ro", os.path.dirname(LAYOVER), "--",
                "/bin/sh", "-c", script, env=env, cwd=str(home))
        assert r.returncode == 0, r.stderr
        # Inside, a layover (LAYOVER_SESSION set) reads no config file at all.
        assert b"config.toml:" not in r.stdout and b'network = "loopback"' in r.stdout, r.stdout
        assert (state_dir / "sessions" / "agent" / "upper" / ".config" / "layover" / "config.toml").exists()
        assert not (home / ".config").exists()
        # The next run on the host: still loopback.
        r = lay("run", "--target", home, "--on-exit", "discard", "--", "python3", "-c", BIND, env=env, cwd=str(home))
        assert r.returncode == 0 and r.stdout == b"bound\n", r.stderr
        assert b"config.toml:" not in lay("config", "run", env=env).stdout
        # It is a change like any other, for review (the prompt marks it risky:
        # tests/unit/test_review_risk.cc).
        st = lay("status", "agent", "--expand", env=env).stdout.decode()
        assert ".config/layover/config.toml" in st
    finally:
        subprocess.run(["rm", "-rf", str(root)])
