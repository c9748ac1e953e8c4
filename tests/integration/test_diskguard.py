"""--min-free (the diskguard pass): the free space a run leaves on the state
dir's filesystem, on by default. A runaway writer is stopped as --max-size
stops it (session kept, exit 125); below the floor already, run refuses to
start. State dir and target on a real filesystem under /home."""
import json
import re

import pytest

from conftest import fs_space

# What the floors' refusals tell to do (helper/sandbox/limits/disk_floor.cc): a discarded session stays in the trash.
FREE_FIX = ("('layover discard NAME --now' deletes a session at once, one in the trash too; "
            "'layover gc --trash' empties the trash)")

MIB = 1 << 20
# 200 MiB in 1 MiB files, a marker first; "finished" only if nothing stopped it.
WRITER = ("echo before > before.txt; i=0; while [ $i -lt 200 ]; do head -c 1048576 /dev/zero > f$i || exit 3; "
          "i=$((i+1)); done; echo finished")


def meta(lo, name):
    return json.loads((lo.session_dir(name) / "meta.json").read_text())


def test_a_writer_past_the_floor_is_stopped_and_its_session_kept(disk_lo):
    _, avail = fs_space(disk_lo.state)
    floor = avail - 64 * MIB
    r = disk_lo.run(WRITER, "--min-free", str(floor), session="runaway", timeout=300)
    err = r.stderr.decode()
    assert r.returncode == 125, err
    assert b"finished" not in r.stdout
    line = [ln for ln in err.splitlines() if "--min-free" in ln]
    assert len(line) == 1, err
    m = re.fullmatch(r"layover: --min-free ([0-9.]+[KMGT]) reached \(([0-9.]+[BKMGT]) free on the filesystem of "
                     r"(.+), the state dir\): sandbox stopped; free space there and resume the session, or lower the "
                     r"floor with --min-free \(e\.g\. 1G, or none\)", line[0])
    assert m, line
    assert m.group(3) == str(disk_lo.state), line
    assert "session 'runaway' kept" in err, err
    assert meta(disk_lo, "runaway")["stopped"] == line[0][len("layover: "):]
    assert meta(disk_lo, "runaway")["limits"]["min_free"] == floor
    # What it wrote before the stop is in the session, not in the real tree.
    upper = disk_lo.upper("runaway")
    assert (upper / "before.txt").read_text() == "before\n"
    written = sorted(upper.glob("f*"))
    assert 0 < len(written) < 200, len(written)
    assert not (disk_lo.target / "before.txt").exists()
    r = disk_lo("status", "runaway")
    assert r.returncode == 0 and b"before.txt" in r.stdout and b"f0" in r.stdout, r.stdout
    r = disk_lo("discard", "runaway", "--now")
    assert r.returncode == 0, r.stderr


def test_a_floor_above_the_free_space_refuses_to_start(disk_lo):
    _, avail = fs_space(disk_lo.state)
    r = disk_lo.run("echo ran > ran.txt", "--min-free", str(avail + (1 << 30)), session="full")
    err = r.stderr.decode()
    assert r.returncode == 125, err
    assert err.count("\n") == 1, err
    assert re.fullmatch(r"layover: only [0-9.]+[BKMGT] free on the filesystem of %s \(the state dir, which holds "
                        r"the sessions\), below --min-free [0-9.]+[KMGT]; free space there %s, or pass a smaller "
                        r"--min-free \(e\.g\. 1G\) or --min-free none\n"
                        % (re.escape(str(disk_lo.state)), re.escape(FREE_FIX)), err), err
    assert not disk_lo.session_dir("full").exists()
    assert not (disk_lo.target / "ran.txt").exists()
    # A percentage above the free share is refused alike, and names both.
    size, avail = fs_space(disk_lo.state)
    pct = min(50, avail * 100 // size + 2)
    if pct * (size // 100) > avail:
        r = disk_lo.run("true", "--min-free", "%d%%" % pct)
        assert r.returncode == 125 and ("below --min-free %d%% (" % pct).encode() in r.stderr, r.stderr


def test_min_free_none_lets_the_write_finish(disk_lo):
    r = disk_lo.run(WRITER, "--min-free", "none", session="free", timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"finished\n"
    assert len(list(disk_lo.upper("free").glob("f*"))) == 200
    assert (disk_lo.upper("free") / "f199").stat().st_size == MIB
    assert meta(disk_lo, "free")["limits"]["min_free"] == 0
    assert disk_lo("discard", "free", "--now").returncode == 0


def test_the_default_floor_is_on_without_a_flag(disk_lo):
    r = disk_lo.run("echo x > x.txt", session="plain")
    assert r.returncode == 0, r.stderr
    size, _ = fs_space(disk_lo.state)
    # 5% of the filesystem, at least 256M, at most 1G, never over a quarter of it.
    expected = min(max(size // 20, 256 * MIB), 1 << 30, size // 4)
    assert meta(disk_lo, "plain")["limits"]["min_free"] == expected
    # layover config shows the default too.
    r = disk_lo("config", "run")
    assert r.returncode == 0, r.stderr
    shown = rb"min-free: 5% of the state dir's filesystem, 256M-1G; and 5% of its inodes, 10000-1000000 +# default"
    assert re.search(shown, r.stdout), r.stdout


@pytest.mark.parametrize("value", ["10", "1k", "60%", "0%", "lots", "-1G", "1.5G", "", "5%%"])
def test_bad_min_free_values_are_usage_errors(disk_lo, value):
    r = disk_lo("run", "--target", disk_lo.target, "--min-free=" + value, "--", "true")
    # run's own usage errors exit 125 (docs/cli.md): 2 could be the command's.
    assert r.returncode == 125, r.stderr
    assert r.stderr == ("layover: run: bad --min-free '%s'; use e.g. 1G or 2%% (at least 1M, at most 50%%), or none; "
                        "see 'layover run --help'\n" % value).encode(), r.stderr
    assert not (disk_lo.state / "sessions").exists() or not any((disk_lo.state / "sessions").iterdir())


def test_the_config_file_sets_the_floor(disk_lo):
    conf = disk_lo.state.parent / "xdg-config" / "layover"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "config.toml").write_text('min-free = "lots"\n')
    r = disk_lo.run("true")
    assert r.returncode == 125 and b"config.toml:1: bad --min-free 'lots'" in r.stderr, r.stderr
    (conf / "config.toml").write_text('[run]\nmin-free = "none"\n')
    r = disk_lo.run("true", "--keep-empty", session="conf")
    assert r.returncode == 0, r.stderr
    assert meta(disk_lo, "conf")["limits"]["min_free"] == 0


def test_python_and_mcp_pass_the_floor_on(disk_lo):
    from layover import Sandbox, SandboxError
    from layover._mcp_options import Options
    assert Options(["--target", str(disk_lo.target), "--min-free", "none"]).run_args == ["--min-free", "none"]
    with pytest.raises(ValueError) as e:
        Sandbox(disk_lo.target, state_dir=disk_lo.state, helper_env=disk_lo.env, min_free="lots")
    assert str(e.value) == "layover: bad min_free='lots'; use e.g. 1G or 2% (at least 1M, at most 50%), or none"
    _, avail = fs_space(disk_lo.state)
    with pytest.raises(SandboxError) as e:
        Sandbox(disk_lo.target, state_dir=disk_lo.state, helper_env=disk_lo.env, min_free=str(avail + (1 << 30)))
    assert "free on the filesystem of %s" % disk_lo.state in str(e.value), str(e.value)
    with Sandbox(disk_lo.target, state_dir=disk_lo.state, helper_env=disk_lo.env, on_exit="discard", min_free="none") as sb:
        assert sb.run("print(6 * 7)").stdout == "42\n"
