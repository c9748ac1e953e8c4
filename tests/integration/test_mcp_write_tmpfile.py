"""`layover mcp`'s write_file and edit_file write the new content into an
O_TMPFILE file, which has no name until it is complete, then link it to a
temp name and rename it over the path at once (docs/mcp.md): a kill of the
server mid-write leaves no .layover-write-*.tmp in the upper layer, where
the patch would carry it. Where the dir has no O_TMPFILE, the named temp
file of before.

The agent's replace_file is run inside the sandbox, on its real overlay,
with os.write wrapped to list the dir at each write: what another process
would see at that moment, deterministically."""
import json
import os

from mcp_util import client, proj  # noqa: F401 (fixtures)

FILES = os.path.join(os.path.dirname(__file__), "..", "..", "python", "layover", "_mcp_agent_files.py")

# Runs _mcp_agent_files.py's replace_file on README.md; argv[1] "refuse":
# the O_TMPFILE open fails with EOPNOTSUPP, as on a filesystem without it.
HARNESS = r'''
import errno, json, os, sys
ns = {"__name__": "agent_files"}
exec(compile(SRC, "_mcp_agent_files.py", "exec"), ns)
class Fail(Exception):
    pass
ns.update(Fail=Fail, shown=lambda p: p, TARGET=os.getcwd())
refuse, seen = sys.argv[1] == "refuse", []
class Os:
    def __getattr__(self, name):
        return getattr(os, name)
    def open(self, path, flags, *args, **kw):
        if refuse and flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))
        return os.open(path, flags, *args, **kw)
    def write(self, fd, data):
        seen.append(sorted(os.listdir(".")))
        return os.write(fd, data[:1 << 16])  # in pieces: a listing at each
ns["os"] = Os()
ns["replace_file"](os.path.abspath("README.md"), b"new\n" * 50000)
print(json.dumps({"seen": seen, "after": sorted(os.listdir(".")), "size": os.path.getsize("README.md"),
                  "probe": ns["unnamed_temp"](".") is not None}))
'''


def _run(c, how):
    with open(FILES) as f:
        src = f.read()
    assert not c.call("write_file", path="/tmp/h.py", content="SRC = %r\n%s" % (src, HARNESS))["isError"]
    r = c.call("run_command", command="python3 /tmp/h.py %s" % how)
    assert not r["isError"] and r["structuredContent"]["exit_code"] == 0, r
    return json.loads(r["structuredContent"]["stdout"])


def test_mcp_write_names_no_temp_file_while_the_content_is_written(client, proj):
    c = client(session="mcp-tmpfile")
    before = sorted(os.listdir(str(proj)))
    out = _run(c, "use")
    # The overlay has O_TMPFILE (Linux >= 6.6): taken, and no name in the dir at any write.
    assert out["probe"] is True, out["probe"]
    assert len(out["seen"]) > 1
    assert all(names == before for names in out["seen"]), out["seen"]
    assert out["after"] == before and out["size"] == 200000, out
    assert c.close() == 0


def test_mcp_write_without_o_tmpfile_falls_back_to_a_named_temp_file(client, proj):
    c = client(session="mcp-tmpfile-off")
    before = sorted(os.listdir(str(proj)))
    out = _run(c, "refuse")
    # The named temp file is there while the content is written, gone after the rename.
    temps = {n for names in out["seen"] for n in names if n not in before}
    assert len(temps) == 1 and temps.pop().startswith(".layover-write-"), out["seen"]
    assert out["after"] == before and out["size"] == 200000, out
    assert c.close() == 0
