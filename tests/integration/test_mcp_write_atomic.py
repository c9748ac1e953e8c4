"""`layover mcp`'s write_file and edit_file replace a file whole or not at
all (docs/mcp.md): the new content goes to a file of its own in the same
dir, renamed over the path once all of it is written. Before, the file was
emptied, then written in place, so a write stopped midway (a size limit, a
full disk) left it cut short in the sandbox, the old content gone."""
import json
import os
import subprocess

from conftest import LAYOVER
from mcp_util import client, proj, text  # noqa: F401 (fixtures)

BIG = "x" * (2 << 20)  # past --max-size 1M, and past a 1 MiB /tmp


def _names(state_dir, session):
    """Every name the session's layers hold (its steps and its live upper)."""
    out = set()
    for d, dirs, files in os.walk(str(state_dir / "sessions" / session)):
        out.update(dirs)
        out.update(files)
    return out


def _sh(c, command):
    r = c.call("run_command", command=command)
    assert not r["isError"], r
    return r["structuredContent"]["stdout"]


def test_mcp_write_and_edit_past_the_size_limit_leave_the_old_content_and_no_temp_file(client, proj, state_dir):
    c = client("--max-size", "1M", session="mcp-fsize")
    old = (proj / "README.md").read_text()
    r = c.call("write_file", path="README.md", content=BIG)
    assert r["isError"] and "README.md: File too large" in text(r), r
    assert "1\t# demo" in text(c.call("read_file", path="README.md"))
    # edit_file alike: a file under the limit grown past it by the edit.
    assert not c.call("write_file", path="notes.txt", content="head\n" + "y" * (900 << 10) + "\ntail\n")["isError"]
    r = c.call("edit_file", path="notes.txt", old_string="tail", new_string="z" * (300 << 10))
    assert r["isError"] and "notes.txt: File too large" in text(r), r
    assert _sh(c, "wc -c < notes.txt; tail -n 1 notes.txt") == "%d\ntail\n" % (5 + (900 << 10) + 6)
    # A new file that does not fit is not made at all.
    r = c.call("write_file", path="new/big.txt", content=BIG)
    assert r["isError"] and "File too large" in text(r), r
    entries = {e["path"] for e in c.call("list_directory", depth=2)["structuredContent"]["entries"]}
    assert entries == {"README.md", "data.bin", "notes.txt", "src", "src/app.py", "new"}, entries
    assert c.close() == 0
    # The session holds notes.txt and the new dir, no cut README.md and no temp file in any layer.
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    st = json.loads(subprocess.run([LAYOVER, "status", "mcp-fsize", "--json"], capture_output=True, env=env,
                                   check=True).stdout)
    assert sorted(ch["path"] for ch in st) == ["new", "notes.txt"], st
    assert not [n for n in _names(state_dir, "mcp-fsize") if ".layover" in n or n == "README.md"]
    assert (proj / "README.md").read_text() == old


def test_mcp_write_on_a_full_filesystem_leaves_the_old_content_and_no_temp_file(client, proj, state_dir):
    # The sandbox's /tmp is a tmpfs of --tmp-size: 2 MiB do not fit in it.
    c = client("--tmp-size", "1M", session="mcp-full")
    assert not c.call("write_file", path="/tmp/f.txt", content="old\n")["isError"]
    r = c.call("write_file", path="/tmp/f.txt", content=BIG)
    assert r["isError"] and "/tmp/f.txt: No space left on device" in text(r), r
    assert _sh(c, "cat /tmp/f.txt; ls -A /tmp") == "old\nf.txt\n"
    assert not c.call("write_file", path="/tmp/f.txt", content="new\n")["isError"]  # the space came back
    assert _sh(c, "cat /tmp/f.txt") == "new\n"


def test_mcp_write_keeps_the_mode_of_a_file_and_writes_through_a_symlink(client, proj, state_dir):
    c = client(session="mcp-mode")
    _sh(c, "printf 'old\\n' > run.sh && chmod 750 run.sh && ln -s run.sh link.sh && touch made")
    r = c.call("write_file", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert not r["isError"] and r["structuredContent"]["created"] is False, r
    r = c.call("edit_file", path="link.sh", old_string="hi", new_string="there")
    assert not r["isError"], r
    assert not c.call("write_file", path="fresh.txt", content="f\n")["isError"]
    # The mode kept, the link still a link to the file written; a new file's mode as the shell makes one.
    assert _sh(c, "stat -c '%a %F %N' run.sh link.sh; ./link.sh; stat -c %a made fresh.txt") == \
        "750 regular file 'run.sh'\n777 symbolic link 'link.sh' -> 'run.sh'\nthere\n" + \
        _sh(c, "stat -c %a made") * 2
    assert c.close() == 0
    assert not [n for n in _names(state_dir, "mcp-mode") if ".layover" in n]


def test_mcp_write_keeps_the_xattrs_of_a_file(client, proj, state_dir):
    # Replaced without them, the session's file had lost them: a patch that removes them from the real file.
    os.setxattr(str(proj / "README.md"), "user.tag", b"mine")
    c = client(session="mcp-xattr")
    assert not c.call("write_file", path="README.md", content="# new\n")["isError"]
    assert not c.call("edit_file", path="README.md", old_string="new", new_string="newer")["isError"]
    assert _sh(c, "python3 -c 'import os; print(os.getxattr(\"README.md\", \"user.tag\"))'") == "b'mine'\n"
    assert c.close() == 0
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    r = subprocess.run([LAYOVER, "apply", "mcp-xattr", "--yes"], capture_output=True, env=env)
    assert r.returncode == 0, r.stderr
    assert (proj / "README.md").read_text() == "# newer\n"
    assert os.getxattr(str(proj / "README.md"), "user.tag") == b"mine"


def test_mcp_write_refuses_a_read_only_file_as_before(client, proj, state_dir):
    # A rename over it would succeed (the dir is writable): refused, as writing it in place was.
    c = client(session="mcp-ro")
    _sh(c, "printf 'keep\\n' > ro.txt && chmod 444 ro.txt")
    for call in (dict(name="write_file", content="new\n"), dict(name="edit_file", old_string="keep", new_string="x")):
        name = call.pop("name")
        r = c.call(name, path="ro.txt", **call)
        assert r["isError"] and "ro.txt: Permission denied" in text(r), r
    assert _sh(c, "cat ro.txt; stat -c %a ro.txt") == "keep\n444\n"
    assert c.close() == 0


def test_mcp_write_in_a_dir_it_may_not_write_writes_a_writable_file_in_place(client, proj, state_dir):
    # No temp file can be made beside it: the file is written in place, as before the atomic replace.
    c = client(session="mcp-rodir")
    _sh(c, "mkdir -p locked && printf 'old\\n' > locked/f.txt && chmod 640 locked/f.txt && chmod 555 locked")
    r = c.call("write_file", path="locked/f.txt", content="new\n")
    assert not r["isError"], r
    r = c.call("edit_file", path="locked/f.txt", old_string="new", new_string="newer")
    assert not r["isError"], r
    assert _sh(c, "cat locked/f.txt; stat -c %a locked/f.txt; ls -A locked") == "newer\n640\nf.txt\n"
    # A new file there is still refused.
    r = c.call("write_file", path="locked/g.txt", content="g\n")
    assert r["isError"] and "Permission denied" in text(r), r
    _sh(c, "chmod 755 locked")
    assert c.close() == 0


def test_mcp_write_drops_setuid_and_setgid_as_a_write_in_place_did(client, proj, state_dir):
    # The kernel clears S_ISUID/S_ISGID when a file is written; the replacement copied them back,
    # so new content kept a setuid bit a reviewer saw no change of (attack52).
    c = client(session="mcp-suid")
    _sh(c, "printf 'old\\n' > s.sh && printf 'old\\n' > g.sh && chmod 4755 s.sh && chmod 2775 g.sh")
    assert _sh(c, "stat -c %a s.sh g.sh") == "4755\n2775\n"  # the sandbox lets the agent set them
    assert not c.call("write_file", path="s.sh", content="#!/bin/sh\necho new\n")["isError"]
    assert not c.call("edit_file", path="g.sh", old_string="old", new_string="new")["isError"]
    assert _sh(c, "stat -c %a s.sh g.sh; cat g.sh") == "755\n775\nnew\n"
    # As the shell's own write in place there leaves them.
    assert _sh(c, "printf 'old\\n' > w.sh && chmod 4755 w.sh && echo more >> w.sh && stat -c %a w.sh") == "755\n"
    assert c.close() == 0
