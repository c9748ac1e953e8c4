"""`layover mcp` (docs/mcp.md) and the session's history: each mutating
call is a step (a busy one deferred), the agent's own steps logged and
rolled back, `changes` and `review_feedback` hand a person's rejections back,
and a call refused by its argument check ends no step."""
import json
import os
import subprocess
import time

from conftest import LAYOVER
from mcp_util import client, conforms, proj, status, text, wait_held  # noqa: F401 (fixtures)


def test_mcp_each_mutating_call_is_a_step_and_a_busy_one_is_deferred(client, proj, state_dir):
    c = client(session="mcp-ck")
    steps = state_dir / "sessions" / "mcp-ck" / "steps"
    rec = lambda n: json.loads((steps / ("%04d.json" % n)).read_text())  # noqa: E731
    assert not c.call("write_file", path="a.txt", content="a\n")["isError"]
    assert rec(1)["label"] == "write_file a.txt" and (steps / "0001" / "a.txt").read_text() == "a\n"
    # Reading is no step; an explicit checkpoint with nothing new makes none.
    assert not c.call("read_file", path="a.txt")["isError"]
    r = c.call("checkpoint")
    assert not r["isError"] and r["structuredContent"]["step"] == 0, r
    # A background job with its cwd in the target: the explicit checkpoint is
    # refused and named; the step after a mutating call is deferred.
    job = c.call("start_command", command="exec sleep 600")["structuredContent"]["job_id"]
    assert not c.call("write_file", path="b.txt", content="b\n")["isError"]
    r = c.call("checkpoint")
    assert r["isError"] and "(sleep) has its working directory in" in text(r), r
    assert not (steps / "0002").exists()
    c.call("kill_command", job_id=job)
    assert not c.call("run_command", command="echo c > c.txt")["isError"]
    assert rec(2)["label"] == "run_command echo c > c.txt (merged, deferred while busy: write_file b.txt)"
    assert sorted(p.name for p in (steps / "0002").iterdir()) == ["b.txt", "c.txt"]
    assert not c.call("edit_file", path="a.txt", old_string="a", new_string="A")["isError"]
    r = c.call("checkpoint", label="nothing new")
    assert not r["isError"] and r["structuredContent"] == {"step": 0, "label": "nothing new"}, r
    assert rec(3)["label"] == "edit_file a.txt"
    # Files written after the steps land in the live layer, read through the sandbox.
    assert not c.call("run_command", command="cat a.txt b.txt > both.txt")["isError"]
    assert (steps / "0004" / "both.txt").read_text() == "A\nb\n"
    assert not (proj / "a.txt").exists()
    log = json.loads(subprocess.run([LAYOVER, "log", "mcp-ck", "--json"], capture_output=True,
                                    env=dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))).stdout)
    assert [s["step"] for s in log["steps"]] == [4, 3, 2, 1]


def test_mcp_log_and_rollback_undo_the_agents_own_steps(client, proj, state_dir):
    c = client(session="mcp-rb")
    assert not c.call("write_file", path="one.txt", content="1\n")["isError"]
    assert not c.call("run_command", command="echo 2 > two.txt; rm README.md")["isError"]
    r = c.call("log")
    assert not r["isError"], r
    assert [(s["step"], s["label"]) for s in r["structuredContent"]["steps"]] == [
        (2, "run_command echo 2 > two.txt; rm README.md"), (1, "write_file one.txt")]
    r = c.call("rollback", step=1)
    assert not r["isError"] and r["structuredContent"] == {"step": 1}, r
    assert text(r) == "rolled back to step 1; the sandbox goes on", r  # in place: nothing was busy
    r = c.call("run_command", command="ls")
    assert not r["isError"] and r["structuredContent"]["stdout"].split() == ["README.md", "data.bin", "one.txt",
                                                                             "src"], r
    assert c.call("rollback", step=9)["isError"]
    assert "must be" in text(c.call("rollback", step=-1))
    # A command still runs in the target: stopped first, then rolled back.
    assert not c.call("start_command", command="sleep 30")["isError"]
    r = c.call("rollback", step=0)
    assert not r["isError"] and text(r) == "rolled back to step 0; every command was stopped and the sandbox " \
        "started again", r
    assert c.call("run_command", command="ls one.txt")["structuredContent"]["exit_code"] != 0
    assert (proj / "README.md").exists() and not (proj / "one.txt").exists()


def test_mcp_changes_and_review_feedback_hand_rejections_back_to_the_agent(client, proj, state_dir):
    c = client(session="mcp-rej")
    tools = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
    assert not c.call("write_file", path="notes/a.txt", content="a\n")["isError"]
    assert not c.call("write_file", path="notes/b.txt", content="b\n")["isError"]
    r = c.call("review_feedback")
    assert r["structuredContent"] == {"session": "mcp-rej", "rejections": []} and "no new rejections" in text(r)
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    rj = subprocess.run([LAYOVER, "reject", "mcp-rej", "notes/a.txt", "-m", "use notes/b.txt"], capture_output=True,
                        text=True, env=env)
    assert rj.returncode == 0, rj.stderr
    r = c.call("changes")
    assert conforms(r["structuredContent"], tools["changes"]["outputSchema"])
    assert [(x["path"], x["reason"], x["state"]) for x in r["structuredContent"]["rejected"]] == [
        ("notes/a.txt", "use notes/b.txt", "rejected")]
    assert "R  notes/a.txt rejected: use notes/b.txt" in text(r)
    r = c.call("review_feedback")
    assert conforms(r["structuredContent"], tools["review_feedback"]["outputSchema"])
    assert [x["path"] for x in r["structuredContent"]["rejections"]] == ["notes/a.txt"]
    assert "notes/a.txt rejected: use notes/b.txt" in text(r)
    # Only what is new since the last call.
    assert c.call("review_feedback")["structuredContent"]["rejections"] == []
    subprocess.run([LAYOVER, "reject", "mcp-rej", "notes/b.txt"], check=True, capture_output=True, env=env)
    r = c.call("review_feedback")
    assert [(x["path"], x["seq"]) for x in r["structuredContent"]["rejections"]] == [("notes/b.txt", 2)]
    # The agent takes the change back another way: the rejection is superseded.
    assert not c.call("write_file", path="notes/a.txt", content="redone\n")["isError"]
    r = c.call("changes")
    assert {x["path"]: x["state"] for x in r["structuredContent"]["rejected"]}["notes/a.txt"] == "superseded"
    assert c.close() == 0
    # A new server on the session goes on from the cursor the last one left (kept in the session's dir).
    assert (state_dir / "sessions" / "mcp-rej" / "mcp-feedback-seq").read_text() == "2\n"
    c2 = client(session="mcp-rej")
    assert c2.call("review_feedback")["structuredContent"]["rejections"] == []
    subprocess.run([LAYOVER, "reject", "mcp-rej", "notes/a.txt", "-m", "still no"], check=True, capture_output=True,
                   env=env)
    r = c2.call("review_feedback")
    assert [(x["path"], x["seq"], x["reason"]) for x in r["structuredContent"]["rejections"]] == [
        ("notes/a.txt", 3, "still no")]
    assert c2.close() == 0


def test_changes_text_and_structured_content_are_one_snapshot(client):
    # While a command keeps writing, the text an agent reads and the
    # structuredContent list the same changes.
    c = client()
    job = c.call("start_command", command="i=0; while [ $i -lt 400 ]; do : > w$i; i=$((i+1)); sleep 0.005; done")
    job = job["structuredContent"]["job_id"]
    seen = set()
    # Until two calls saw different counts (a loaded machine may starve the
    # writer between a few calls: the bound is generous, the check exact).
    deadline = time.monotonic() + 20
    while len(seen) < 2 and 400 not in seen and time.monotonic() < deadline:
        time.sleep(0.02)
        r = c.call("changes")
        listed = sorted(x["path"] for x in r["structuredContent"]["changes"] if x["path"].startswith("w"))
        shown = sorted(l[3:] for l in text(r).splitlines() if l.startswith("A  w"))
        assert shown == listed and len(listed) <= 400, (len(shown), len(listed))  # (the list holds up to 500)
        seen.add(len(listed))
    c.call("kill_command", job_id=job)
    assert len(seen) > 1 or 400 in seen  # the writer was really writing between the calls


def test_changes_text_keeps_the_status_notes_of_ignored_caches(client, state_dir):
    c = client()
    r = c.call("run_command", command="mkdir -p __pycache__ && echo x > __pycache__/m.pyc && echo y > kept.txt")
    assert not r.get("isError"), r
    r = c.call("changes")
    notes = r["structuredContent"]["notes"]
    line = "+ 2 paths in ignored caches (--include-ignored to show them)"
    assert notes == [line], notes
    assert text(r).splitlines()[1:3] == ["1 change: 1 added", line], text(r)
    # The same line `layover status` prints.
    assert line in status(state_dir, "mcp-test").stdout


def test_changes_text_folds_a_new_dir_into_one_line_as_status_does(client, state_dir):
    """`A  lib/` and `A  lib/app.py` were two lines where `layover status`
    prints one; the structured list still holds every entry."""
    c = client()
    r = c.call("run_command", command="mkdir -p lib/pkg && echo 'print(1)' > lib/app.py && echo x > lib/pkg/m.py"
               " && echo y >> README.md")
    assert not r.get("isError"), r
    r = c.call("changes")
    lines = text(r).splitlines()
    st = status(state_dir, "mcp-test").stdout
    folded = [l for l in st.splitlines() if l.startswith("A  lib")]
    assert folded == ["A  lib/  (2 files, 11 B)"], st
    assert lines[:3] == ["M  README.md", folded[0],
                         "5 changes: 4 added, 1 modified (listed on 2 lines: a new dir's line stands for what it holds)"
                         ], lines
    assert sorted(x["path"] for x in r["structuredContent"]["changes"]) == [
        "README.md", "lib", "lib/app.py", "lib/pkg", "lib/pkg/m.py"]


def test_a_call_refused_by_its_argument_check_ends_no_step(client, state_dir):
    c = client()
    job = c.call("start_command", command="exec 3>held; sleep 30")["structuredContent"]["job_id"]
    wait_held(state_dir, "mcp-test")
    assert not c.call("run_command", command="echo a > a")["isError"]  # deferred: 'held' is open for writing
    r = c.call("write_file", content="no path")
    assert r["isError"] and "missing argument 'path'" in text(r)
    c.call("kill_command", job_id=job)
    c.close()
    err = c.stderr()
    assert "the step after run_command" in err, err  # the check below can fail
    assert "the step after write_file" not in err, err
