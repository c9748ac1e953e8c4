"""probe"""
from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def test_probe(client, proj):
    c = client()
    assert not c.call("write_file", path="src/app.py", content="v2\n")["isError"]
    out = []
    for paths in (["a\x1b]0;TITLE\x07b"], ["a\nlayover: diff: 'x' matches no change"], ["a\u2028b\u202ec"],
                  ["x" * 200000], ["p%d" % i for i in range(100000)], ["-x"], ["[*]"], ["\\"]):
        r = c.call("diff", paths=paths)
        out.append((repr(paths)[:100], r.get("isError"), repr(text(r))[:600], repr(r.get("structuredContent"))[:600]))
    for name, args in (("read_file", {"path": "a\x1b[31mred\x07\u202e"}), ("list_directory", {"path": "n\x1b]0;T\x07"}),
                       ("edit_file", {"path": "x", "old_string": "", "new_string": 5}),
                       ("search_files", {"pattern": "x", "path": "\x1b[2J"})):
        r = c.call(name, **args)
        out.append((name, r.get("isError"), repr(text(r))[:600]))
    with open("/tmp/a33/probe.txt", "w") as f:
        f.write("\n".join(map(repr, out)))
        f.write("\nSTDERR\n" + c.stderr())
