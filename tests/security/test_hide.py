"""Secrets are hidden by default, on every path that reaches them (issue 14).

Each case reads from inside the sandbox, then checks the real files afterwards.
"""
import subprocess

from conftest import LAYOVER, missing_feature, real_dir

READ_ALL = ("cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc ~/.config/gh/hosts.yml 2>/dev/null;"
            "for d in ~/.ssh ~/.aws ~/.config/gh; do ls -A $d; done")
SECRET_WORDS = (b"SSH-PRIVATE-KEY", b"AWS-CREDENTIALS", b"NETRC-PASSWORD", b"GH-TOKEN")


def leaked(out):
    return [w for w in SECRET_WORDS if w in out]


def test_default_run_over_home_reads_no_secret(sh):
    before = sh.secrets()
    r = sh.run(READ_ALL, on_exit="discard")
    assert r.returncode == 0, r.stderr
    assert leaked(r.stdout) == []
    assert r.stdout.strip() == b"", r.stdout  # hidden dirs are empty
    assert sh.secrets() == before


def test_no_hide_secrets_shows_them(sh):
    # The same read with the preset off: proves the hiding is what hid them.
    r = sh.run(READ_ALL, "--no-hide-secrets", on_exit="discard")
    assert leaked(r.stdout) == list(SECRET_WORDS)


def test_target_below_home_hides_secrets_on_the_read_only_rest(sh):
    r = sh.run(READ_ALL, target=sh.project, on_exit="discard")
    assert r.returncode == 0, r.stderr
    assert leaked(r.stdout) == []
    # The rest of the home stays readable.
    r = sh.run("cat ~/.config/editor.conf", target=sh.project, on_exit="discard")
    assert r.stdout == b"tabs=4\n"


def test_proc_self_root_path_is_hidden_too(sh):
    cmd = "cat /proc/self/root%s/.ssh/id_ed25519 /proc/1/root%s/.netrc; ls -A /proc/self/cwd/.aws" % (
        sh.home, sh.home)
    r = sh.run(cmd, target=sh.project, on_exit="discard", cwd=sh.home)
    assert leaked(r.stdout) == []


def test_symlinked_home_hides_the_real_dirs(sh):
    link = sh.root / "home-link"
    link.symlink_to(sh.home)
    env = {"HOME": str(link)}
    r = sh.lo("run", "--target", link / "project", "--on-exit", "discard", "--", "/bin/sh", "-c",
              "cat %s/.ssh/id_ed25519 %s/.ssh/id_ed25519 %s/.netrc" % (link, sh.home, link), env=env)
    assert leaked(r.stdout) == []
    assert b"hiding" in r.stderr


def test_a_bind_mount_alias_of_the_home_is_hidden_too(sh):
    # A second path to the same dirs: bind the home elsewhere (in a user+mount
    # namespace of our own), then run layover there, nested.
    alias = sh.root / "alias"
    alias.mkdir()
    script = ('mount --bind "$1" "$2" && cd "$2" && exec "$3" run --target "$2/project" --on-exit discard '
              '-- /bin/sh -c "cat $2/.ssh/id_ed25519 $1/.aws/credentials; echo done"')
    def nested(*extra):
        return subprocess.run(["unshare", "-rm", "/bin/sh", "-c", script.replace("run ", "run %s " % " ".join(extra)),
                               "sh", str(sh.home), str(alias), LAYOVER],
                              capture_output=True, env=sh.lo.env, stdin=subprocess.DEVNULL, timeout=60)
    r = nested()
    assert b"done" in r.stdout, r.stderr
    assert leaked(r.stdout) == []
    # Control: the same reads with the preset off do reach both secrets.
    r = nested("--no-hide-secrets")
    assert leaked(r.stdout) == [b"SSH-PRIVATE-KEY", b"AWS-CREDENTIALS"], r.stderr


def test_hidden_file_reads_empty_and_cannot_be_written(sh):
    r = sh.run("wc -c < ~/.netrc; echo pwned > ~/.netrc; echo rc=$?; rm ~/.netrc; echo rm=$?", on_exit="discard")
    assert r.stdout.startswith(b"0\n"), r.stdout
    assert b"rc=0" not in r.stdout and b"rm=0" not in r.stdout
    assert (sh.home / ".netrc").read_bytes() == b"machine host password NETRC-PASSWORD\n"


def test_user_hide_covers_a_dir_and_a_file_outside_the_target(sh):
    (sh.home / "private").mkdir()
    (sh.home / "private" / "diary").write_text("DIARY\n")
    (sh.home / "notes.key").write_text("NOTEKEY\n")
    r = sh.run("cat ~/private/diary ~/notes.key; ls -A ~/private", "--hide", sh.home / "private",
               "--hide", sh.home / "notes.key", target=sh.project, on_exit="discard")
    assert b"DIARY" not in r.stdout and b"NOTEKEY" not in r.stdout
    r = sh.run("cat ~/private/diary ~/notes.key", target=sh.project, on_exit="discard")
    assert b"DIARY" in r.stdout and b"NOTEKEY" in r.stdout  # only when asked


def test_hide_of_a_missing_path_creates_nothing(sh):
    missing = sh.home / "no-such-dir"
    r = sh.run("ls -d ~/no-such-dir; echo rc=$?", "--hide", missing, target=sh.project, on_exit="discard")
    assert b"rc=0" not in r.stdout
    assert not missing.exists()


def test_secret_created_inside_is_never_captured_or_applied(sh):
    # ~/.kube does not exist: nothing is mounted, but what the agent writes
    # there must never reach the real home.
    r = sh.run("mkdir -p ~/.kube && echo planted > ~/.kube/config && echo ok > ~/ok.txt", session="plant")
    assert r.returncode == 0, r.stderr
    st = sh.lo("status", "plant", "--json", check=True)
    assert b".kube" not in st.stdout and b"ok.txt" in st.stdout
    # Not silently: the text status says what stayed out.
    st = sh.lo("status", "plant", check=True)
    assert st.stdout.endswith(b"not captured (hidden paths): .kube\n"), st.stdout
    sh.lo("apply", "plant", "--yes", check=True)
    assert (sh.home / "ok.txt").read_text() == "ok\n"
    assert not (sh.home / ".kube").exists()


def test_rm_rf_of_a_parent_never_deletes_the_hidden_secret_at_apply(sh):
    r = sh.run("rm -rf ~/.config; ls -A ~/.config", session="wipe")
    assert b"editor.conf" not in r.stdout
    sh.lo("apply", "wipe", "--yes", check=True)
    assert (sh.home / ".config" / "gh" / "hosts.yml").read_text() == "GH-TOKEN\n"
    assert not (sh.home / ".config" / "editor.conf").exists()  # the rest was really deleted


def test_startup_line_names_the_hidden_paths_and_quiet_drops_it(sh):
    r = sh.run("true", on_exit="discard")
    line = [l for l in r.stderr.decode().splitlines() if "hiding" in l]
    assert len(line) == 1, r.stderr
    assert "~/.ssh" in line[0] and "--no-hide-secrets" in line[0]
    r = sh.run("true", "--quiet", on_exit="discard")
    assert b"hiding" not in r.stderr and b"not passing" not in r.stderr


def test_a_hide_path_gets_its_own_startup_line_not_the_secrets_one(sh):
    # --no-hide-secrets does not show a --hide path: the secrets line must not
    # claim it, and the path is named as typed under the home (~/...).
    (sh.home / "private").mkdir()
    (sh.home / "private" / "x").write_text("PRIVATE\n")
    r = sh.run("cat private/x", "--hide", "private", on_exit="discard")
    lines = r.stderr.decode().splitlines()
    assert "layover: hiding 1 path named by --hide (~/private)" in lines, lines
    secrets = [l for l in lines if "secret path" in l]
    assert len(secrets) == 1 and "private" not in secrets[0] and "--no-hide-secrets" in secrets[0], lines
    assert b"PRIVATE" not in r.stdout
    assert (sh.home / "private" / "x").read_text() == "PRIVATE\n"


def test_resumed_session_keeps_its_hidden_paths_out_of_capture(sh):
    sh.run("mkdir -p ~/.kube && echo one > ~/.kube/config", session="again")
    # Resumed with the preset off: what was written while hidden stays out.
    sh.run("echo two > ~/two.txt", "--no-hide-secrets", session="again")
    st = sh.lo("status", "again", "--json", check=True)
    assert b"two.txt" in st.stdout and b".kube" not in st.stdout


def test_target_inside_a_hidden_dir_is_not_hidden_from_itself(sh):
    # The user chose the target: it stays usable, and the note says why.
    r = sh.run("cat hosts.yml", target=sh.home / ".config" / "gh", on_exit="discard")
    assert r.stdout == b"GH-TOKEN\n"
    assert b"not hiding ~/.config/gh" in r.stderr


def test_hidden_paths_never_reach_a_saved_patch(sh, tmp_path):
    sh.run("mkdir -p ~/.gnupg && echo k > ~/.gnupg/key && echo y > ~/y.txt", session="saved")
    out = tmp_path / "p.tar.zst"
    sh.lo("save", "saved", "-o", out, check=True)
    listing = subprocess.run(["bsdtar", "-tf", str(out)], capture_output=True, check=True).stdout
    assert b"y.txt" in listing and b".gnupg" not in listing


def test_hidden_dirs_are_read_only_inside(sh):
    r = sh.run("touch ~/.ssh/authorized_keys; echo rc=$?", session="ro")
    assert b"rc=0" not in r.stdout
    assert not (sh.home / ".ssh" / "authorized_keys").exists()
    st = sh.lo("status", "ro", "--json", check=True)
    assert b"authorized_keys" not in st.stdout


def test_hide_from_a_relative_path_resolves_against_the_callers_cwd(sh):
    (sh.home / "rel").mkdir()
    (sh.home / "rel" / "s").write_text("RELSECRET\n")
    r = sh.lo("run", "--target", sh.project, "--on-exit", "discard", "--hide", "rel", "--", "/bin/sh", "-c",
              "cat %s/rel/s" % sh.home, cwd=sh.home)
    assert b"RELSECRET" not in r.stdout


def _late_keyring(sh, cmd, session):
    # The keyring dir is absent at the run (nothing is mounted there), and
    # appears in the real home before the session is applied.
    (sh.home / ".local" / "share" / "app").mkdir(parents=True)
    (sh.home / ".local" / "share" / "app" / "data").write_text("old\n")
    r = sh.run(cmd, session=session)
    assert r.returncode == 0, r.stderr
    keyring = sh.home / ".local" / "share" / "keyrings"
    keyring.mkdir()
    (keyring / "login.keyring").write_text("KEYRING-SECRET\n")
    return keyring


def test_a_secret_made_after_the_run_below_a_remade_dir_is_never_listed_or_deleted(sh, tmp_path):
    keyring = _late_keyring(sh, "rm -rf ~/.local && mkdir ~/.local && echo new > ~/.local/new", "remade")
    st = sh.lo("status", "remade", "--json", check=True)
    assert b"keyrings" not in st.stdout and b'".local/share/app"' in st.stdout, st.stdout
    out = tmp_path / "p.tar.zst"
    sh.lo("save", "remade", "-o", out, check=True)
    listing = subprocess.run(["bsdtar", "-tf", str(out)], capture_output=True, check=True).stdout
    assert b"keyrings" not in listing, listing
    sh.lo("apply", "remade", "--yes", "--force", check=True)
    assert (keyring / "login.keyring").read_text() == "KEYRING-SECRET\n"
    assert (sh.home / ".local" / "new").read_text() == "new\n"
    assert not (sh.home / ".local" / "share" / "app").exists()


def test_a_secret_made_after_the_run_below_a_removed_dir_is_never_listed_or_deleted(sh):
    keyring = _late_keyring(sh, "rm -rf ~/.local", "removed")
    st = sh.lo("status", "removed", "--json", check=True)
    assert b"keyrings" not in st.stdout, st.stdout
    sh.lo("apply", "removed", "--yes", "--force", check=True)
    assert (keyring / "login.keyring").read_text() == "KEYRING-SECRET\n"
    assert not (sh.home / ".local" / "share" / "app").exists()


def test_a_secret_made_after_the_run_below_a_dir_replaced_by_a_file_is_never_deleted(sh):
    keyring = _late_keyring(sh, "rm -rf ~/.local && echo file > ~/.local && echo y > ~/y.txt", "typed")
    st = sh.lo("status", "typed", "--json", check=True)
    assert b"keyrings" not in st.stdout, st.stdout
    assert b'".local"' in st.stdout and b'"captured": false' in st.stdout, st.stdout  # reported, not stored
    r = sh.lo("apply", "typed", "--yes", "--force")
    assert r.returncode == 0, r.stderr
    assert (keyring / "login.keyring").read_text() == "KEYRING-SECRET\n", r.stderr
    assert (sh.home / "y.txt").read_text() == "y\n"


CONNECT = ("import socket,sys\n"
           "for p in sys.argv[1:]:\n"
           "    s = socket.socket(socket.AF_UNIX)\n"
           "    try:\n"
           "        s.connect(p); print('CONNECTED', s.recv(16).decode())\n"
           "    except OSError as e:\n"
           "        print('refused', e.errno)\n")


def test_daemon_sockets_on_the_read_only_home_are_hidden(sh):
    # With --home ro the home outside the target is the real tree, read-only:
    # a unix socket there still connects (a read-only mount does not stop
    # connect()), so a Docker Desktop socket or an ssh agent's would act for
    # the agent. The preset covers their dirs, and a socket file itself.
    import socket
    import threading
    docker = sh.home / ".docker" / "run" / "docker.sock"
    agent = sh.home / ".bitwarden-ssh-agent.sock"
    docker.parent.mkdir(parents=True)
    servers = []
    for path in (docker, agent):
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.listen(4)
        s.settimeout(20)
        servers.append(s)

    def serve(s):
        try:
            while True:
                c, _ = s.accept()
                c.sendall(b"HOST-DAEMON")
                c.close()
        except OSError:
            pass
    for s in servers:
        threading.Thread(target=serve, args=(s,), daemon=True).start()
    try:
        script = "python3 -c \"$0\" %s %s" % (docker, agent)
        r = sh.lo("run", "--target", str(sh.project), "--on-exit", "discard", "--home", "ro", "--", "/bin/sh", "-c",
                  script, CONNECT, cwd=str(sh.project))
        assert r.returncode == 0, r.stderr
        assert b"CONNECTED" not in r.stdout and r.stdout.count(b"refused") == 2, r.stdout
        # The control: without the preset both connect.
        r = sh.lo("run", "--target", str(sh.project), "--on-exit", "discard", "--home", "ro", "--no-hide-secrets",
                  "--", "/bin/sh", "-c", script, CONNECT, cwd=str(sh.project))
        assert r.stdout.count(b"CONNECTED HOST-DAEMON") == 2, (r.stdout, r.stderr)
    finally:
        for s in servers:
            s.close()


def test_an_undo_store_below_the_target_is_hidden_from_a_later_sandbox_above_it(sh):
    # Found by attack14 (27 Nov): with the state dir on another filesystem,
    # apply keeps its undo store in the tree (p2/.layover-undo/ID, holding
    # the .env it deleted); a sandbox over the home read it. The state dir
    # lists such stores (helper/store/records/undo_trees.h) and the hide plan covers them.
    import os
    import tempfile
    if os.stat("/dev/shm").st_dev == os.stat(str(sh.home)).st_dev:
        missing_feature("a state dir on another filesystem than the home (/dev/shm is on the same one)")
    other = tempfile.mkdtemp(prefix="lo-state-", dir="/dev/shm")
    try:
        state = os.path.join(other, "state")
        os.mkdir(state, 0o700)
        sh.lo.env["LAYOVER_STATE_DIR"] = state
        p2 = sh.home / "p2"
        p2.mkdir()
        (p2 / ".env").write_text("SECRET-IN-STORE\n")
        r = sh.run("rm .env", target=p2, session="d1", cwd=p2)
        assert r.returncode == 0, r.stderr
        sh.lo("apply", "d1", "--yes", check=True)
        stored = [f for f in (p2 / ".layover-undo").rglob("*") if f.is_file() and b"SECRET" in f.read_bytes()]
        assert stored, "the undo store in the tree holds the deleted .env"
        r = sh.run("cat ~/p2/.layover-undo/*/* ~/p2/.layover-undo/*/*/* 2>/dev/null; ls -A ~/p2/.layover-undo",
                   on_exit="discard")
        assert b"SECRET-IN-STORE" not in r.stdout and r.stdout == b"", r.stdout
        assert stored[0].read_text() == "SECRET-IN-STORE\n"
        # And from a sandbox over a sibling project: the home is its scratch
        # layer, which shows ~/p2 (review13: read there in the clear).
        r = sh.run("cat ~/p2/.layover-undo/*/* ~/p2/.layover-undo/*/*/* 2>/dev/null; ls -A ~/p2/.layover-undo",
                   on_exit="discard", target=sh.project)
        assert b"SECRET-IN-STORE" not in r.stdout and r.stdout == b"", r.stdout
    finally:
        import subprocess as _sp
        _sp.run(["rm", "-rf", other])
