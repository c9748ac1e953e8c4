"""A new user (newuser15) driving `layover mcp` as an agent would, through
the docs: what the agent reads back must say what happened and the fix.
Each test fails before its fix."""
from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def test_mcp_edit_file_with_an_empty_old_string_says_it_is_empty_and_what_to_do(client, proj):
    # Before: "old_string (not empty) and new_string must be strings", about
    # two strings; the model was left to guess which was wrong.
    c = client()
    r = c.call("edit_file", path="README.md", old_string="", new_string="x")
    assert r["isError"]
    assert text(r) == ("edit_file: old_string is empty; give the exact text to replace (read_file shows it), "
                       "or write_file to write the whole file")
    assert (proj / "README.md").read_text() == "# demo\n"


def test_mcp_diff_of_a_path_that_matches_no_change_says_so_not_no_changes(client, proj):
    # Before: the helper's "'src/ap.py' matches no change" went to a dropped
    # stderr and the tool said "no changes", as if the agent's edit were lost.
    c = client()
    assert not c.call("write_file", path="src/app.py", content="v2\n")["isError"]
    r = c.call("diff", paths=["src/ap.py"])
    assert not r["isError"]
    t = text(r)
    assert t.startswith("layover: diff: 'src/ap.py' matches no change (paths are relative to the target "), t
    assert "no changes" not in t
    assert r["structuredContent"]["diff"] == ""
    both = text(c.call("diff", paths=["src/app.py", "nope.txt"]))
    assert "+v2" in both and "'nope.txt' matches no change" in both and "src/app.py" not in both.splitlines()[-1]


def test_mcp_a_path_that_is_not_there_names_the_tool_that_shows_what_is(client, proj):
    # Before: "read_file: nope.txt: no such file or directory", with no fix:
    # the model guessed paths again (relative to what?).
    c = client()
    fix = "; list_directory shows what is there (paths are relative to the target, %s)" % proj
    for name, args, shown in (("read_file", {"path": "nope.txt"}, "nope.txt"),
                              ("edit_file", {"path": "nope.txt", "old_string": "a", "new_string": "b"}, "nope.txt"),
                              ("list_directory", {"path": "nodir"}, "nodir"),
                              ("search_files", {"pattern": "x", "path": "nodir"}, "nodir")):
        r = c.call(name, **args)
        assert r["isError"], name
        assert text(r) == "%s: %s: no such file or directory%s" % (name, shown, fix), text(r)
    assert not (proj / "nope.txt").exists()
