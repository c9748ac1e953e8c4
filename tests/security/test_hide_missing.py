"""A hidden path missing when the run starts stays missing inside while it
runs, even once it is made on the host (`aws configure` in another terminal
during a long agent session): overlay/mask.h. Each case makes the secret on
the real filesystem while the command waits, then reads from inside.
"""
import json
import os
import subprocess
import time

from conftest import LAYOVER

WAIT_GO = 'echo up > "$SYNC/up"; while [ ! -e "$SYNC/go" ]; do sleep 0.05; done; '


def _during_run(sh, cmd, make, *extra, target=None, session=None, between=None, pre=""):
    """Run `pre`, then `cmd` in the sandbox: once it is up, make() runs on the
    host (and between() while the command still waits) before it goes on."""
    sync = sh.root / "sync"
    sync.mkdir(exist_ok=True)
    for f in ("up", "go"):
        if (sync / f).exists():
            (sync / f).unlink()
    args = ["run", "--target", target or sh.home, "--on-exit", "keep", "--keep-empty", "--cwd", "/",
            "--rw", sync, "--env", "SYNC=%s" % sync]
    if session:
        args += ["--session", session]
    args += list(extra) + ["--", "/bin/sh", "-c", pre + WAIT_GO + cmd + "; true"]
    p = subprocess.Popen([LAYOVER, *map(str, args)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=sh.lo.env, cwd=str(sh.root))
    try:
        deadline = time.monotonic() + 30
        while not (sync / "up").exists():
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "the sandbox never started"
            time.sleep(0.02)
        make()
        if between:
            between()
        (sync / "go").write_text("")
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    return out


def test_a_secret_dir_made_on_the_host_during_the_run_stays_missing_inside(sh):
    kube = sh.home / ".kube"

    def make():
        kube.mkdir()
        (kube / "config").write_text("KUBE-TOKEN\n")

    read = "cat ~/.kube/config; ls -A ~; ls -d ~/.kube || echo absent"
    out = _during_run(sh, read, make)
    assert b"KUBE-TOKEN" not in out and b".kube" not in out.split(), out
    assert out.endswith(b"absent\n"), out
    # The control: without the preset the same late file is read, so the
    # mask (not the timing) is what kept it out.
    (kube / "config").unlink()
    kube.rmdir()
    out = _during_run(sh, "cat ~/.kube/config", make, "--no-hide-secrets")
    assert out == b"KUBE-TOKEN\n", out


def test_a_secret_below_a_missing_dir_stays_missing_with_that_dir(sh):
    # ~/.docker does not exist: its config.json appears with the dir.
    docker = sh.home / ".docker"

    def make():
        docker.mkdir()
        (docker / "config.json").write_text('{"auths": "DOCKER-AUTH"}\n')

    out = _during_run(sh, "cat ~/.docker/config.json; ls -A ~/.docker; ls -A ~ | grep -c docker", make)
    assert b"DOCKER-AUTH" not in out and out.endswith(b"0\n"), out
    assert (docker / "config.json").read_text() == '{"auths": "DOCKER-AUTH"}\n'


def test_the_home_outside_the_target_keeps_it_missing_too(sh):
    # The target is a project: the home is a scratch overlay of its own.
    def make():
        (sh.home / ".kube").mkdir()
        (sh.home / ".kube" / "config").write_text("KUBE-TOKEN\n")

    out = _during_run(sh, "cat ~/.kube/config; ls -A ~ | grep -c kube", make, target=sh.project)
    assert b"KUBE-TOKEN" not in out and out.endswith(b"0\n"), out


def test_a_hide_path_made_during_the_run_stays_missing(sh):
    env = sh.project / ".env"
    out = _during_run(sh, "cat ~/project/.env; ls -A ~/project", lambda: env.write_text("API=SECRET-ENV\n"),
                      "--hide", env, target=sh.project)
    assert b"SECRET-ENV" not in out and b".env" not in out, out
    assert out.endswith(b"main.py\n"), out


def test_what_the_command_makes_there_is_its_own_and_never_mixes_with_the_hosts(sh):
    def make():
        (sh.home / ".kube").mkdir()
        (sh.home / ".kube" / "config").write_text("KUBE-TOKEN\n")

    cmd = "mkdir ~/.kube && echo mine > ~/.kube/own && cat ~/.kube/own ~/.kube/config; ls -A ~/.kube"
    out = _during_run(sh, cmd, make, session="own")
    assert out.startswith(b"mine\n") and b"KUBE-TOKEN" not in out and out.endswith(b"own\n"), out
    # Never captured (a hidden path), and the host's file is untouched by an apply.
    st = sh.lo("status", "own", "--json", check=True)
    assert b".kube" not in st.stdout, st.stdout
    sh.lo("apply", "own", "--yes", check=True)
    assert (sh.home / ".kube" / "config").read_text() == "KUBE-TOKEN\n"
    assert not (sh.home / ".kube" / "own").exists()


def test_the_dirs_above_a_masked_path_look_as_the_real_ones(sh):
    # ~/.config exists (gh is there), ~/.config/gcloud does not: the mask's
    # ~/.config stands where no layer has one; it must look like the real one.
    cfg = sh.home / ".config"
    os.chmod(cfg, 0o750)
    os.utime(cfg, (1600000000, 1600000000))
    out = _during_run(sh, "stat -c '%a %Y' ~/.config; ls -A ~/.config | sort | tr '\\n' ' '", lambda: None)
    assert out == b"750 1600000000\neditor.conf gh ", out
    # And nothing of the mask reaches the session, nor the real tree.
    st = json.loads(sh.lo("status", "--json", check=True).stdout)
    assert st == [], st
    assert sorted(os.listdir(cfg)) == ["editor.conf", "gh"]


def test_a_symlinked_config_dir_is_masked_where_it_leads(sh):
    # ~/.config -> dotfiles/config: gcloud would appear at the link's target.
    dot = sh.home / "dotfiles"
    dot.mkdir()
    (sh.home / ".config").rename(dot / "config")
    (sh.home / ".config").symlink_to("dotfiles/config")

    def make():
        (dot / "config" / "gcloud").mkdir()
        (dot / "config" / "gcloud" / "credentials.db").write_text("GCLOUD-TOKEN\n")

    out = _during_run(sh, "cat ~/.config/gcloud/credentials.db ~/dotfiles/config/gcloud/credentials.db", make)
    assert b"GCLOUD-TOKEN" not in out, out


def test_a_checkpoint_while_it_runs_keeps_it_missing(sh):
    def make():
        (sh.home / ".kube").mkdir()
        (sh.home / ".kube" / "config").write_text("KUBE-TOKEN\n")

    def checkpoint():
        r = sh.lo("checkpoint", "live", "-m", "mid", cwd=sh.root)
        assert r.returncode == 0 and b"step 1" in r.stdout, r.stderr

    out = _during_run(sh, "cat ~/.kube/config; ls -A ~ | grep -c kube", make, session="live", between=checkpoint,
                      pre="echo x > ~/before.txt; ")
    assert b"KUBE-TOKEN" not in out and out.endswith(b"0\n"), out


def test_a_read_only_home_keeps_it_missing_too(sh):
    # --home ro: the home outside the target is the real tree, read-only; with
    # a hidden path missing below it, a read-only overlay of its mask over it.
    def make():
        (sh.home / ".kube").mkdir()
        (sh.home / ".kube" / "config").write_text("KUBE-TOKEN\n")

    cmd = ("cat ~/.kube/config; ls -A ~ | grep -c kube; cat ~/.config/editor.conf; "
           "touch ~/new 2>/dev/null && echo WROTE")
    out = _during_run(sh, cmd, make, "--home", "ro", target=sh.project)
    assert b"KUBE-TOKEN" not in out and out.endswith(b"0\ntabs=4\n"), out
    assert not (sh.home / "new").exists()


def test_a_dangling_symlinked_secret_is_masked_where_it_leads(sh):
    # ~/.kube -> vault/kube, a dir not made yet (a dotfiles repo cloned, a
    # volume mounted later): what appears there is the secret.
    (sh.home / ".kube").symlink_to("vault/kube")

    def make():
        (sh.home / "vault" / "kube").mkdir(parents=True)
        (sh.home / "vault" / "kube" / "config").write_text("KUBE-TOKEN\n")

    out = _during_run(sh, "cat ~/.kube/config ~/vault/kube/config", make)
    assert b"KUBE-TOKEN" not in out, out


def test_a_secret_below_a_dangling_symlinked_parent_is_masked_where_it_leads(sh):
    # ~/.config -> dotfiles/config, dotfiles not cloned yet.
    import shutil
    shutil.rmtree(sh.home / ".config")
    (sh.home / ".config").symlink_to("dotfiles/config")

    def make():
        (sh.home / "dotfiles" / "config" / "gh").mkdir(parents=True)
        (sh.home / "dotfiles" / "config" / "gh" / "hosts.yml").write_text("GH-TOKEN\n")

    out = _during_run(sh, "cat ~/.config/gh/hosts.yml ~/dotfiles/config/gh/hosts.yml", make)
    assert b"GH-TOKEN" not in out, out


def test_a_masked_dirs_user_xattrs_are_the_real_ones_and_an_apply_keeps_them(sh):
    # ~/.config holds gh but not gcloud: the mask's ~/.config stands in for
    # the real one. A file the command writes there copies that dir up; it
    # must not lose the real dir's user.* xattrs (status 'm .config/
    # (xattrs)', and the apply removed them from the real dir).
    cfg = sh.home / ".config"
    os.setxattr(cfg, "user.tag", b"keep")
    out = _during_run(sh, "echo hi > ~/.config/newfile; getfattr -n user.tag --only-values ~/.config", lambda: None,
                      session="xa")
    assert out == b"keep", out
    st = json.loads(sh.lo("status", "xa", "--json", check=True).stdout)
    assert [c["path"] for c in st] == [".config/newfile"], st
    sh.lo("apply", "xa", "--yes", check=True)
    assert os.getxattr(cfg, "user.tag") == b"keep"
    assert (cfg / "newfile").read_text() == "hi\n"


def test_with_a_mask_the_real_files_stay_on_the_dirs_device_with_their_inode_numbers(sh):
    # The mask is a tmpfs: the layers are no longer one filesystem. Without
    # xino the command saw each real file on a device apart from its dirs
    # (du -x, find -xdev, rsync -x left them out) and the dirs with made-up
    # inode numbers.
    sub = sh.project
    f = sub / "main.py"
    out = _during_run(sh, "stat -c '%%d %%i' %s %s" % (sub, f), lambda: None)
    (d_dev, d_ino), (f_dev, f_ino) = [line.split() for line in out.decode().splitlines()]
    assert d_dev == f_dev, out
    assert int(f_ino) == os.stat(f).st_ino and int(d_ino) == os.stat(sub).st_ino, out


def test_what_the_host_makes_in_a_masked_dir_the_command_also_made_is_never_deleted_unseen(sh):
    # ~/.docker is missing (the mask's whiteout for ~/.docker/config.json):
    # `docker login` on the host makes it, and contexts/ beside the secret,
    # while the command makes its own ~/.docker/buildx (an opaque dir, over
    # the mask). The command never saw contexts/: status listed it deleted
    # and apply --yes deleted it (review13). Now a stale deletion: a conflict.
    docker = sh.home / ".docker"

    def make():
        (docker / "contexts").mkdir(parents=True)
        (docker / "contexts" / "meta.json").write_text("HOST\n")
        (docker / "config.json").write_text("AUTH\n")

    out = _during_run(sh, "mkdir -p ~/.docker/buildx && echo x > ~/.docker/buildx/f; ls -A ~/.docker", make,
                      session="dk")
    assert out == b"buildx\n", out
    r = sh.lo("apply", "dk", "--yes")
    assert r.returncode != 0 and b"stale" in r.stderr, r.stderr
    assert (docker / "contexts" / "meta.json").read_text() == "HOST\n"
    assert (docker / "config.json").read_text() == "AUTH\n"
    # Left out, the rest applies and the host's entries stay.
    sh.lo("apply", "dk", "--yes", "--exclude", ".docker/contexts", check=True)
    assert (docker / "buildx" / "f").read_text() == "x\n"
    assert (docker / "contexts" / "meta.json").read_text() == "HOST\n"
