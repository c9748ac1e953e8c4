"""The child's environment: host secrets and daemon addresses stay outside."""
from conftest import SECRET_VARS

DROPPED = ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "DB_PASSWORD", "SSH_AUTH_SOCK", "DISPLAY")
VALUES = [SECRET_VARS[n].encode() for n in DROPPED]


def names(out):
    return {l.split(b"=", 1)[0].decode() for l in out.splitlines() if b"=" in l}


def test_secret_variables_are_dropped_and_named_without_values(sh):
    r = sh.run("env", on_exit="discard")
    assert r.returncode == 0, r.stderr
    seen = names(r.stdout)
    assert not seen & set(DROPPED), seen & set(DROPPED)
    assert "HARMLESS_VAR" in seen and "PATH" in seen and "HOME" in seen
    line = [l for l in r.stderr.decode().splitlines() if "not passing" in l]
    assert len(line) == 1, r.stderr
    for n in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"):
        assert n in line[0]
    assert "--env-keep" in line[0]
    for v in VALUES:
        assert v not in r.stderr and v not in r.stdout


def test_no_process_environ_inside_holds_a_secret(sh):
    # Every process's initial environment, the child's ancestors' included
    # where visible: none carries a value.
    r = sh.run("sleep 5 & cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; kill %1", on_exit="discard")
    assert b"HARMLESS_VAR=plain" in r.stdout
    for v in VALUES:
        assert v not in r.stdout


def test_env_keep_passes_one_by_name_or_glob(sh):
    r = sh.run("env", "--env-keep", "GITHUB_TOKEN", "--env-keep", "AWS_*", on_exit="discard")
    seen = names(r.stdout)
    assert {"GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} <= seen
    assert "OPENAI_API_KEY" not in seen
    assert b"GITHUB_TOKEN=ghp_secretvalue1" in r.stdout


def test_env_sets_a_variable_and_bad_ones_are_usage_errors(sh):
    r = sh.run('printf "%s" "$GREETING"', "--env", "GREETING=hello world", on_exit="discard")
    assert r.stdout == b"hello world"
    for bad in ("NOEQUALS", "=v", "1X=v", "A-B=v"):
        r = sh.run("true", "--env", bad, on_exit="discard")
        assert r.returncode == 125, (bad, r.stderr)
        assert b"--env" in r.stderr and b"NAME=VALUE" in r.stderr


def test_env_clear_keeps_only_the_minimal_set(sh):
    r = sh.run("env", "--env-clear", "--env", "EXTRA=1", on_exit="discard",
               env={"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"})
    seen = names(r.stdout)
    allowed = {"PATH", "HOME", "TERM", "LANG", "USER", "SHELL", "TZ", "EXTRA", "PWD",
               "LAYOVER_SESSION", "LAYOVER_TARGET"}
    assert not {n for n in seen if not n.startswith("LC_")} - allowed, seen
    assert {"PATH", "HOME", "LANG", "LC_ALL", "TZ", "EXTRA"} <= seen
    assert "HARMLESS_VAR" not in seen


def test_state_dir_never_reaches_the_child_but_session_and_target_do(sh):
    r = sh.run("env", session="envs")
    seen = names(r.stdout)
    assert "LAYOVER_STATE_DIR" not in seen
    assert str(sh.lo.state).encode() not in r.stdout
    assert b"LAYOVER_SESSION=envs\n" in r.stdout
    assert ("LAYOVER_TARGET=%s\n" % sh.home).encode() in r.stdout
