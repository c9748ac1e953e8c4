"""A hostile MCP client of `layover mcp`, hostile code inside the sandbox,
and the changes merged before it (attack36). Each test fails before its fix."""
from mcp_util import client, proj, text  # noqa: F401 (fixtures)
from test_mcp_server import _cpu

FORGED = "x\nD  README.md\x1b]0;t\x07\u202e"  # a newline, an OSC title, a bidi override


def test_mcp_list_directory_writes_a_name_holding_a_newline_on_its_own_line(client, proj):
    # Before: list_directory's text put each name as it came: a file the agent
    # named "x\nD  README.md..." made a second line, an entry that is not there,
    # and its ESC and bidi characters reached whoever read it. Now the name's
    # controls are escapes; the structured entries keep the name.
    c = client(session="mcp-lsname")
    assert not c.call("write_file", path="sub/" + FORGED, content="1\n")["isError"]
    r = c.call("list_directory", path="sub")
    lines = text(r).splitlines()
    assert len(lines) == 1, lines
    assert lines[0].endswith("x\\x0aD  README.md\\x1b]0;t\\x07\\u202e"), lines
    assert not any(ch in text(r) for ch in "\x1b\x07\u202e"), text(r)
    assert [e["path"] for e in r["structuredContent"]["entries"]] == [FORGED]
    assert (proj / "README.md").read_text() == "# demo\n"


def test_mcp_search_files_writes_a_name_holding_a_newline_on_its_own_line(client, proj):
    # Before: search_files' text put "path:line:text" as it came: the name
    # "x\nD  README.md..." split a match into two lines, the second a forged
    # "README.md" line. Now each match's controls are escapes in the text; the
    # structured matches keep the name.
    c = client(session="mcp-searchname")
    assert not c.call("write_file", path="sub/" + FORGED, content="needle\x1b[2J here\n")["isError"]
    r = c.call("search_files", pattern="needle", path="sub")
    lines = text(r).splitlines()
    assert lines == ["sub/x\\x0aD  README.md\\x1b]0;t\\x07\\u202e:1:needle\\x1b[2J here"], lines
    assert r["structuredContent"]["matches"] == ["sub/" + FORGED + ":1:needle\x1b[2J here"]


def test_mcp_a_message_of_long_integers_is_refused_at_its_first_not_parsed_for_seconds(client):
    # Before: the count before parsing let through a 30 MB line of 7,000
    # integers of 4,300 digits (Python's int() is quadratic in the digits, and
    # 4,300 is what 3.11 takes): ~1.5 s of the server's CPU on the thread
    # that reads every message; under Python 3.8 to 3.10 (no digit limit) one
    # integer of 30 MB digits, hours. No MCP message holds an integer of more
    # than 40 digits: the line is refused at the first one.
    c = client(session="mcp-digits")
    before = _cpu(c.proc.pid)
    pad = b",".join([b"7" * 4300] * 7000)
    c.send_raw(b'{"jsonrpc":"2.0","id":"digits","method":"ping","params":{"pad":[' + pad + b"]}}\n")
    r = c.wait_for(lambda m: m.get("id") in ("digits", None))
    assert "error" in r and r["id"] is None and r["error"]["code"] == -32700, r
    assert r["error"]["message"] == ("Parse error: a number of more than 40 digits; no request holds one (send "
                                     "a long id as a string)"), r
    assert _cpu(c.proc.pid) - before < 0.5
    assert "result" in c.request("ping")
    assert c.request("ping", {"n": 10 ** 39, "f": 1.5e300})["result"] == {}


def test_mcp_a_message_nested_too_deep_says_so_not_a_bare_parse_error(client):
    # Before: "Parse error: not a JSON-RPC message (one JSON object per line)" for a well-formed line
    # nested past Python's parser (RecursionError), under the container cap: the client was told its
    # JSON was not JSON. Now the line names the nesting; the server still answers the next message.
    c = client(session="mcp-deep")
    c.send_raw(b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + b"[" * 5000 + b"]" * 5000 +
               b"}}\n")
    r = c.wait_for(lambda m: m.get("id") in ("deep", None))
    assert r["id"] is None and r["error"]["code"] == -32700, r
    msg = r["error"]["message"]
    assert msg.startswith("Parse error: arrays and objects nested too deep to parse (about ") and msg.endswith(
        " levels); no request nests so deep: send it flatter"), msg
    assert c.request("ping")["result"] == {}
