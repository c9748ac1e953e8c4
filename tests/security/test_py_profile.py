"""The Python Sandbox(...) takes the same isolation profile as `layover run`."""
import pytest

from layover import Sandbox


def sandbox(sh, **kw):
    return Sandbox(sh.project, state_dir=sh.lo.state, helper_env=sh.lo.env, on_exit="discard", **kw)


def test_python_defaults_hide_secrets_and_drop_secret_variables(sh):
    with sandbox(sh) as sb:
        r = sb.run("import os, pathlib\n"
                   "print(sorted(os.listdir(os.path.expanduser('~/.ssh'))), os.environ.get('GITHUB_TOKEN'),\n"
                   "      os.environ.get('HARMLESS_VAR'), pathlib.Path('~/.netrc').expanduser().read_text())")
        assert r.error is None, r.error
        assert r.stdout == "[] None plain \n"


def test_python_env_env_keep_env_clear(sh):
    with sandbox(sh, env={"GREETING": "hi"}, env_keep=["GITHUB_TOKEN"]) as sb:
        r = sb.run("import os\nprint(os.environ['GREETING'], os.environ['GITHUB_TOKEN'], "
                   "os.environ.get('AWS_SECRET_ACCESS_KEY'))")
        assert r.stdout == "hi ghp_secretvalue1 None\n", r.error
    with sandbox(sh, env_clear=True) as sb:
        r = sb.run("import os\nprint('HARMLESS_VAR' in os.environ, 'PATH' in os.environ)")
        assert r.stdout == "False True\n", r.error


def test_python_hide_and_hide_secrets_false(sh):
    (sh.home / "diary").write_text("DIARY\n")
    with sandbox(sh, hide=[sh.home / "diary"], hide_secrets=False) as sb:
        r = sb.run("import os\nh=os.path.expanduser('~')\n"
                   "print(open(h+'/diary').read()=='', open(h+'/.ssh/id_ed25519').read().strip())")
        assert r.stdout == "True SSH-PRIVATE-KEY\n", r.error


def test_python_rejects_a_bare_string_for_list_options(sh):
    with pytest.raises(TypeError):
        sandbox(sh, hide="~/.ssh", start=False)
    with pytest.raises(ValueError):
        sandbox(sh, env={"A=B": "x"}, start=False)
