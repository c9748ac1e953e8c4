"""The security suite (tests/security/) shares the integration suite's fixtures.

Each case attacks the sandbox as a hostile agent would and asserts the real
filesystem and processes afterwards. Run by `make test` as an unprivileged uid.
"""
import importlib.util
import sys
from pathlib import Path

_INTEGRATION = Path(__file__).resolve().parent.parent / "integration"
sys.path.insert(0, str(_INTEGRATION))
_spec = importlib.util.spec_from_file_location("integration_conftest", _INTEGRATION / "conftest.py")
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)
globals().update({k: v for k, v in vars(_shared).items() if not k.startswith("__")})

import os  # noqa: E402

import pytest  # noqa: E402

SECRET_VARS = {"GITHUB_TOKEN": "ghp_secretvalue1", "AWS_SECRET_ACCESS_KEY": "awssecretvalue2",
               "OPENAI_API_KEY": "sk-secretvalue3", "DB_PASSWORD": "pwsecretvalue4",
               "SSH_AUTH_SOCK": "/run/user/1/ssh-agent.sock", "DISPLAY": ":0", "HARMLESS_VAR": "plain"}


class SecretHome:
    """A home with the preset's secrets, a project below it, and secret env vars."""

    def __init__(self, root, state):
        self.root = root
        self.home = root / "home"
        self.project = self.home / "project"
        self.project.mkdir(parents=True)
        (self.project / "main.py").write_text("print('hi')\n")
        (self.home / ".ssh").mkdir()
        (self.home / ".ssh" / "id_ed25519").write_text("SSH-PRIVATE-KEY\n")
        (self.home / ".aws").mkdir()
        (self.home / ".aws" / "credentials").write_text("AWS-CREDENTIALS\n")
        (self.home / ".netrc").write_text("machine host password NETRC-PASSWORD\n")
        (self.home / ".config" / "gh").mkdir(parents=True)
        (self.home / ".config" / "gh" / "hosts.yml").write_text("GH-TOKEN\n")
        (self.home / ".config" / "editor.conf").write_text("tabs=4\n")
        self.lo = Layover(state, self.home)
        self.lo.env.update(SECRET_VARS)
        self.lo.env["HOME"] = str(self.home)

    def run(self, cmd, *extra, target=None, **kw):
        lo = self.lo
        args = ["run", "--target", target or self.home, "--on-exit", kw.pop("on_exit", "keep")]
        if kw.get("session"):
            args += ["--session", kw.pop("session")]
        # --keep-empty: an attack that changed nothing leaves a session to inspect.
        args += ["--keep-empty"] + list(extra) + ["--", "/bin/sh", "-c", cmd]
        return lo(*args, cwd=kw.pop("cwd", target or self.home), **kw)

    def secrets(self):
        return {p: (self.home / p).read_bytes() for p in
                (".ssh/id_ed25519", ".aws/credentials", ".netrc", ".config/gh/hosts.yml")}


@pytest.fixture
def sh(require_sandbox, state_dir):
    root = real_dir("sec-")
    home = SecretHome(root, state_dir)
    yield home
    import subprocess as _sp
    _sp.run(["rm", "-rf", str(root)])
