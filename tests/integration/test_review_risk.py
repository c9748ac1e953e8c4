"""Issue 24, "Flag what a person must look at": secrets an agent wrote and
the places that run code later are marked in status, show, diff and apply
--dry-run, listed alone by `status --risk`, carried as `risks` in every
--json change, refused by `apply --yes` until --allow-secrets, warned about
by save, and masked in the MCP diff. Secrets are built at run time so no
token-shaped literal sits in the source."""
import json

import pytest

from capture_util import by_path

GH = "ghp_" + "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0hJ2kL4"  # 36 after the prefix
ENV_VALUE = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"


@pytest.fixture(autouse=True)
def discard_sessions(lo):
    yield
    if lo.session_dir("s").exists():
        lo("discard", "s")


def agent(lo, cmd):
    r = lo.run(cmd, session="s")
    assert r.returncode == 0, r.stderr.decode(errors="replace")


WRITE = ("mkdir -p proj/.venv/lib/python3.11/site-packages && "
         "printf 'a\\ntoken = %s\\n' > proj/config.py && "
         "printf 'API_KEY=%s\\n' > proj/.env && "
         "echo 'import os' > proj/.venv/lib/python3.11/site-packages/evil.pth && "
         "echo '{\"scripts\": {\"postinstall\": \"sh x\"}}' > proj/package.json && "
         "echo plain >> notes.txt") % (GH, ENV_VALUE)


def test_status_marks_secrets_and_exec_later_paths_without_the_secret(lo):
    agent(lo, WRITE)
    r = lo("status", "s")
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr
    line = [ln for ln in out.splitlines() if "proj/config.py" in ln][0]
    assert "! secret: GitHub token on line 2 (ghp_…)" in line
    assert "API_KEY=…" in out and ".pth file" in out and "postinstall script (npm runs it)" in out
    assert GH[4:] not in out and ENV_VALUE not in out
    assert "M  notes.txt\n" in out  # unflagged: no mark
    # --risk: only the flagged ones.
    only = lo("status", "s", "--risk").stdout.decode()
    assert "notes.txt" not in only and "proj/config.py" in only and "proj/.env" in only
    # --json: every change has risks, empty when none; no secret in it.
    raw = lo("status", "s", "--json").stdout.decode()
    ch = by_path(json.loads(raw))
    assert ch[b"notes.txt"]["risks"] == []
    assert ch[b"proj/config.py"]["risks"] == ["secret: GitHub token on line 2 (ghp_…)"]
    assert ch[b"proj/.venv/lib/python3.11/site-packages/evil.pth"]["risks"] == [
        "Python .pth file (runs at every python start)"]
    assert all("risks" in c for c in ch.values())
    assert GH[4:] not in raw and ENV_VALUE not in raw
    risky = json.loads(lo("status", "s", "--json", "--risk").stdout)
    assert b"notes.txt" not in by_path(risky) and all(c["risks"] for c in risky)
