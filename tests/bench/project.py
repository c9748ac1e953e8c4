"""The real project's rows of `make bench`: an npm-install-like tree plus a
packed git repo, unpacked by `layover run` from a tarball (as npm unpacks
packages), then `status`, `save` and `apply` of that session, each against
`cp -a` of the same tree."""
import os
import shutil

import gen
from core import Contender, Failed, check, count_files, fresh_copy, rm


def rows(b):
    """An npm-install-like tree plus a packed git repo: `run` that writes it,
    then `status`, `save` and `apply` of that session, each against
    `cp -a` of the same tree (the cost of just writing it), one rep of
    each in turn, after one untimed warm-up rep of each (the source in
    the page cache for all). Everything the row writes, the sessions
    included, goes on a fresh ext4 of its own when bench.sh made one:
    on the shared disk `cp -a` took 0.7-4.5 s by what others had just
    deleted there, and run's `syncfs` flushed their writeback."""
    where = b.project_dir
    if not where:
        return rows_in(b, b.s, b.p("state"))
    state, saved = os.path.join(where, "state"), os.environ["LAYOVER_STATE_DIR"]
    os.makedirs(state, mode=0o700)
    os.environ["LAYOVER_STATE_DIR"] = state
    try:
        return rows_in(b, where, state)
    finally:
        os.environ["LAYOVER_STATE_DIR"] = saved


def rows_in(b, where, state):
    files, dirs, commits = b.proj
    at = lambda *parts: os.path.join(where, *parts)  # noqa: E731
    src, base = at("proj-src"), at("proj-base")
    gen.project_tree(src, files, dirs)
    if shutil.which("git"):
        gen.git_repo(os.path.join(src, "repo"), commits)
    expect = count_files(src)
    # What `run` unpacks, as `npm install` unpacks its packages' tarballs
    # (write(2) into each new file). `cp -a` inside is an info row: from a
    # file outside the overlay its `copy_file_range` fails with EXDEV (no
    # in-kernel copy across into an overlayfs), and cp's fallback maps a
    # buffer per file; the peer `cp -a` copies in the kernel ("The real
    # project's run: who writes the tree", docs/performance.md).
    tars = at("proj-tar")
    os.makedirs(tars)
    tarball = os.path.join(tars, "proj.tar")
    check(["tar", "-C", where, "-cf", tarball, "--transform", "s,^proj-src,proj,", "proj-src"])
    os.makedirs(base)
    with open(os.path.join(base, "README"), "w") as f:
        f.write("base\n")
    # Every rep writes into places of its own, all deleted after the row:
    # creating files right after deleting as many is slow on ext4 (see
    # docs/design.md, "Creating files right after deleting thousands").
    cur = {"i": 0}
    sess = lambda: "proj%d" % cur["i"]  # noqa: E731
    cp_dest = lambda: at("proj-cp%d" % cur["i"])  # noqa: E731
    applied = lambda: at("proj-applied%d" % cur["i"])  # noqa: E731
    upper = lambda: os.path.join(state, "sessions", sess(), "upper")  # noqa: E731
    patch = at("proj.tar.zst")

    def counted(root, what):
        n = count_files(root)
        if n != expect:
            raise Failed("%s: %d files, expected %d" % (what, n, expect))

    def next_rep():
        cur["i"] += 1
        if where == b.s:  # else they go with their filesystem
            b.sessions += [sess(), sess() + "cp"]

    def verify_status():
        out = check([b.lay, "status", sess(), "--json"]).stdout
        if out.count(b'"kind"') < expect:
            raise Failed("status listed %d changes, expected %d" % (out.count(b'"kind"'), expect))

    def verify_save():
        out = check([b.lay, "show", patch, "--json", "--no-pager"]).stdout
        if out.count(b'"kind"') < expect:
            raise Failed("the saved patch lists %d changes, expected %d" % (out.count(b'"kind"'), expect))

    cp = Contender("cp -a", lambda: ["cp", "-a", src, cp_dest()], prepare=next_rep,
                   verify=lambda: counted(cp_dest(), "cp -a"))
    run = Contender("layover run", lambda: [b.lay, "run", "--quiet", "--target", base, "--session", sess(),
                                            "--on-exit", "keep", "--ro", tars, "--", "tar", "-xf", tarball,
                                            "-C", base],
                    verify=lambda: counted(upper() + "/proj", "the upper layer"))
    run_cp = Contender("layover run (cp -a inside)",
                       lambda: [b.lay, "run", "--quiet", "--target", base, "--session", sess() + "cp", "--on-exit",
                                "keep", "--ro", src, "--", "cp", "-a", src, base + "/proj"],
                       verify=lambda: counted(os.path.join(state, "sessions", sess() + "cp", "upper", "proj"),
                                              "the upper layer (cp -a inside)"))
    status = Contender("layover status", lambda: [b.lay, "status", sess(), "--no-pager"], verify=verify_status)
    save = Contender("layover save", lambda: [b.lay, "save", sess(), "-o", patch], prepare=lambda: rm(patch),
                     verify=verify_save)
    apply = Contender("layover apply", lambda: [b.lay, "apply", patch, "--target", applied(), "--yes"],
                      prepare=lambda: fresh_copy(base, applied()),
                      verify=lambda: counted(applied() + "/proj", "the applied tree"))
    b.measure([cp, run, status, save, apply, run_cp], b.proj_reps)
    what = "real project (%s files, %s dirs, %s commits)" % (b.thousands(expect), b.thousands(dirs),
                                                             b.thousands(commits))
    for c, verb in ((run, "run"), (status, "status"), (save, "save"), (apply, "apply")):
        b.res.ratio("%s: %s" % (what if verb == "run" else "real project", verb), c, cp, 2.0,
                       note="on a fresh ext4 of its own" if where != b.s else "")
    b.res.ratio("real project: run, cp -a inside (info)", run_cp, cp, None)
    # Its ~20 trees' writeback, untimed, here: left to the kernel, it ran on
    # through the rows after this one (python exec(['true']) 1.25x -> 1.64x).
    os.sync()
    if not b.smoke and where == b.s:  # else bench.sh unmounts it: deleting here would only take time
        for i in range(1, cur["i"] + 1):
            rm(at("proj-cp%d" % i))
            rm(at("proj-applied%d" % i))
            rm(os.path.join(state, "sessions", "proj%d" % i))
            rm(os.path.join(state, "sessions", "proj%dcp" % i))
        rm(src)
        rm(tars)
        rm(patch)
