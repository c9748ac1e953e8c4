"""Writes outside the target (issue 15): $HOME and the XDG dirs outside the
target are writable through scratch layers that are never applied; --home ro
keeps them read-only. Each case checks the real home afterwards."""
import os
import subprocess

import pytest

from conftest import LAYOVER, snapshot, real_dir


@pytest.fixture
def world(require_sandbox, state_dir):
    root = real_dir("outside-")
    home = root / "home"
    (home / "project").mkdir(parents=True)
    (home / "project" / "app.py").write_text("v1\n")
    (home / ".bashrc").write_text("# rc\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    env = dict(os.environ, HOME=str(home), LAYOVER_STATE_DIR=str(state_dir))
    for v in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(v, None)

    def run(cmd, *args, session=None, extra_env=None, on_exit="keep"):
        a = [LAYOVER, "run", "--target", str(home / "project"), "--on-exit", on_exit]
        if session:
            a += ["--session", session]
        return subprocess.run(a + list(args) + ["--", "/bin/sh", "-c", cmd], capture_output=True,
                              env=dict(env, **(extra_env or {})), cwd=str(home / "project"),
                              stdin=subprocess.DEVNULL, timeout=60)

    def lo(*args):
        return subprocess.run([LAYOVER, *map(str, args)], capture_output=True, env=env, cwd=str(home),
                              stdin=subprocess.DEVNULL, timeout=60)

    yield type("World", (), {"root": root, "home": home, "run": staticmethod(run), "lo": staticmethod(lo),
                             "state": state_dir})
    subprocess.run(["rm", "-rf", str(root)])


def outside_of(home):
    return {k: v for k, v in snapshot(home).items() if not k.startswith("project")}


def test_tools_can_write_their_home_state_and_none_of_it_is_applied(world):
    before = outside_of(world.home)
    r = world.run("mkdir -p ~/.npm/_cacache ~/.cache/pip && echo a > ~/.npm/_cacache/x && echo b > ~/.cache/pip/y"
                  " && git config --global user.name agent && echo rc >> ~/.bashrc && rm ~/.bashrc"
                  " && echo edited > app.py && cat ~/.gitconfig", session="tools")
    assert r.returncode == 0, r.stderr
    assert b"name = agent" in r.stdout
    assert "outside the target (not applied): 4 files: ~/.bashrc, 1 under ~/.cache/pip, ~/.gitconfig, …".encode() in r.stderr, r.stderr
    st = world.lo("status", "tools")
    assert b"M  app.py" in st.stdout or b"app.py" in st.stdout
    assert b"outside the target (not applied)" in st.stdout
    listed = world.lo("status", "tools", "--outside").stdout.decode().splitlines()
    assert listed == ["deleted ~/.bashrc", "~/.cache/pip/y", "~/.gitconfig", "~/.npm/_cacache/x"]
    js = world.lo("status", "tools", "--json").stdout
    assert b".npm" not in js and b"gitconfig" not in js
    assert world.lo("apply", "tools", "--yes").returncode == 0
    assert (world.home / "project" / "app.py").read_text() == "edited\n"
    assert outside_of(world.home) == before  # nothing outside the target was written


def test_a_resumed_session_sees_its_scratch_writes_again(world):
    r = world.run("echo cached > ~/.cache-file", session="again")
    assert b"outside the target (not applied): 1 file: ~/.cache-file\n" in r.stderr, r.stderr
    r = world.run("cat ~/.cache-file", session="again")
    assert r.stdout == b"cached\n"
    assert not (world.home / ".cache-file").exists()
    # The exit line says which writes are an earlier run's (newuser6: it
    # counted them as this run's).
    assert b"1 file: ~/.cache-file (from earlier runs)\n" in r.stderr, r.stderr
    r = world.run("echo x > ~/.other", session="again")
    assert b"2 files: ~/.cache-file, ~/.other (1 of them from earlier runs)\n" in r.stderr, r.stderr


def test_home_ro_keeps_the_strict_read_only_home(world):
    r = world.run("echo x > ~/new.txt; echo rc=$?", "--home", "ro", on_exit="discard")
    assert b"rc=0" not in r.stdout and b"Read-only file system" in r.stderr
    r = world.run("true", "--home", "bogus")
    assert r.returncode == 125 and b"--home 'bogus'" in r.stderr


def test_hidden_secrets_stay_hidden_and_unwritable_through_the_scratch_layer(world):
    r = world.run("cat ~/.ssh/id_rsa; ls -A ~/.ssh | wc -l; echo new > ~/.ssh/authorized_keys; echo rc=$?",
                  session="sec")
    assert b"KEY" not in r.stdout
    assert r.stdout.split(b"\n")[0] == b"0"
    assert b"rc=0" not in r.stdout
    assert not (world.home / ".ssh" / "authorized_keys").exists()


def test_an_xdg_cache_outside_home_gets_its_own_scratch_layer(world):
    cache = world.root / "cache"
    cache.mkdir()
    r = world.run('echo c > "$XDG_CACHE_HOME/item"; echo rc=$?', session="xdg", extra_env={"XDG_CACHE_HOME": str(cache)})
    assert r.stdout == b"rc=0\n", r.stderr
    assert not (cache / "item").exists()
    assert str(cache / "item") in world.lo("status", "xdg", "--outside").stdout.decode()


def test_a_state_dir_inside_home_keeps_home_read_only_and_says_why(world):
    inner = world.home / ".layover-state"
    inner.mkdir(mode=0o700)
    r = world.run("echo x > ~/f; echo rc=$?", on_exit="discard", extra_env={"LAYOVER_STATE_DIR": str(inner)})
    assert b"stays read-only: the state dir" in r.stderr, r.stderr
    assert b"rc=0" not in r.stdout
