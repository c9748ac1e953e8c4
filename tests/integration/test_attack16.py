"""A copy the command moved or linked to a path, or made from a real file
the host has since replaced, is judged from when the session first had
the path, however the rename was spelled (docs/security.md, "When the copy
was made"): apply never overwrites the host's edit unseen."""
import errno
import os
import platform

import pytest

from apply_util import apply_json as apply, host_writes, paced, status_json as status
from conftest import LAYOVER

EDIT = "the host's edit during the run\n"


def host_edit(lo):
    return host_writes(lo, {"notes.txt": EDIT})


def refused_notes(lo, name):
    assert status(lo, name)["notes.txt"].get("stale"), status(lo, name)
    r, res = apply(lo, name)
    assert r.returncode == 1 and "notes.txt" in [c["path"] for c in res["conflicts"]], res
    assert (lo.target / "notes.txt").read_text() == EDIT


def test_a_copy_renamed_over_through_proc_self_is_refused(lo):
    """The command copies notes.txt up, the host edits it, the command
    renames another real file's copy over it as /proc/self/cwd/notes.txt
    (lexically outside the target): refused, the old copy stays (stale)."""
    (lo.target / "notes.default").write_text("defaults\n")
    paced(lo, LAYOVER, "pc", "echo sandbox >> notes.txt",
          "echo tuned >> notes.default && (mv notes.default /proc/self/cwd/notes.txt || true)",
          host_edit(lo), ready="notes.txt")
    assert (lo.target / "notes.default").read_text() == "defaults\n"
    refused_notes(lo, "pc")


def test_a_copy_renamed_over_through_a_symlinked_dir_is_stale(lo):
    """As above, through `x -> .`: the supervisor resolves the symlink as
    the kernel does, and notes the copy the rename drops."""
    (lo.target / "notes.default").write_text("defaults\n")
    paced(lo, LAYOVER, "sl", "echo sandbox >> notes.txt",
          "echo tuned >> notes.default && ln -s . x && mv notes.default x/notes.txt && rm x",
          host_edit(lo), ready="notes.txt")
    assert (lo.upper("sl") / "notes.txt").read_text() == "defaults\ntuned\n"
    refused_notes(lo, "sl")


def test_a_copy_renamed_onto_a_deleted_copy_is_stale(lo):
    """The command deletes its copy (a whiteout), the host edits the file,
    the command renames another real file's copy (marked, born after the
    edit) there: noted from the layer's start."""
    (lo.target / "notes.default").write_text("defaults\n")
    paced(lo, LAYOVER, "rr", "echo sandbox >> notes.txt && rm notes.txt && touch ready",
          "echo tuned >> notes.default && mv notes.default notes.txt && rm ready", host_edit(lo))
    refused_notes(lo, "rr")


def test_rm_ln_rm_over_a_copy_is_stale(lo):
    """`rm notes.txt && ln notes.default notes.txt && rm notes.default`:
    one link again, with notes.default's mark and birth; the link over the
    whiteout is noted."""
    (lo.target / "notes.default").write_text("defaults\n")
    paced(lo, LAYOVER, "ll", "echo sandbox >> notes.txt && touch ready",
          "echo tuned >> notes.default && rm notes.txt && ln notes.default notes.txt && rm notes.default && rm ready",
          host_edit(lo))
    refused_notes(lo, "ll")


def test_a_copy_exchanged_with_another_real_file_s_is_stale(lo):
    """renameat2(RENAME_EXCHANGE): both entries are noted."""
    if platform.machine() != "x86_64":
        pytest.skip("renameat2's number is x86_64's here")
    (lo.target / "notes.default").write_text("defaults\n")
    ex = ("python3 -c 'import ctypes,os; l=ctypes.CDLL(None,use_errno=True); "
          "r=l.syscall(316,-100,b\"notes.default\",-100,b\"notes.txt\",2); "  # renameat2, RENAME_EXCHANGE
          "assert r==0, os.strerror(ctypes.get_errno())'")
    paced(lo, LAYOVER, "ex", "echo sandbox >> notes.txt", "echo tuned >> notes.default && " + ex,
          host_edit(lo), ready="notes.txt")
    assert (lo.upper("ex") / "notes.txt").read_text() == "defaults\ntuned\n"
    refused_notes(lo, "ex")


def saved_after_a_look(lo, name, host):
    """The command reads notes.txt (the overlay keeps what it looked up), the
    host saves it (host()), the command then appends to it: refused."""
    paced(lo, LAYOVER, name, "cat notes.txt > /dev/null && touch ready", "echo sandbox >> notes.txt && rm ready", host)
    refused_notes(lo, name)


def test_a_host_save_by_rename_after_the_sandbox_looked_the_file_up_is_a_conflict(lo):
    """The command reads notes.txt (the overlay caches the real inode), the
    host saves it vim-style (a new file renamed over it), then the command
    edits it: the overlay copies the old inode up."""
    def host():
        tmp = lo.target / ".notes.txt.swp"
        tmp.write_text(EDIT)
        os.rename(tmp, lo.target / "notes.txt")
    saved_after_a_look(lo, "vs", host)


def test_a_host_save_keeping_a_backup_after_the_sandbox_looked_the_file_up_is_a_conflict(lo):
    """As above, but the host keeps the old file (`mv notes.txt notes.bak`,
    then writes notes.txt anew): the overlay copies the old file up, with a
    mark, after the host's edit."""
    def host():
        os.rename(lo.target / "notes.txt", lo.target / "notes.bak")
        (lo.target / "notes.txt").write_text(EDIT)
    saved_after_a_look(lo, "ma", host)
    assert (lo.upper("ma") / "notes.txt").read_text() == "one\ntwo\nthree\nsandbox\n"


def test_a_copy_renamed_over_through_dotdot_from_a_dirfd_is_stale(lo):
    """renameat with an O_PATH dirfd on old/sub and `../../notes.txt`."""
    (lo.target / "notes.default").write_text("defaults\n")
    mv = ("python3 -c 'import os; d=os.open(\"old/sub\", os.O_PATH|os.O_DIRECTORY); "
          "os.rename(\"notes.default\", \"../../notes.txt\", dst_dir_fd=d)'")
    paced(lo, LAYOVER, "dd", "echo sandbox >> notes.txt", "echo tuned >> notes.default && " + mv,
          host_edit(lo), ready="notes.txt")
    assert (lo.upper("dd") / "notes.txt").read_text() == "defaults\ntuned\n"
    refused_notes(lo, "dd")


def test_a_rename_over_a_copy_after_the_notes_are_full_is_still_stale(lo):
    """The command fills first-copies (8 MiB) with renames over files it
    made, then renames a real file's copy over notes.txt: nothing more can
    be noted, the renames still work (no tool breaks), and the notes say
    they are full, so the walk counts every copy from its layer's start:
    the host's edit is a conflict, never overwritten."""
    (lo.target / "notes.default").write_text("defaults\n")
    fill = ("python3 -c 'import os\n"
            "for i in range(17000):\n"
            "    n = \"%05d\" % i + \"x\" * 245\n"
            "    open(\"s\", \"w\").close(); open(n, \"w\").close()\n"
            "    os.rename(\"s\", n)\n"
            "    os.unlink(n)\n'")
    paced(lo, LAYOVER, "full", "echo sandbox >> notes.txt",
          fill + " && echo tuned >> notes.default && mv notes.default notes.txt",
          host_edit(lo), ready="notes.txt")
    notes = (lo.session_dir("full") / "first-copies").read_bytes()
    assert (8 << 20) - 4096 < len(notes) <= (8 << 20) + 5 and notes.endswith(b"\nfull\n"), len(notes)
    refused_notes(lo, "full")


def test_a_dir_made_where_the_session_deleted_a_file_the_host_then_edited(lo):
    """The command deletes notes.txt, the host edits it, the command makes
    a dir there: apply would replace the host's edit with the dir."""
    paced(lo, LAYOVER, "dof", "rm notes.txt && touch ready", "mkdir notes.txt && echo x > notes.txt/f && rm ready",
          host_edit(lo))
    refused_notes(lo, "dof")


RACE_N = 60


def race_over_copies(lo, name, race):
    """RACE_N real pairs nI.txt, dI.txt: the command copies every nI.txt up,
    the host edits them all, then `race` (a python3 -c, over RACE_N) runs.
    Wherever a race left dI's copy ("d\ntuned\n") at nI.txt, it is stale,
    and apply keeps every host edit. Returns those I."""
    for i in range(RACE_N):
        (lo.target / ("n%d.txt" % i)).write_text("n\n")
        (lo.target / ("d%d.txt" % i)).write_text("d\n")
    paced(lo, LAYOVER, name, "for i in $(seq 0 %d); do echo s >> n$i.txt; done && touch ready" % (RACE_N - 1),
          race + " && rm ready", host_writes(lo, {"n%d.txt" % i: "host\n" for i in range(RACE_N)}))
    up = lo.upper(name)
    landed = [i for i in range(RACE_N) if (up / ("n%d.txt" % i)).is_file()
              and (up / ("n%d.txt" % i)).read_text() == "d\ntuned\n"]
    ch = status(lo, name)
    assert all(ch["n%d.txt" % i].get("stale") for i in landed), (landed, ch)
    r, res = apply(lo, name)
    assert r.returncode == 1
    assert all((lo.target / ("n%d.txt" % i)).read_text() == "host\n" for i in range(RACE_N))
    print("landed", len(landed))
    return landed


def test_a_rename_racing_a_dir_swapped_for_a_symlink_is_noted_where_it_lands(lo):
    """Another thread swaps x between a dir and a symlink to `.` while the
    command renames real files' copies to x/nI.txt: each rename acts where
    the supervisor resolved it, so every copy it drops is noted."""
    if platform.machine() != "x86_64":
        pytest.skip("renameat2's number is x86_64's here")
    race_over_copies(lo, "race", "python3 -c 'import ctypes, os, threading\n"
                     "l = ctypes.CDLL(None, use_errno=True)\n"
                     "os.mkdir(\"x\"); os.symlink(\".\", \"y\"); stop = []\n"
                     "def flip():\n"
                     "    while not stop: l.syscall(316, -100, b\"x\", -100, b\"y\", 2)\n"
                     "t = threading.Thread(target=flip); t.start()\n"
                     "for i in range(%d):\n"
                     "    open(\"d%%d.txt\" %% i, \"a\").write(\"tuned\\n\")\n"
                     "    try: os.rename(\"d%%d.txt\" %% i, \"x/n%%d.txt\" %% i)\n"
                     "    except OSError: pass\n"
                     "stop.append(1); t.join()\n'" % RACE_N)


def test_a_rename_from_a_thread_that_leads_no_thread_group_is_answered(lo):
    """The notification names the thread: a pidfd of it needs PIDFD_THREAD
    (or its thread group's), else the supervisor dropped the call and the
    thread waited for ever (a directory's rename; in a kept session any)."""
    script = ("cd '%s' && python3 -c 'import os, threading\n"
              "for a, b in ((\"old\", \"moved\"), (\"notes.txt\", \"notes.moved\")):\n"
              "    t = threading.Thread(target=os.rename, args=(a, b)); t.start(); t.join()\n'" % lo.target)
    r = lo.run(script, session="thr", timeout=30)
    assert r.returncode == 0 and b"Error" not in r.stderr, r.stderr
    assert (lo.upper("thr") / "moved" / "a.txt").read_text() == "a\n"
    assert (lo.upper("thr") / "notes.moved").exists()


def test_a_link_racing_a_symlink_swapped_between_dirs_is_noted_where_it_lands(lo):
    """The same race for a hard link: another thread points x at `.` or at
    sub/ while the command deletes its copy of nI.txt and links another
    real file's copy (born after the host's edit) to x/nI.txt, then deletes
    that file. The link is made on the dir the supervisor resolved and
    noted, never resolved again: wherever it lands, apply keeps the edit."""
    landed = race_over_copies(lo, "lrace", "python3 -c 'import os, threading\n"
                              "os.mkdir(\"sub\"); os.symlink(\"sub\", \"x\"); stop = []\n"
                              "def flip():\n"
                              "    while not stop:\n"
                              "        for to in (\".\", \"sub\"):\n"
                              "            os.symlink(to, \"x.new\"); os.replace(\"x.new\", \"x\")\n"
                              "t = threading.Thread(target=flip); t.start()\n"
                              "for i in range(%d):\n"
                              "    open(\"d%%d.txt\" %% i, \"a\").write(\"tuned\\n\")\n"
                              "    os.remove(\"n%%d.txt\" %% i)\n"
                              "    try: os.link(\"d%%d.txt\" %% i, \"x/n%%d.txt\" %% i)\n"
                              "    except OSError: pass\n"
                              "    os.remove(\"d%%d.txt\" %% i)\n"
                              "stop.append(1); t.join()\n'" % RACE_N)
    assert landed, "no link landed at nI.txt: the race was not run"


def test_links_in_a_kept_session_work_as_on_the_host(lo):
    """The worker makes a kept session's links, with the kernel's outcome
    for each (a discarded run's calls are the kernel's own): a file linked
    through /proc/self/fd with AT_SYMLINK_FOLLOW (as atomic writers link an
    O_TMPFILE) and by AT_EMPTY_PATH, the magic link itself (link(2) does
    not follow it: EXDEV), a link from a thread, one outside the target,
    and the kernel's errors."""
    script = ("cd '%s' && python3 -c 'import ctypes, os, threading\n"
              "l = ctypes.CDLL(None, use_errno=True)\n"
              "def do(what, f):\n"
              "    try: f(); print(what, 0)\n"
              "    except OSError as e: print(what, e.errno)\n"
              "def follow(src, dst):\n"
              "    if l.linkat(-100, src.encode(), -100, dst.encode(), 0x400):\n"
              "        raise OSError(ctypes.get_errno(), \"linkat\")\n"
              "fd = os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o600); os.write(fd, b\"tmp\")\n"
              "do(\"tmpfile\", lambda: follow(\"/proc/self/fd/%%d\" %% fd, \"made.txt\"))\n"
              "fd = os.open(\"notes.txt\", os.O_RDONLY)\n"
              "do(\"magic\", lambda: os.link(\"/proc/self/fd/%%d\" %% fd, \"magic.txt\"))\n"
              "do(\"proc\", lambda: follow(\"/proc/self/fd/%%d\" %% fd, \"viaproc.txt\"))\n"
              "rc = l.linkat(fd, b\"\", -100, b\"flink.txt\", 0x1000)\n"
              "print(\"flink\", 0 if rc == 0 else ctypes.get_errno())\n"
              "t = threading.Thread(target=do, args=(\"thread\", lambda: os.link(\"old/a.txt\", \"by-thread.txt\")))\n"
              "t.start(); t.join()\n"
              "do(\"outside\", lambda: os.link(\"notes.txt\", \"/tmp/outside.txt\"))\n"
              "do(\"exists\", lambda: os.link(\"notes.txt\", \"by-thread.txt\"))\n"
              "do(\"missing\", lambda: os.link(\"missing\", \"m.txt\"))\n"
              "do(\"dir\", lambda: os.link(\"old\", \"olddir\"))\n"
              "'" % lo.target)
    kernel = lo.run(script, on_exit="discard", timeout=30)
    kept = lo.run(script, session="lk", timeout=30)
    assert kept.returncode == 0 and kernel.returncode == 0, kept.stderr
    got = dict(x.split() for x in kept.stdout.decode().splitlines())
    own = dict(x.split() for x in kernel.stdout.decode().splitlines())
    # AT_EMPTY_PATH: before Linux 6.10 the kernel refuses it without
    # CAP_DAC_READ_SEARCH; the worker links the fd as the task could through
    # /proc/self/fd/N itself
    assert dict(got, flink=None) == dict(own, flink=None), (got, own)
    assert own["flink"] != "0" or got["flink"] == "0", (got, own)
    assert (got["tmpfile"], got["magic"], got["proc"], got["thread"], got["outside"], got["exists"], got["missing"],
            got["dir"]) == tuple(str(e) for e in (0, errno.EXDEV, 0, 0, errno.EXDEV, errno.EEXIST, errno.ENOENT,
                                                   errno.EPERM)), got
    up = lo.upper("lk")
    assert (up / "by-thread.txt").read_text() == (lo.target / "old" / "a.txt").read_text()
    assert (up / "old" / "a.txt").stat().st_nlink == 2
    assert (up / "made.txt").read_text() == "tmp"
    for name in ("viaproc.txt", "flink.txt"):
        assert (up / name).read_text() == (lo.target / "notes.txt").read_text()
    assert got["flink"] == "0", got  # the worker reaches the task's fd through the sandbox's /proc
    assert not (lo.target / "flink.txt").exists()
