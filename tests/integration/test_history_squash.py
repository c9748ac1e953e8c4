"""The squash past the depth limit (docs/history.md "Depth limit and
squash"): with `run --max-steps N` the oldest two layers become one, the
records stay (marked squashed), and the session's view, status and patch are
what they were; a squash killed at any fault point leaves the same view, and
the next run finishes it."""
import json
from pathlib import Path

import pytest

from capture_util import manifest_of, status_json
from test_history import SCRIPT, comparable, extract, real_dirs_to_remake


def run_ok(lo, cmd, session, *extra):
    r = lo.run(cmd, *extra, session=session)
    assert r.returncode == 0, r.stderr.decode(errors="replace")


def layers(lo, name):
    d = lo.session_dir(name) / "steps"
    return sorted(p.name for p in d.iterdir() if len(p.name) == 4 or p.name.endswith(".ref"))


def test_squashed_session_equals_the_unsquashed_one(lo, tmp_path):
    real_dirs_to_remake(Path(lo.target))
    for cmd in SCRIPT:
        run_ok(lo, cmd, "sq", "--max-steps", "3")
        run_ok(lo, cmd, "plain")
    # Four frozen steps; the limit of three squashed steps 1 and 2 into one layer.
    assert [n[:4] for n in layers(lo, "sq")] == ["0002", "0003", "0004"]
    assert [n[:4] for n in layers(lo, "plain")] == ["0001", "0002", "0003", "0004"]
    assert comparable(status_json(lo, "sq")) == comparable(status_json(lo, "plain"))
    pa, pb = tmp_path / "a.tar.zst", tmp_path / "b.tar.zst"
    for name, out in (("sq", pa), ("plain", pb)):
        r = lo("save", name, "-o", out)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
    ma, mb = manifest_of(pa), manifest_of(pb)
    assert comparable(ma["changes"]) == comparable(mb["changes"])
    assert sorted(b["path"] for b in ma["base"]) == sorted(b["path"] for b in mb["base"])
    assert extract(pa, tmp_path / "xa") == extract(pb, tmp_path / "xb")
    # The records stay: step 1 marked squashed in the log, the patch and blame.
    assert [s.get("squashed", False) for s in ma["steps"]] == [True, False, False, False, False]
    assert [s["paths"] for s in ma["steps"]] == [s["paths"] for s in mb["steps"]]
    log = json.loads(lo("log", "sq", "--json").stdout)["steps"]
    assert [(s["step"], s["squashed"]) for s in log] == [(None, False), (4, False), (3, False), (2, False),
                                                          (1, True)]
    text = lo("log", "sq").stdout.decode()
    assert text.splitlines()[-1].split()[0] == "1" and "(squashed) " in text.splitlines()[-1]
    blame = lo("blame", "sq", "tmp.txt")
    assert blame.returncode == 0 and blame.stdout.decode().split()[0] == "1"
    # Out of reach: rollback and fork to step 1 refuse and change nothing.
    for args in (("rollback", "sq", "1"), ("fork", "sq", "sq2", "--at", "1")):
        r = lo(*args)
        assert r.returncode == 1 and b"out of reach" in r.stderr, r.stderr
    assert comparable(status_json(lo, "sq")) == comparable(status_json(lo, "plain"))
    assert not (lo.session_dir("sq").parent / "sq2").exists()


@pytest.mark.parametrize("point", ["built", "swapped", "marked", "retired"])
def test_squash_killed_at_each_fault_point(lo, point):
    for cmd in ("echo 1 > one.txt", "echo 2 > two.txt; rm notes.txt", "echo 3 > one.txt; echo 3 > three.txt"):
        run_ok(lo, cmd, "k", "--max-steps", "2")
    before = comparable(status_json(lo, "k"))
    assert [n[:4] for n in layers(lo, "k")] == ["0001", "0002"]
    r = lo.run("true", "--max-steps", "2", session="k", env={"LAYOVER_FAULT": "squash:%s:1:kill" % point})
    assert r.returncode != 0, r.stderr.decode(errors="replace")
    # Exactly before or after: the same view either way.
    assert comparable(status_json(lo, "k")) == before
    squashed = json.loads(lo("log", "k", "--json").stdout)["steps"][-1]["squashed"]
    assert squashed == (point in ("marked", "retired"))
    # The next run finishes it.
    run_ok(lo, "true", "k", "--max-steps", "2")
    assert comparable(status_json(lo, "k")) == before
    assert [n[:4] for n in layers(lo, "k")] == ["0002", "0003"]
    assert not (lo.session_dir("k") / "squash.new").exists() and not (lo.session_dir("k") / "squash.old").exists()
    assert json.loads(lo("log", "k", "--json").stdout)["steps"][-1]["squashed"]
    assert (lo.target / "one.txt").exists() is False  # the real tree is never touched


def test_squash_of_shared_layers_leaves_the_source_session_alone(lo):
    for cmd in ("echo 1 > one.txt", "echo 2 > two.txt; rm notes.txt", "echo 3 > one.txt"):
        run_ok(lo, cmd, "src")
    assert lo("fork", "src", "fk").returncode == 0  # the layers move to the shared store, both refer to them
    before_src = comparable(status_json(lo, "src"))
    assert comparable(status_json(lo, "fk")) == before_src
    run_ok(lo, "echo 4 > four.txt", "fk", "--max-steps", "2")
    run_ok(lo, "true", "fk", "--max-steps", "2")
    assert [n[:4] for n in layers(lo, "fk")] == ["0003", "0004"]
    assert comparable(status_json(lo, "src")) == before_src
    got = {c["path"] for c in status_json(lo, "fk")}
    assert got == {"one.txt", "two.txt", "notes.txt", "four.txt"}
    assert json.loads(lo("log", "fk", "--json").stdout)["steps"][-1]["squashed"]


def test_a_revert_past_the_depth_limit_squashes_the_oldest_steps(lo):
    # 64 frozen layers (the default limit): step 1 from a run, steps 2..64 by
    # checkpoints of files put in the kept session's live upper.
    run_ok(lo, "echo a > a.txt", "rv")
    assert lo("checkpoint", "rv").returncode == 0
    up = lo.upper("rv")
    for i in range(2, 65):
        (up / ("f%d.txt" % i)).write_text("%d\n" % i)
        r = lo("checkpoint", "rv")
        assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert len(layers(lo, "rv")) == 64
    r = lo("revert", "rv", "2")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    # The inverse is step 65; the stack stays 64 deep: steps 1 and 2 are one layer.
    names = [n[:4] for n in layers(lo, "rv")]
    assert len(names) == 64 and names[0] == "0002" and names[-1] == "0065"
    log = json.loads(lo("log", "rv", "--json").stdout)["steps"]
    assert [(s["step"], s["squashed"]) for s in (log[0], log[-2], log[-1])] == [(65, False), (2, False), (1, True)]
    assert log[0]["label"].startswith("revert 2: ") and log[-1]["paths"] == [{"path": "a.txt", "kind": "A"}]
    assert log[-2]["paths"] == [{"path": "f2.txt", "kind": "A"}]
    kinds = {c["path"]: c["kind"] for c in status_json(lo, "rv")}
    assert kinds == dict([("a.txt", "added")] + [("f%d.txt" % i, "added") for i in range(3, 65)])
