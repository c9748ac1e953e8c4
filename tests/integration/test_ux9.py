"""Rough edges earlier helpers found and left (ux9): `layover mcp`'s
search_files with a catastrophic pattern, a duplicate request id in flight,
read_file's offset and limit below 1, the end line of a session holding only
history; `run -- ""`; `apply PATCH --upto`'s exit status; `diff PATCH`'s
target line; tests/demo.sh's section numbers.

Each test fails before its fix."""
import json
import os
import re
import time
from pathlib import Path

from mcp_util import client, proj, text  # noqa: F401 (fixtures)

ROOT = Path(os.environ.get("LAYOVER_SOURCE_ROOT") or Path(__file__).resolve().parents[2])
EVIL = "(a+)+$"  # on "aaa...a!": every split of the run of a's is tried, 2^40 of them


def agents(c):
    """How many processes in the sandbox carry the agent's command line (its interpreter, a search's
    child, and the sandbox's init, forked from `layover run ... -c BOOT`)."""
    r = c.call("run_command", command="for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; "
                                      "done | grep -c 'LAYOVER_IP[C]_FD'")
    return int(r["structuredContent"]["stdout"].strip() or 0)


def test_mcp_search_files_stops_a_catastrophic_pattern_at_its_time_limit_and_cancel_kills_the_match(client, proj):
    (proj / "evil.txt").write_text("a" * 40 + "!\n")
    c = client(session="mcp-ux9-search")
    idle = agents(c)
    # Before: the match spun inside the agent, holding Python's lock: this call and
    # every other one (cancel too) went unanswered until the server ended.
    start = time.monotonic()
    r = c.call("search_files", pattern=EVIL, timeout=1)
    assert r["isError"], r
    assert text(r).startswith("search_files: stopped after 1 s, its time limit: a pattern with nested "
                              "repetition, such as (a+)+, can take exponential time"), text(r)
    assert "simplify the pattern" in text(r) and "raise timeout (at most 600 s)" in text(r), text(r)
    assert time.monotonic() - start < 30
    # A cancelled search is killed: no process spins on after it, the agent answers at once.
    rid = c.start("tools/call", {"name": "search_files", "arguments": {"pattern": EVIL}})
    deadline = time.monotonic() + 60  # generous: each look is a run_command on a loaded machine
    while agents(c) != idle + 1:  # the search runs in a child of its own
        assert time.monotonic() < deadline, "no search runs"
        time.sleep(0.2)
    c.notify("notifications/cancelled", {"requestId": rid})
    deadline = time.monotonic() + 10  # well inside the search's own 30 s limit, which would end it too
    while agents(c) != idle:
        assert time.monotonic() < deadline, "the cancelled search still runs"
        time.sleep(0.2)
    r = c.call("read_file", path="README.md")
    assert not r["isError"] and "# demo" in text(r), r
    # A good pattern still finds its lines, and a bad timeout names the argument.
    r = c.call("search_files", pattern="v1 again")
    assert not r["isError"] and r["structuredContent"]["matches"] == ["src/app.py:2:print('v1 again')"], r
    r = c.call("search_files", pattern="x", timeout=0)
    assert r["isError"] and "argument 'timeout' must be between" in text(r), r
    assert not any(json.loads(m).get("id") == rid for m in c.lines), "the cancelled call was answered"
    assert c.close() == 0


def test_mcp_a_duplicate_request_id_in_flight_gets_an_error_without_an_id_and_one_response(client, proj):
    c = client(session="mcp-ux9-dup")
    c.start("tools/call", {"name": "run_command", "arguments": {"command": "sleep 2; echo first"}}, rid=77)
    c.start("ping", rid=77)
    c.start("tools/call", {"name": "read_file", "arguments": {"path": "README.md"}}, rid=77)
    seen = []
    first = c.response(77, seen)
    assert first["result"]["structuredContent"]["stdout"] == "first\n", first
    c.request("ping")  # everything sent before it has been answered
    errors = [m for m in seen if "error" in m]
    # Before: {"id": 77, "error": ...} twice, read by the client as the answer to its run_command.
    assert len(errors) == 2, seen
    for e in errors:
        assert "id" not in e, e
        assert e["error"]["code"] == -32600 and e["error"]["data"] == {"id": 77}, e
        assert e["error"]["message"] == ("Invalid Request: id 77 is already in use by a request in flight; "
                                         "give each request an id of its own"), e
    answered = [m for m in map(json.loads, c.lines) if m.get("id") == 77]
    assert len(answered) == 1, answered
    assert c.close() == 0


def test_mcp_read_file_refuses_offset_and_limit_below_1_naming_the_argument(client, proj):
    c = client(session="mcp-ux9-read")
    for args, name in (({"offset": 0}, "offset"), ({"offset": -3}, "offset"), ({"limit": 0}, "limit"),
                       ({"limit": -1}, "limit")):
        r = c.call("read_file", path="src/app.py", **args)
        # Before: read as offset 1 and limit 2000, the whole file returned.
        assert r["isError"], (args, r)
        assert text(r).startswith("read_file: argument '%s' must be 1 or more (" % name), text(r)
        assert text(r).endswith(", not %d" % args[name]), text(r)
    r = c.call("read_file", path="src/app.py", offset=2, limit=1)
    assert not r["isError"] and r["structuredContent"]["content"] == "     2\tprint('v1 again')", r
    assert c.close() == 0


def test_mcp_end_line_of_a_session_with_only_history_names_log_not_apply(client, proj):
    c = client(session="mcp-ux9-hist")
    assert not c.call("write_file", path="tmp.txt", content="x\n")["isError"]
    assert not c.call("run_command", command="rm tmp.txt")["isError"]
    assert c.close() == 0
    err = c.stderr()
    assert ("layover: session 'mcp-ux9-hist' kept: no changes against the real tree, but 2 step(s) of history: "
            "'layover log mcp-ux9-hist' lists them") in err, err
    # Before: also "... kept. Nothing is applied ...: layover status ...; layover apply mcp-ux9-hist", which
    # would apply nothing.
    assert "layover apply" not in err, err


def test_run_of_an_empty_command_word_names_it_and_the_fix(lo):
    r = lo("run", "--target", lo.target, "--on-exit", "keep", "--", "")
    # Before: "layover: : command not found inside the sandbox", exit 127, after making a session.
    assert r.returncode == 125, r.stderr
    assert r.stderr.decode() == (
        "layover: run: the command to run is an empty word (''); name a program after '--', e.g. 'layover run "
        "-- make test', or give no command for a shell (an unset variable, as in -- \"$CMD\", gives ''); see "
        "'layover run --help'\n"), r.stderr
    assert lo("sessions", "--json").stdout.strip() == b"[]"


def test_apply_of_a_patch_with_upto_is_a_usage_error_exit_2_as_diffs_step(lo, tmp_path):
    assert lo.run("echo x > f.txt", session="s").returncode == 0
    patch = tmp_path / "s.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    r = lo("apply", patch, "--upto", "1", "--yes")
    # Before: exit 1, and no pointer to --help; `diff PATCH --step 1` exited 2.
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode() == (
        "layover: apply: %s is a patch file: it carries its steps' records ('layover log %s'), not their layers; "
        "--upto takes the session it was saved from; see 'layover apply --help'\n" % (patch, patch)), r.stderr
    r = lo("diff", patch, "--step", "1")
    assert r.returncode == 2 and r.stderr.decode().endswith(
        "--step and --steps take the session it was saved from; see 'layover diff --help'\n"), r.stderr


def test_diff_of_a_patch_file_heads_its_target_as_a_note_not_as_an_error(lo, tmp_path):
    assert lo.run("echo x > f.txt", session="s").returncode == 0
    patch = tmp_path / "s.tar.zst"
    lo("save", "s", "-o", patch, check=True)
    r = lo("diff", patch)
    assert r.returncode == 1, r.stderr
    err = r.stderr.decode()
    # Before: "layover: diff: target: ...", as an error reads.
    assert "layover: diff: target:" not in err, err
    assert re.match(r"layover: diff of patch %s; target: %s  \(session s, created [0-9TZ:-]+\)\n$"
                    % (re.escape(str(patch)), re.escape(str(lo.target))), err), err


def test_demo_sh_numbers_each_section_once():
    steps = re.findall(r'^step "(\d+)\. ', (ROOT / "tests" / "demo.sh").read_text(), re.M)
    # Before: 1, 2, 3, 4, 5, 5, 5, 6.
    assert steps == [str(n) for n in range(1, len(steps) + 1)], steps


def test_status_total_says_when_new_dirs_are_folded_into_one_line(lo):
    assert lo.run("mkdir -p new/sub && echo 1 > new/a && echo 2 > new/sub/b && echo x >> notes.txt",
                  session="s").returncode == 0
    out = lo("status", "s", check=True).stdout.decode().splitlines()
    assert out[:2] == ["A  new/  (2 files, 4 B)", "M  notes.txt"], out
    # Before: "5 changes: 4 added, 1 modified" under two lines, which read as a miscount.
    assert out[2:] == ["5 changes: 4 added, 1 modified (listed on 2 lines: a new dir's line stands for what it "
                       "holds)"], out
    out = lo("status", "s", "--expand", check=True).stdout.decode().splitlines()
    assert len(out) == 6 and out[-1] == "5 changes: 4 added, 1 modified", out  # one line each: nothing to say
