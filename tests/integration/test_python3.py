"""A demanding MCP user's leftovers of the Python side (python3): how a
command's end is reported. Each test fails before its fix."""
from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def test_mcp_a_killed_command_says_it_was_killed_and_by_which_signal(client):
    # Before: kill_command ended "[job-1 exited with 137]", run_command
    # "[exit code 137]": an exit code the command might have chosen.
    c = client(session="mcp-py3-kill")
    job = c.call("start_command", command="echo up; exec sleep 600")["structuredContent"]["job_id"]
    assert "up" in c.call("read_output", job_id=job, wait=30)["structuredContent"]["stdout"]
    r = c.call("kill_command", job_id=job)
    assert not r["isError"], r
    assert text(r).endswith("[%s killed by kill_command (SIGKILL, exit code 137)]" % job), text(r)
    s = r["structuredContent"]
    assert (s["exit_code"], s["signal"], s["killed"], s["running"]) == (137, "SIGKILL", True, False), s
    r = c.call("run_command", command="echo bye; kill -TERM $$")
    assert r["isError"] and text(r) == "bye\n[exit code 143: killed by SIGTERM]", text(r)
    assert (r["structuredContent"]["exit_code"], r["structuredContent"]["signal"]) == (143, "SIGTERM"), r
    # An exit code of its own is one still, also 137: no signal named.
    r = c.call("run_command", command="exit 137")
    assert text(r) == "[exit code 137]" and r["structuredContent"]["signal"] is None, r
    job = c.call("start_command", command="exit 3")["structuredContent"]["job_id"]
    r = c.call("read_output", job_id=job, wait=30)
    assert text(r) == "[%s exited with 3]" % job and r["structuredContent"]["signal"] is None, r
    r = c.call("kill_command", job_id=job)  # already over: nothing to kill
    assert text(r) == "[%s exited with 3]" % job and r["structuredContent"]["killed"] is False, r
