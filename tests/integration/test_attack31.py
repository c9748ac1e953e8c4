"""Attack pass of 28 Nov (attack31): renames and links the supervisor answers."""
import errno
import os
import time

from apply_util import apply_json as apply, paced, status_json as status
from conftest import LAYOVER

# In a kept session the supervisor reads each rename's and link's paths from
# the task's memory and resolves the destination's dir itself; the kernel
# refuses a path of PATH_MAX (4096) bytes or more with ENAMETOOLONG before
# any lookup. The supervisor read up to a page past that, so a path whose
# dir was shorter than PATH_MAX and whose whole was not (a long last name)
# was renamed or linked by the worker, where the kernel's own call fails.
LONG_PATH_CALLS = (
    "cd '%s' && python3 -c 'import os\n"
    "def p(c):\n"
    "    return \"./\" * 2030 + c * %d\n"
    "assert len(p(\"r\")) == 4096 and len(os.path.dirname(p(\"r\"))) < 4096\n"
    "for name, call in ((\"rename\", lambda: os.rename(\"f\", p(\"r\"))), (\"link\", lambda: os.link(\"f\", p(\"l\")))):\n"
    "    open(\"f\", \"w\").close()\n"
    "    try:\n"
    "        call()\n"
    "        print(name, \"ok\")\n"
    "    except OSError as e:\n"
    "        print(name, e.errno)\n'")


def _host_errno(call):
    try:
        call()
    except OSError as e:
        return e.errno
    return 0


def test_a_rename_or_link_to_a_path_of_path_max_bytes_fails_as_on_the_host(lo, tmp_path, monkeypatch):
    name_len = 4096 - 2 * 2030
    p = "./" * 2030 + "n" * name_len
    # What the kernel itself answers, on the host.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "f").write_text("")
    assert _host_errno(lambda: os.rename("f", p)) == errno.ENAMETOOLONG
    assert _host_errno(lambda: os.link("f", p)) == errno.ENAMETOOLONG
    (lo.target / "seed.txt").write_text("seed\n")
    r = lo.run(LONG_PATH_CALLS % (lo.target, name_len), session="longpath")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split("\n")[:2] == ["rename %d" % errno.ENAMETOOLONG,
                                                "link %d" % errno.ENAMETOOLONG], r.stdout
    up = lo.upper("longpath")
    assert not (up / ("r" * name_len)).exists() and not (up / ("l" * name_len)).exists()
    assert (up / "f").is_file()


def test_a_file_renamed_through_an_absolute_symlink_to_a_real_dir_still_notes_what_it_replaces(lo):
    """The supervisor skipped the note of what a rename replaces when its
    source looked like a directory (a move the worker may have to copy),
    looked at through /proc/PID/cwd: an absolute symlink in the source's
    path was followed from the supervisor's own root, the real tree, not
    the sandbox's. So `docs` (a real dir) made the note skip for a source
    `L/docs` that in the sandbox is a copy of another real file (made after
    the host's edit, with its copy-up mark): renamed over notes.txt's older
    copy unnoted, it looked first copied after the host's edit, and apply
    overwrote that edit with no conflict."""
    (lo.target / "notes.default").write_text("defaults\n")

    def host():
        time.sleep(0.05)
        (lo.target / "notes.txt").write_text("the host's edit during the run\n")
        time.sleep(0.05)
    after = ("echo tuned >> notes.default && rm -rf docs && mv notes.default docs && ln -s '%s' L && "
             "python3 -c 'import os; os.rename(\"L/docs\", \"notes.txt\")' && rm L" % lo.target)
    paced(lo, LAYOVER, "viadir", "echo sandbox >> notes.txt", after, host, ready="notes.txt")
    assert (lo.upper("viadir") / "notes.txt").read_text() == "defaults\ntuned\n"
    assert (lo.target / "docs").is_dir()  # the real dir the supervisor looked at
    assert status(lo, "viadir")["notes.txt"]["stale"]
    r, res = apply(lo, "viadir")
    assert r.returncode == 1 and "notes.txt" in [c["path"] for c in res["conflicts"]], res
    assert (lo.target / "notes.txt").read_text() == "the host's edit during the run\n"


SLASH_CALLS = (
    "cd '%s' && python3 -c 'import os\n"
    "calls = ((\"rename\", lambda: os.rename(\"f\", \"g/\")), (\"link\", lambda: os.link(\"f\", \"h/\")),\n"
    "         (\"dir\", lambda: os.rename(\"d\", \"e/\")))\n"
    "os.mkdir(\"d\")\n"
    "for name, call in calls:\n"
    "    open(\"f\", \"w\").close()\n"
    "    try:\n"
    "        call()\n"
    "        print(name, \"ok\")\n"
    "    except OSError as e:\n"
    "        print(name, e.errno)\n'")


def test_a_file_renamed_or_linked_to_a_name_ending_in_a_slash_fails_as_on_the_host(lo, tmp_path, monkeypatch):
    # The supervisor resolves the destination's dir and hands the worker its
    # last name: the trailing slash went with the split, so `rename f g/` of
    # a file made g, where the kernel says ENOTDIR (and `link f h/` ENOENT).
    monkeypatch.chdir(tmp_path)  # the kernel's own answers, on the host
    (tmp_path / "f").write_text("")
    (tmp_path / "d").mkdir()
    assert _host_errno(lambda: os.rename("f", "g/")) == errno.ENOTDIR
    assert _host_errno(lambda: os.link("f", "h/")) == errno.ENOENT
    assert _host_errno(lambda: os.rename("d", "e/")) == 0
    host = ["rename %d" % errno.ENOTDIR, "link %d" % errno.ENOENT, "dir ok"]
    (lo.target / "seed.txt").write_text("seed\n")
    r = lo.run(SLASH_CALLS % lo.target, session="slash")
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode().split("\n")[:3] == host, r.stdout
    up = lo.upper("slash")
    assert not (up / "g").exists() and not (up / "h").exists() and (up / "e").is_dir()


def test_a_copy_moved_in_a_new_dir_over_a_real_dir_after_a_host_edit_is_stale(lo):
    """docs/readme.txt is copied up, the host edits it; the command then
    copies up another real file, moves it into a new dir as readme.txt,
    removes docs and renames the new dir over it: docs/readme.txt is now a
    copy with a copy-up mark born after the host's edit, at a name no
    rename made itself."""
    (lo.target / "notes.default").write_text("defaults\n")

    def host():
        time.sleep(0.05)
        (lo.target / "docs" / "readme.txt").write_text("the host's edit during the run\n")
        time.sleep(0.05)
    after = ("echo tuned >> notes.default && mkdir U && mv notes.default U/readme.txt && rm -rf docs && "
             "mv U docs")
    paced(lo, LAYOVER, "dirover", "echo sandbox >> docs/readme.txt", after, host, ready="docs/readme.txt")
    assert (lo.upper("dirover") / "docs" / "readme.txt").read_text() == "defaults\ntuned\n"
    ch = status(lo, "dirover")
    r, res = apply(lo, "dirover")
    assert (lo.target / "docs" / "readme.txt").read_text() == "the host's edit during the run\n", (ch, res)
    assert r.returncode == 1, res
