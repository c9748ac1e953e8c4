"""Attack pass 17 (27 Nov): the sandboxed program against invariants 1-4 and 7
(docs/security.md). What held is listed in the report of that pass; each
hole found has a test here."""
import shutil
import socket

import pytest

from conftest import real_dir

PY = "/usr/bin/python3"

# socket(AF_VSOCK) inside, as a hostile program would open it to reach the
# hypervisor (CID 2) or to listen for it: vsock is not namespaced, so a new
# network namespace does not stop it.
VSOCK = ("import socket\n"
         "try:\n"
         "    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM); print('OPENED')\n"
         "    s.bind((socket.VMADDR_CID_ANY, 45917)); s.listen(); print('LISTENING')\n"
         "except OSError as e: print('refused', e.errno)")


def vsock_on_this_kernel():
    try:
        socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM).close()
        return True
    except (OSError, AttributeError):
        return False


@pytest.mark.parametrize("network", ["loopback", "none", "host"])
def test_no_vsock_socket_inside_in_any_network_mode(lo, network):
    # Found by attack17: AF_VSOCK is not per network namespace, so under
    # --network loopback (the default) or none the command could still open
    # a vsock socket and talk to the hypervisor's services or listen for them
    # (on a Firecracker, QEMU or cloud VM: CID 2 is the host). The filter now
    # refuses the family as a kernel without it does (EAFNOSUPPORT, 97).
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--network", network, "--", PY, "-c", VSOCK)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"refused 97\n", (r.stdout, r.stderr)
    # The control (the filter, not the kernel, refuses it): where the kernel
    # has vsock, the same user opens one outside (this test's process); on a
    # kernel without it both are refused alike.
    if not vsock_on_this_kernel():
        pytest.skip("no AF_VSOCK on this kernel: refused outside too, nothing to compare")


# Secret-carrying variables in common use that the preset's patterns missed:
# Django's and Rails' SECRET_KEY (no `_` before SECRET), MySQL's password
# variable, DB_PASS-style names, passphrases, private keys, connection URLs
# with a password in them, Sentry's DSN (a key), the Bitwarden and 1Password
# CLIs' unlock sessions, and lower-case spellings.
MISSED = {"SECRET_KEY": "django-secret-1", "SECRET_KEY_BASE": "rails-secret-2", "MYSQL_PWD": "mysql-pw-3",
          "DB_PASS": "db-pass-4", "SMTP_PASSWD": "smtp-pw-5", "GPG_PASSPHRASE": "gpg-pp-6",
          "SIGNING_PRIVATE_KEY": "priv-key-7", "MINIO_ACCESS_KEY": "minio-ak-8", "SENDGRID_APIKEY": "sg-key-9",
          "DATABASE_URL": "postgres://u:db-url-pw-10@db/app", "REPLICA_DATABASE_URL": "postgres://u:db-url-pw-11@r/app",
          "SENTRY_DSN": "https://sentry-key-12@o1.ingest.sentry.io/1", "BW_SESSION": "bw-session-13",
          "OP_SESSION_myteam": "op-session-14", "github_token": "ghp-lower-15"}
# Look-alikes that carry no secret and still pass.
PASSING = {"OLDPWD": "/home", "KEYBOARD_LAYOUT": "us", "DESKTOP_SESSION": "plasma", "TOKENIZERS_PARALLELISM": "false",
           "PASSAGE_DIR": "/p", "BYPASS_CACHE": "1"}


def test_common_secret_variables_do_not_enter(lo):
    # Found by attack17: each of MISSED reached the command's environment
    # (`env` inside printed its value). They are dropped now, named in the
    # start-up line; --env-keep still passes one.
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", "/usr/bin/env",
           env={**MISSED, **PASSING})
    assert r.returncode == 0, r.stderr
    for name, value in MISSED.items():
        assert value.encode() not in r.stdout, name
    assert b"not passing %d secret variables" % len(MISSED) in r.stderr, r.stderr
    for name, value in PASSING.items():
        assert ("%s=%s" % (name, value)).encode() in r.stdout, name
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--env-keep", "SECRET_KEY", "--", "/usr/bin/env",
           env=MISSED)
    assert b"SECRET_KEY=django-secret-1\n" in r.stdout
    assert b"mysql-pw-3" not in r.stdout


# Writes 6 MiB into each private tmpfs in turn; prints what each took.
FILL = ("import os\n"
        "for d in ('/tmp', '/var/tmp', '/dev/shm'):\n"
        "    n = 0\n"
        "    try:\n"
        "        with open(d + '/fill', 'wb') as f:\n"
        "            for _ in range(6 * 16):\n"
        "                f.write(b'x' * 65536); f.flush(); n += 65536\n"
        "    except OSError as e:\n"
        "        pass\n"
        "    print(d, n >> 20)\n")


def test_the_private_tmpfs_mounts_share_one_size_budget(lo):
    # Found by attack17: /tmp, /var/tmp and /dev/shm were three tmpfs mounts
    # of --tmp-size each, so a command could hold three times the budget in
    # RAM (by default 3 x 25% of RAM, capped at 3 x 2 GiB: 6 of an 8 GiB
    # laptop's), charged to no process: the OOM killer then picks the host's
    # programs, not the sandbox's. They are now one tmpfs of --tmp-size.
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--tmp-size", "8M", "--", PY, "-c", FILL)
    assert r.returncode == 0, r.stderr
    took = {line.split()[0]: int(line.split()[1]) for line in r.stdout.decode().splitlines()}
    assert took["/tmp"] == 6, took
    assert sum(took.values()) <= 8, took  # the other two share the 2 MiB left
    # Each is still a private, writable, sticky dir of its own: nothing of one
    # shows in another.
    code = ("import os\n"
            "open('/tmp/a', 'w').close(); open('/var/tmp/b', 'w').close(); open('/dev/shm/c', 'w').close()\n"
            "print(sorted(os.listdir('/tmp')), sorted(os.listdir('/var/tmp')), sorted(os.listdir('/dev/shm')),\n"
            "      oct(os.stat('/tmp').st_mode & 0o7777), oct(os.stat('/var/tmp').st_mode & 0o7777),\n"
            "      oct(os.stat('/dev/shm').st_mode & 0o7777))")
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", PY, "-c", code)
    assert r.returncode == 0, r.stderr
    # The target's path may run through /tmp (the tests' homes do): only its
    # first component shows there.
    tmp_entries = [n for n in eval(r.stdout.decode().split("]")[0] + "]") if n != "a"]
    assert len(tmp_entries) <= 1, r.stdout
    assert b"['b'] ['c'] 0o1777 0o1777 0o1777" in r.stdout, r.stdout


def test_max_size_counts_what_the_command_writes_outside_the_target(lo):
    # Found by attack17: --max-size measured the target's upper layer only,
    # so a command over a project wrote on without bound into the home's
    # scratch layer (~/.cache, ~/x: the session's outside/ layers, on the same
    # disk as the state dir): 50 MB under --max-size 5M, exit 0. The watch now
    # counts each scratch layer too.
    home = real_dir("a17-home-")  # not under /tmp, which the sandbox replaces: a real home's scratch layer
    cmd = ("mkdir -p ~/.cache; i=0; while [ $i -lt 50 ]; do head -c 1048576 /dev/zero > ~/.cache/f$i; "
           "i=$((i+1)); sleep 0.05; done; echo finished")
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--session", "out", "--max-size", "5M", "--",
           "/bin/sh", "-c", cmd, env={"HOME": str(home)}, timeout=120)
    assert r.returncode == 125, (r.stdout, r.stderr)
    assert b"finished" not in r.stdout
    assert b"--max-size 5M reached (the session's layers hold " in r.stderr, r.stderr
    outside = lo.session_dir("out") / "outside"
    used = sum(p.stat().st_blocks * 512 for p in outside.rglob("*") if not p.is_symlink())
    assert 5 << 20 < used < 30 << 20, used  # the documented overshoot, as for the target's layer
    assert not any(home.iterdir())  # and nothing of it in the real home
    shutil.rmtree(home)


# Secrets in common places the preset did not name: Ubuntu's default Firefox
# (a snap: its profile is not ~/.mozilla) and Chromium snap, other browsers'
# profiles (cookies, saved passwords), NSS's key store, mail, and the
# credentials files of database clients, Vault, cargo, RubyGems, Terraform,
# rclone, Kaggle, SOPS's age keys, the 1Password CLI and Emacs's authinfo.
MORE_SECRETS = ["snap/firefox/common/.mozilla/firefox/p.default/logins.json",
                "snap/chromium/common/chromium/Default/Cookies", ".config/BraveSoftware/Brave-Browser/Default/Cookies",
                ".config/microsoft-edge/Default/Cookies", ".config/vivaldi/Default/Cookies", ".pki/nssdb/key4.db",
                ".thunderbird/p.default/logins.json", ".pgpass", ".my.cnf", ".vault-token", ".cargo/credentials.toml",
                ".cargo/credentials", ".gem/credentials", ".terraform.d/credentials.tfrc.json",
                ".config/rclone/rclone.conf", ".kaggle/kaggle.json", ".config/sops/age/keys.txt",
                ".config/op/config", ".authinfo", ".authinfo.gpg"]


def test_common_secret_files_are_hidden_by_default(lo):
    # Found by attack17: each of these was readable inside (cat printed it).
    home = real_dir("a17-sec-")
    for i, rel in enumerate(MORE_SECRETS):
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("SECRET-%d\n" % i)
    (home / ".cargo" / "config.toml").write_text("[build]\njobs = 2\n")  # beside a secret: still readable
    (home / "proj").mkdir()
    cmd = "cd ~ && for f in %s .cargo/config.toml; do cat \"$f\" 2>/dev/null; done; echo end" % " ".join(
        "'%s'" % rel for rel in MORE_SECRETS)
    for target in (home, home / "proj"):  # the home itself, and a project with the home as scratch
        r = lo("run", "--target", target, "--on-exit", "discard", "--", "/bin/sh", "-c", cmd,
               env={"HOME": str(home)})
        assert r.returncode == 0, r.stderr
        assert b"SECRET-" not in r.stdout, (target, r.stdout)
        assert r.stdout == b"[build]\njobs = 2\nend\n", r.stdout
    r = lo("run", "--target", home, "--on-exit", "discard", "--no-hide-secrets", "--", "/bin/sh", "-c", cmd,
           env={"HOME": str(home)})
    assert r.stdout.count(b"SECRET-") == len(MORE_SECRETS)  # the control
    shutil.rmtree(home)


def test_the_accounts_home_keeps_its_secrets_hidden_when_home_points_elsewhere(lo):
    # Found by attack17: the preset hung below $HOME only. A caller whose
    # $HOME is a scratch dir (an agent harness's clean HOME, a service,
    # `env HOME=...`) left the account's real home, shown read-only, with its
    # ~/.ssh and ~/.aws readable. The passwd database's home is hidden too now
    # (named here by LAYOVER_TEST_ACCOUNT_HOME: the throwaway uid has no entry).
    account = real_dir("a17-acct-")
    (account / ".ssh").mkdir()
    (account / ".ssh" / "id_ed25519").write_text("ACCOUNT-SSH-KEY\n")
    (account / ".aws").mkdir()
    (account / ".aws" / "credentials").write_text("ACCOUNT-AWS\n")
    (account / "notes.txt").write_text("plain\n")
    scratch_home = real_dir("a17-scratch-")
    cmd = "cat %s/.ssh/id_ed25519 %s/.aws/credentials %s/notes.txt 2>/dev/null; echo end" % ((account,) * 3)
    env = {"HOME": str(scratch_home), "LAYOVER_TEST_ACCOUNT_HOME": str(account)}
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c", cmd, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"plain\nend\n", r.stdout
    assert ("%s/.ssh" % account).encode() in r.stderr, r.stderr  # the start-up line names it
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--no-hide-secrets", "--", "/bin/sh", "-c", cmd,
           env=env)
    assert b"ACCOUNT-SSH-KEY" in r.stdout  # the control
    shutil.rmtree(account)
    shutil.rmtree(scratch_home)


def test_the_command_is_the_oom_killers_first_choice(lo):
    # attack17's open question, decided: with no memory limit by default, a
    # runaway command fills the RAM; the OOM killer then takes it and what it
    # started (oom_score_adj 500, inherited), not the user's browser or the
    # supervisor that keeps the session (the caller's own value is untouched).
    with open("/proc/self/oom_score_adj") as f:
        mine = f.read()
    r = lo("run", "--target", lo.target, "--on-exit", "discard", "--", "/bin/sh", "-c",
           "cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"500\n500\n", r.stdout
    with open("/proc/self/oom_score_adj") as f:
        assert f.read() == mine
