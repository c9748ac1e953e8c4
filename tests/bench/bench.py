"""make bench driver: layover against its peers, measured in the same run.

Run by tests/bench.sh as the (unprivileged) user that runs the sandbox:
    /usr/bin/python3 tests/bench/bench.py --bin DIR --scratch DIR --results FILE [--quick|--smoke] [--only NAME,...]
        [--apply-dir DIR]  (the many-file apply row's targets: bench.sh makes DIR on an ext4 of its own)
        [--project-dir DIR]  (the real project's row, all of it: the same, on another)
        [--steps-dir DIR]  (the stepped sessions' apply row's targets: the same, on another)
Stdlib only. The measuring rules are in core.py. Rows are gated (a goal on
the ratio of medians) unless marked info. Prints the machine, one table, and
writes FILE (results.json); tests/bench.sh prints the last line.
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import core  # noqa: E402
import gen  # noqa: E402  (the tree generators, shared with the sandboxed runs)
import history  # noqa: E402  (session history rows: fork, checkpoint)
import hunks  # noqa: E402  (issue 24's rows)
import project  # noqa: E402  (the real project's rows)
import startup  # noqa: E402  (the start-up rows)
import status_floor  # noqa: E402  (the first status's floor, an info row)
from core import (Contender, Failed, MiB, Results, busy_share, check, count_files, fresh_copy, machine,  # noqa: E402
                  machine_lines, measure, new_target, rm)

class Bench:
    def __init__(self, bindir, scratch, quick, smoke=False, apply_dir=None, project_dir=None, steps_dir=None):
        self.lay = os.path.join(bindir, "layover")
        self.s = scratch
        self.apply_dir = apply_dir  # the many-file apply row's targets: a fresh ext4 of their own (bench.sh)
        self.steps_dir = steps_dir  # the stepped sessions' apply row's targets: another
        self.project_dir = project_dir  # the real project's row: another
        self.quick, self.smoke = quick, smoke
        self.n = 2000 if quick else 10000          # files in the many-file rows
        self.big = (64 if quick else 1024) * MiB   # the big file
        self.reps = 5 if quick else 10
        self.big_reps = 3
        self.ndiff = 100                           # files the diff session edits
        self.conc = 50                             # runs at once
        # The real-project row: files, dirs, git commits; its reps (after one warm-up rep).
        self.proj = (2000, 200, 300) if quick else (30000, 3000, 5000)
        self.proj_reps = 10
        # The stepped-session rows: steps (editing self.n // 10 files).
        self.nsteps = int(os.environ.get("LAYOVER_BENCH_STEPS", "50"))
        if smoke:  # `make test`: proves every row still runs; sizes too small for the ratios to mean anything
            self.n, self.big, self.reps, self.big_reps, self.ndiff, self.conc = 100, 1 * MiB, 1, 1, 10, 5
            self.proj, self.proj_reps = (100, 10, 10), 1
            self.nsteps = 2
            core.SYNC = False  # a sync waits for everyone's writeback: seconds on a shared machine
        self.err = self.p(".stderr")
        self.sessions = []
        self.res = Results()
        os.environ["LAYOVER_STATE_DIR"] = self.p("state")
        os.makedirs(self.p("state"), mode=0o700, exist_ok=True)

    def p(self, *parts):
        return os.path.join(self.s, *parts)

    def upper(self, session):
        return self.p("state", "sessions", session, "upper")

    def measure(self, contenders, reps=None, warmup=True):
        return measure(contenders, reps or self.reps, warmup=warmup and not self.smoke, errfile=self.err)

    def sandbox(self, target, session, code, *args):
        """Build an upper layer the way a user would: a sandboxed command that writes it."""
        check([self.lay, "run", "--quiet", "--target", target, "--session", session, "--on-exit", "keep", "--",
               "sh", "-c", 'cd "$LAYOVER_TARGET" && exec python3 -c "$0" "$@"', code, *args])
        if session not in self.sessions:
            self.sessions.append(session)

    # -- trees ---------------------------------------------------------------
    def setup(self):
        os.makedirs(self.p("small"))            # base for the added-files rows: nearly empty
        with open(self.p("small", "README"), "w") as f:
            f.write("base\n")
        os.makedirs(self.p("big"))
        gen.big_file(self.p("big", "big.bin"), self.big)
        os.makedirs(self.p("tree"))             # base for modified-files rows: n text files of 4 KiB
        gen.text_tree(self.p("tree"), self.n)
        self.sandbox(self.p("small"), "added", gen.SMALL_CODE, str(self.n))
        self.sandbox(self.p("big"), "big", gen.MODIFY_BIG_CODE, "big.bin")
        self.sandbox(self.p("tree"), "modified", gen.MODIFY_TEXT_CODE, str(self.n), str(self.n))
        self.sandbox(self.p("tree"), "diff", gen.MODIFY_TEXT_CODE, str(self.ndiff), str(self.n))
        # The peer's "new" tree for diff -ruN: the base plus the same edits, made the same way.
        fresh_copy(self.p("tree"), self.p("tree-new"))
        check(["python3", "-c", gen.MODIFY_TEXT_CODE, str(self.ndiff), str(self.n)], cwd=self.p("tree-new"))

    # -- save ----------------------------------------------------------------
    def save(self, session, goal, limit, rss_goal=None):
        out_l, out_p = self.p("save-%s.tar.zst" % session), self.p("peer-%s.tar.zst" % session)
        sdir = self.p("state", "sessions", session)
        expect = count_files(self.upper(session))

        def verify_l():
            r = check([self.lay, "show", out_l, "--json", "--no-pager"]).stdout
            if r.count(b'"kind"') < expect:
                raise Failed("the saved patch lists %d changes, expected %d" % (r.count(b'"kind"'), expect))

        def verify_p():
            if os.path.getsize(out_p) < 64:
                raise Failed("the peer's archive is empty")

        lay = Contender("layover save", [self.lay, "save", session, "-o", out_l], prepare=lambda: rm(out_l),
                        verify=verify_l)
        peer = Contender("tar | zstd -1 -T0", ["sh", "-c", 'tar -C "$1" -cf - upper | zstd -q -1 -T0 > "$2"', "sh",
                                               sdir, out_p], prepare=lambda: rm(out_p), verify=verify_p)
        big = session == "big"
        self.measure([lay, peer], self.big_reps if big else None, warmup=not big)
        self.res.ratio(goal, lay, peer, limit)
        if rss_goal:
            self.res.rss(rss_goal, lay, 64)
        rm(out_p)
        return out_l  # kept: the apply rows use it

    # -- status --------------------------------------------------------------
    def status(self):
        up = self.upper("modified")
        n_changes = [0]

        def verify():
            out = check([self.lay, "status", "modified", "--json"]).stdout
            n_changes[0] = out.count(b'"kind"')
            if n_changes[0] < self.n:
                raise Failed("status listed %d changes, expected %d" % (n_changes[0], self.n))

        find = Contender("find | wc -l", ["sh", "-c", 'find "$1" -type f | wc -l', "sh", up])
        # The work status must do: compare each upper file with its lower
        # twin, in one process (diff -rq compares contents, exits 1).
        cmp_all = Contender("diff -rq upper lower", ["diff", "-rq", up, self.p("tree")], ok=(0, 1))
        # A fresh status each rep: nothing cached from the last one.
        lay = Contender("layover status", [self.lay, "status", "modified", "--no-pager"], verify=verify,
                        prepare=lambda: self.forget_status_cache("modified"))
        # What a first status cannot skip, in a bare C loop (status_floor.py): info rows.
        floor_bin = status_floor.binary(self)
        floor = floor_bin and Contender("C floor: open+read each file, stat its twin",
                                        [floor_bin, up, self.p("tree"), str(self.n)])
        self.measure([lay, find, cmp_all] + ([floor] if floor else []))
        self.res.ratio("status, %s modified files" % self.thousands(self.n), lay, find, 3.0)
        self.res.ratio("status vs comparing each file with its twin", lay, cmp_all, 1.0)
        if floor:
            self.res.ratio("status's floor vs find (info)", floor, find, None)
            self.res.ratio("status vs its floor (info)", lay, floor, None)
        again = Contender("layover status (again)", [self.lay, "status", "modified", "--no-pager"], verify=verify)
        find2 = Contender("find | wc -l", ["sh", "-c", 'find "$1" -type f | wc -l', "sh", up])
        self.measure([again, find2])
        self.res.ratio("status again, unchanged session", again, find2, 2.0)

    def forget_status_cache(self, session):
        for name in ("status-cache", "verdicts", "status-snapshot", "status-snapshot-full"):
            path = self.p("state", "sessions", session, name)
            if os.path.lexists(path):
                rm(path)

    # -- apply ---------------------------------------------------------------
    def apply(self, patch, base, goal, limit, expect, rss_goal=None, big=False, where=None):
        """Both sides extract into a fresh copy of the same base, made the same way for each rep."""
        cur, made = {}, []

        # Each rep gets a new dir, and the many-file rows remove theirs only
        # after the row: removing thousands of files and then creating as many
        # in the same block groups made single reps of either side swing 2-10x
        # (ext4's recently-deleted inode search; the project row does the same,
        # docs/design.md "Creating files right after deleting thousands"). Not
        # deleting within the row is not enough: without a journal, ext4 scans
        # past every inode deleted in the last 60-360 s (a previous run's
        # cleanup, another user of the disk), so the many-file row puts its
        # targets on an ext4 of its own (`where`, made by bench.sh as root,
        # never had a delete) when it can. The big-file rows remove each at
        # once (one inode, gigabytes of space).
        def fresh(kind):
            if big and kind in cur:
                rm(cur[kind])
            new_target(cur, made, kind, base, where or self.s, "apply-")

        def verify_l():
            expect(cur["l"])

        lay = Contender("layover apply", lambda: [self.lay, "apply", patch, "--target", cur["l"], "--yes"],
                        prepare=lambda: fresh("l"), verify=verify_l)
        # The peer writes the same file contents: the patch's members.
        peer = Contender("tar --zstd -xf", lambda: ["tar", "--zstd", "-xf", patch, "-C", cur["p"]],
                         prepare=lambda: fresh("p"))
        self.measure([lay, peer], self.big_reps if big else None, warmup=not big)
        self.res.ratio(goal, lay, peer, limit, note="targets on a fresh ext4 of their own" if where else "")
        if rss_goal:
            self.res.rss(rss_goal, lay, 64)
        for d in made:
            rm(d)

    def expect_added(self, d):
        n = count_files(os.path.join(d, "gen"))
        if n != self.n:
            raise Failed("apply wrote %d files, expected %d" % (n, self.n))

    def expect_big(self, d):
        with open(os.path.join(d, "big.bin"), "rb") as f:
            f.seek(self.big // 2)
            if f.read(len(gen.BIG_EDIT)) != gen.BIG_EDIT:
                raise Failed("apply did not write the modified big.bin")

    # -- diff ----------------------------------------------------------------
    def diff(self):
        def verify():
            out = subprocess.run([self.lay, "diff", "diff", "--no-pager"], capture_output=True).stdout
            n = out.count(b"\ndiff --git ") + out.startswith(b"diff --git ")
            if n != self.ndiff:
                raise Failed("layover diff showed %d files, expected %d" % (n, self.ndiff))

        lay = Contender("layover diff", [self.lay, "diff", "diff", "--no-pager"], ok=(1,), verify=verify)
        peer = Contender("diff -ruN", ["diff", "-ruN", "tree", "tree-new"], cwd=self.s, ok=(1,))
        self.measure([lay, peer])
        self.res.ratio("diff, %d changed of %s files" % (self.ndiff, self.thousands(self.n)), lay, peer, 1.0)

    def diff_rss(self):
        big = Contender("layover diff (1 GiB file)", [self.lay, "diff", "big", "--no-pager"], ok=(1,))
        self.measure([big], self.big_reps, warmup=False)
        self.res.rss("diff peak RSS, the big file", big, 64)

    # -- concurrency ---------------------------------------------------------
    def concurrency(self):
        target = self.p("small")
        one = [self.lay, "run", "--quiet", "--target", target, "--on-exit", "discard", "--", "/bin/true"]
        single = Contender("one run", one)
        self.measure([single])
        k = self.conc
        script = 'for i in $(seq %d); do "$@" & done; fail=0; for j in $(jobs -p); do wait $j || fail=1; done; ' \
                 'exit $fail' % k
        many = Contender("%d at once" % k, ["sh", "-c", script, "sh", *one])
        self.measure([many], max(1 if self.reps == 1 else 3, self.reps // 2))
        per = statistics.median(single.times)
        single.times = [t * k for t in single.times]
        single.name = "%d x one run's median (%.1f ms)" % (k, per * 1000)
        self.res.ratio("%d runs at once" % k, many, single, 1.2)

    # -- stepped sessions (issue 23) -----------------------------------------
    def steps(self):
        """A session of many steps (one run each, each editing its share of
        the files) against a one-run session with the same net change:
        status, save and apply read the layer stack in place; and lstat of
        every file of the tree inside the sandbox, through every layer."""
        tree, k, n = self.p("tree"), self.nsteps, self.n // 10
        many, one = "steps%d" % k, "steps1"
        for i in range(k):
            self.sandbox(tree, many, gen.MODIFY_TEXT_CODE, str(n), str(self.n), str(i), str(k))
        self.sandbox(tree, one, gen.MODIFY_TEXT_CODE, str(n), str(self.n))

        def stat_inside(session):
            def timer():
                out = check([self.lay, "run", "--quiet", "--target", tree, "--session", session, "--on-exit", "keep",
                             "--",
                             "sh", "-c", 'cd "$LAYOVER_TARGET" && exec python3 -c "$0"', gen.STAT_TREE_CODE]).stdout
                return float(out.decode().split()[-1])
            return Contender("lstat inside, %s" % session, None, timer=timer)

        # Resuming freezes each session's last run: then `many` has k steps under an empty live upper, `one` 1.
        s_many, s_one = stat_inside(many), stat_inside(one)
        self.measure([s_many, s_one])
        self.res.ratio("lstat of %s files inside, %d layers vs 1" % (self.thousands(self.n), k), s_many, s_one, 1.5)
        # apply's targets: a new copy of the base for each rep, as the
        # many-file apply row makes them (`apply`: on an ext4 of their own,
        # nothing deleted in the row). Each rep removed its session's last
        # copy first (10,000 deletes) on the shared disk, and ext4's search
        # past those inodes, not the steps, set the ratio: 1.37x-1.57x in some
        # full runs and 0.75x in others over 3 reps; the same work on a fresh
        # ext4 is about 1.0x (docs/performance.md, "Apply, 50 steps vs 1").
        cur, made = {}, []
        for verb, limit in (("status", 1.3), ("save", 1.3), ("apply", 1.3)):
            pair = []
            for s in (many, one):
                patch, verify = self.p("steps-%s.tar.zst" % s), None
                if verb == "status":
                    argv = [self.lay, "status", s, "--no-pager"]
                    prep = lambda s=s: self.forget_status_cache(s)  # noqa: E731
                elif verb == "save":
                    argv, prep = [self.lay, "save", s, "-o", patch], lambda p=patch: rm(p)
                else:
                    argv = lambda s=s: [self.lay, "apply", s, "--target", cur[s], "--yes"]  # noqa: E731
                    prep = lambda s=s: new_target(cur, made, s, tree, self.steps_dir or self.s,  # noqa: E731
                                                  "steps-applied-")
                    verify = lambda s=s: self.expect_steps(cur[s], n)  # noqa: E731
                pair.append(Contender("layover %s, %s" % (verb, s), argv, prepare=prep, verify=verify))
            self.measure(pair)
            self.res.ratio("%s, %d steps vs 1 (%s of %s files edited)" % (verb, k, self.thousands(n),
                                                                          self.thousands(self.n)), pair[0], pair[1],
                           limit)
        # The same net change: the same listing and the same applied tree.
        st = [check([self.lay, "status", s, "--json"]).stdout for s in (many, one)]
        if st[0].count(b'"kind"') != n or st[0] != st[1].replace(one.encode(), many.encode()):
            raise Failed("the %d-step session's status differs from the one-step session's: %r vs %r" % (
                k, st[0][:300], st[1][:300]))
        for s in (many, one):
            rm(self.p("steps-%s.tar.zst" % s))
        # Failed if not; an apply into another filesystem than the state dir's keeps its undo record there
        check(["diff", "-r", "-x", ".layover-undo", cur[many], cur[one]])
        for d in made:
            rm(d)

    def expect_steps(self, d, n):
        """The applied tree, read on the real filesystem, has each of the n
        edited files' two edits (gen.MODIFY_TEXT_CODE)."""
        for k in range(n):
            i = k * (self.n // n)
            with open(os.path.join(d, "d%02d" % (i // 100), "t%05d.txt" % i)) as f:
                lines = f.readlines()
            if lines[10:11] + lines[40:41] != ["edited line ten of file %d\n" % i, "edited line forty of file %d\n" % i]:
                raise Failed("the applied t%05d.txt lacks its edits: %r" % (i, lines[10:11] + lines[40:41]))

    def thousands(self, n):
        return "{:,}".format(n)

    def cleanup(self):
        if self.smoke:  # bench.sh removes the whole scratch dir, in the background (deletes are slow here)
            return
        for s in self.sessions:
            subprocess.run([self.lay, "discard", "--now", s], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def guarded(res, goal, fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except Failed as e:
        res.error(goal, str(e))
    except OSError as e:
        res.error(goal, "%s: %s" % (type(e).__name__, e))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--apply-dir", default="", help="the many-file apply row's targets: a fresh filesystem's dir")
    ap.add_argument("--project-dir", default="", help="the real project's row: a fresh filesystem's dir")
    ap.add_argument("--steps-dir", default="", help="the stepped sessions' apply row: a fresh filesystem's dir")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, 1 rep: proves the bench runs (make test)")
    ap.add_argument("--only", default="", help="comma list: save,status,apply,hunks,diff,startup,concurrency,project,steps,fork,checkpoint")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    want = lambda k: not only or k in only  # noqa: E731
    b = Bench(a.bin, a.scratch, a.quick, a.smoke, a.apply_dir or None, a.project_dir or None, a.steps_dir or None)
    m = machine(a.scratch)
    for line in machine_lines(m):
        print(line)
    print("reps: %d (big-file rows: %d)%s" % (b.reps, b.big_reps, ", SMOKE sizes (ratios mean nothing)" if a.smoke
                                              else ", QUICK sizes" if a.quick else ""), flush=True)
    res = b.res
    try:
        try:
            b.setup()
        except Failed as e:
            res.error("setup (sandboxed tree generation)", str(e))
        else:
            n = b.thousands(b.n)
            big = "%d MiB" % (b.big // MiB)
            p_added = p_big = None
            if want("save") or want("apply"):
                p_added = guarded(res, "save, %s added" % n, b.save, "added", "save, %s added" % n, 1.0)
                guarded(res, "save, %s modified" % n, b.save, "modified", "save, %s modified" % n, 1.2)
                p_big = guarded(res, "save, %s modified file" % big, b.save, "big", "save, %s modified file" % big,
                                1.2, rss_goal="save peak RSS, the big file")
            if want("status"):
                guarded(res, "status", b.status)
            if want("apply"):
                if p_added:
                    guarded(res, "apply, %s files" % n, b.apply, p_added, b.p("small"), "apply, %s files" % n, 1.5,
                            b.expect_added, where=b.apply_dir)
                if p_big:
                    guarded(res, "apply, %s file" % big, b.apply, p_big, b.p("big"), "apply, %s file" % big, 1.5,
                            b.expect_big, rss_goal="apply peak RSS, the big file", big=True)
            if want("hunks"):
                hunks.run(b, guarded)
            if want("diff"):
                guarded(res, "diff", b.diff)
                guarded(res, "diff peak RSS", b.diff_rss)
            if want("startup"):
                guarded(res, "start-up", startup.rows, b)
            if want("concurrency"):
                guarded(res, "concurrency", b.concurrency)
            if want("project"):
                guarded(res, "real project", project.rows, b)
            if want("fork"):  # tests/bench/history.py
                guarded(res, "fork", history.fork_rows, b, n)
            if want("checkpoint"):
                guarded(res, "checkpoint", history.checkpoint, b)
            if want("steps"):
                guarded(res, "stepped sessions", b.steps)
    finally:
        b.cleanup()
    m["load_at_end"] = os.getloadavg()[0]
    print()
    print(res.table())
    # Other work is read as the CPUs' busy share in a second of our own
    # sleep before the first rep and after the last: the load average would
    # count the bench's own reps (and a build just before) for a minute.
    m["busy_at_end"] = busy_share()
    res.write_json(a.results, m)
    busy = [x for x in (m["busy_at_start"], m["busy_at_end"]) if x is not None]
    if busy and max(busy) > 0.25:
        print("warning: the CPUs were %s busy with other work before the first rep and %s after the last "
              "(load average %.2f and %.2f): other work shared the machine" % (
                  *("?" if x is None else "%.0f%%" % (100 * x) for x in (m["busy_at_start"], m["busy_at_end"])),
                  m["load_at_start"], m["load_at_end"]))
    met, missed = res.counts()
    return 0 if missed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
