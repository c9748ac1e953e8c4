"""make bench driver: layover against its peers, measured in the same run.

Run by tests/bench.sh as the (unprivileged) user that runs the sandbox:
    /usr/bin/python3 tests/bench/bench.py --bin DIR --scratch DIR [--reps N] [--only NAME,...]
Stdlib only. Every goal is a ratio layover/peer of medians over several
repetitions that alternate between the contenders; memory goals use the
child's ru_maxrss from wait4(). Prints one table and exits 1 on any MISS or
ERROR.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402  (the tree generators, shared with the sandboxed runs)

MiB = 1 << 20


class Failed(Exception):
    pass


def run_timed(argv, cwd=None, stdout=subprocess.DEVNULL, ok=(0,)):
    """Run argv once; return (seconds, max RSS in bytes). Raises Failed on a bad exit."""
    errf = open(os.devnull if ok is None else os.path.join(SCRATCH, ".stderr"), "w+b")
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=errf)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if ok is not None and p.returncode not in ok:
        errf.seek(0)
        msg = errf.read().decode(errors="replace").strip().splitlines()
        errf.close()
        raise Failed("%s exited %d: %s" % (os.path.basename(argv[0]) if argv[0] != "sh" else argv[2][:40],
                                           p.returncode, msg[-1] if msg else "(no stderr)"))
    errf.close()
    return dt, ru.ru_maxrss * 1024, ru.ru_utime + ru.ru_stime


def check(argv, cwd=None, **kw):
    r = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, **kw)
    if r.returncode != 0:
        raise Failed("%s exited %d: %s" % (" ".join(argv[:3]), r.returncode,
                                           r.stderr.decode(errors="replace").strip()[-300:]))
    return r


def rm(path):
    if os.path.lexists(path):
        subprocess.run(["chmod", "-R", "u+rwX", path], stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", path], check=True)


def fresh_copy(src, dst):
    rm(dst)
    check(["cp", "-a", "--reflink=auto", src, dst])


class Contender:
    def __init__(self, name, argv, prepare=None, cleanup=None, cwd=None, ok=(0,)):
        self.name, self.argv, self.prepare, self.cleanup, self.cwd, self.ok = name, argv, prepare, cleanup, cwd, ok
        self.times, self.rss, self.cpu = [], [], []


def measure(contenders, reps, warmup=True):
    """Alternate the contenders rep by rep (order flipped every rep); return them with samples."""
    for rep in range(-1 if warmup else 0, reps):
        order = contenders if rep % 2 == 0 else list(reversed(contenders))
        for c in order:
            if c.prepare:
                c.prepare()
            os.sync()  # flush earlier writes so writeback does not land inside a timed run
            dt, rss, cpu = run_timed(c.argv() if callable(c.argv) else c.argv, cwd=c.cwd, ok=c.ok)
            if c.cleanup:
                c.cleanup()
            if rep >= 0:
                c.times.append(dt)
                c.rss.append(rss)
                c.cpu.append(cpu)
    return contenders


ROWS = []


def ms(s):
    return "%.1f ms" % (s * 1000) if s < 10 else "%.2f s" % s


def row_ratio(goal, lay, peer, limit):
    lt, pt = statistics.median(lay.times), statistics.median(peer.times)
    ratio = lt / pt
    verdict = "(info)" if limit is None else ("PASS" if ratio <= limit else "MISS")
    ROWS.append((goal, ms(lt), "%s (%s)" % (ms(pt), peer.name), "%.2fx" % ratio,
                 "<= %.1fx" % limit if limit is not None else "-", verdict,
                 "%s / %s" % (ms(statistics.median(lay.cpu)), ms(statistics.median(peer.cpu)))))
    print("  %-44s %s   samples ms: layover %s, peer %s" % (
        goal, verdict, " ".join("%.0f" % (t * 1000) for t in sorted(lay.times)),
        " ".join("%.0f" % (t * 1000) for t in sorted(peer.times))), flush=True)


def row_rss(goal, lay, peer, limit_mib):
    lr = max(lay.rss)
    pr = max(peer.rss) if peer else None
    verdict = "PASS" if lr <= limit_mib * MiB else "MISS"
    ROWS.append((goal, "%.1f MiB" % (lr / MiB), "%.1f MiB (%s)" % (pr / MiB, peer.name) if peer else "-",
                 "-", "<= %d MiB" % limit_mib, verdict, "-"))
    print("  %-44s %s" % (goal, verdict), flush=True)


def row_error(goal, err):
    ROWS.append((goal, "-", "-", "-", "-", "ERROR", "-"))
    print("  %-44s ERROR: %s" % (goal, err), flush=True)
    ERRORS.append("%s: %s" % (goal, err))


ERRORS = []


class Bench:
    def __init__(self, bindir, scratch, reps):
        self.lay = os.path.join(bindir, "layover")
        self.s = scratch
        self.reps = reps
        self.big_reps = max(3, reps - 2)
        self.sessions = []
        os.environ["LAYOVER_STATE_DIR"] = self.p("state")
        os.makedirs(self.p("state"), mode=0o700, exist_ok=True)

    def p(self, *parts):
        return os.path.join(self.s, *parts)

    def upper(self, session):
        return self.p("state", "sessions", session, "upper")

    def sandbox(self, target, session, code, *args):
        """Build an upper layer the way a user would: a sandboxed `sh -c` that writes it."""
        t0 = time.perf_counter()
        check([self.lay, "run", "--target", target, "--session", session, "--on-exit", "keep", "--",
               "sh", "-c", 'cd "$LAYOVER_TARGET" && exec python3 -c "$0" "$@"', code, *args])
        self.sessions.append(session)
        print("  built session %s in %.1f s" % (session, time.perf_counter() - t0), flush=True)

    # -- trees ---------------------------------------------------------------
    def setup(self):
        t0 = time.perf_counter()
        os.makedirs(self.p("small"))            # base for the 10k-file capture: nearly empty
        with open(self.p("small", "README"), "w") as f:
            f.write("base\n")
        os.makedirs(self.p("big"))
        gen.big_file(self.p("big", "big.bin"), 1024 * MiB)
        os.makedirs(self.p("tree"))             # base for diff and status: 10k text files
        gen.text_tree(self.p("tree"), 10000)
        print("  generated base trees in %.1f s" % (time.perf_counter() - t0), flush=True)
        self.sandbox(self.p("small"), "small", gen.SMALL_CODE, "10000")
        self.sandbox(self.p("big"), "big", gen.MODIFY_BIG_CODE, "big.bin")
        self.sandbox(self.p("tree"), "diff", gen.MODIFY_TEXT_CODE, "100")
        self.sandbox(self.p("tree"), "touch", gen.TOUCH_CODE)
        # The peer's "new" tree for diff -ruN: the base plus the same edits, made the same way.
        fresh_copy(self.p("tree"), self.p("tree-new"))
        check(["python3", "-c", gen.MODIFY_TEXT_CODE, "100"], cwd=self.p("tree-new"))

    # -- goals ---------------------------------------------------------------
    def save(self, session, goal, limit, rss_goal=None):
        out_l, out_p = self.p("save-%s.tar.zst" % session), self.p("peer-%s.tar.zst" % session)
        sdir = self.p("state", "sessions", session)
        lay = Contender("layover save", [self.lay, "save", session, "-o", out_l],
                        prepare=lambda: rm(out_l))
        peer = Contender("tar|zstd -1 -T0",
                         ["sh", "-c", 'tar -C "$1" -cf - upper | zstd -q -1 -T0 > "$2"', "sh", sdir, out_p],
                         prepare=lambda: rm(out_p))
        reps = self.reps if session != "big" else self.big_reps
        measure([lay, peer], reps, warmup=session != "big")
        row_ratio(goal, lay, peer, limit)
        if rss_goal:
            row_rss(rss_goal, lay, peer, 64)
        sizes = (os.path.getsize(out_l), os.path.getsize(out_p))
        print("    patch %.1f MiB, peer archive %.1f MiB" % (sizes[0] / MiB, sizes[1] / MiB))
        rm(out_p)
        return out_l  # kept: the apply goals use it

    def status(self):
        lay = Contender("layover status", [self.lay, "status", "small"])
        peer = Contender("find|wc -l", ["sh", "-c", 'find "$1" -type f | wc -l', "sh", self.upper("small")])
        measure([lay, peer], self.reps)
        row_ratio("status, 10k-file upper layer", lay, peer, 2.0)
        out = check([self.lay, "status", "small", "--json"]).stdout
        n = out.count(b'"kind"')
        if n < 10000:
            raise Failed("status --json listed %d changes, expected >= 10000" % n)

    def status_touched(self):
        """Not a goal: 10k copied-up but unchanged files (touch) must be hashed to be dropped."""
        lay = Contender("layover status", [self.lay, "status", "touch"])
        peer = Contender("find|wc -l", ["sh", "-c", 'find "$1" -type f | wc -l', "sh", self.upper("touch")])
        measure([lay, peer], self.reps)
        row_ratio("status, 10k touched (unchanged) files", lay, peer, None)

    def apply(self, patch, base, goal, limit, rss_goal=None, big=False):
        # Each rep gets a target of its own, removed only after the goal: on
        # ext4 without a journal, files created right after thousands were
        # deleted make every create scan the freed inodes (recently_deleted),
        # which once made both sides 10-20x slower and the ratio noise. The
        # 1 GiB case (one file, little space to spare) reuses its target.
        made = []
        cur = {}

        def fresh(kind):
            if big:
                d = self.p("apply-%s" % kind)
                fresh_copy(base, d)
            else:
                d = self.p("apply-%s-%d" % (kind, len(made)))
                check(["cp", "-a", "--reflink=auto", base, d])
                made.append(d)
            cur[kind] = d

        lay = Contender("layover apply", lambda: [self.lay, "apply", patch, "--target", cur["l"], "--yes"],
                        prepare=lambda: fresh("l"))
        peer = Contender("tar --zstd -xf", lambda: ["tar", "--zstd", "-xf", patch, "-C", cur["p"]],
                         prepare=lambda: fresh("p"))
        measure([lay, peer], self.big_reps if big else self.reps, warmup=not big)
        row_ratio(goal, lay, peer, limit)
        if rss_goal:
            row_rss(rss_goal, lay, peer, 64)
        # The last layover apply must really have written the tree.
        d_l = cur["l"]
        if big:
            with open(os.path.join(d_l, "big.bin"), "rb") as f:
                f.seek(gen.BIG_EDIT_AT)
                if f.read(len(gen.BIG_EDIT)) != gen.BIG_EDIT:
                    raise Failed("apply did not write the modified big.bin")
        else:
            n = sum(len(fs) for _, _, fs in os.walk(os.path.join(d_l, "gen")))
            if n != 10000:
                raise Failed("apply wrote %d files, expected 10000" % n)
        for d in made + [cur["l"], cur["p"]]:
            rm(d)

    def diff(self):
        lay = Contender("layover diff", [self.lay, "diff", "diff"], ok=(1,))
        peer = Contender("diff -ruN", ["diff", "-ruN", "tree", "tree-new"], cwd=self.s, ok=(1,))
        measure([lay, peer], self.reps)
        row_ratio("diff, 100 changed of 10k files", lay, peer, 1.0)
        out = subprocess.run([self.lay, "diff", "diff"], capture_output=True).stdout
        n = out.count(b"\ndiff --git ") + out.startswith(b"diff --git ")
        if n != 100:
            raise Failed("layover diff showed %d files, expected 100" % n)

    def startup(self):
        target = self.p("small")
        reps = max(15, self.reps * 3)
        lay = Contender("layover run", [self.lay, "run", "--target", target, "--on-exit", "discard", "--", "true"])
        peers = [Contender("unshare -rm", ["unshare", "-rm", "true"])]
        bwrap = shutil.which("bwrap")
        if bwrap:
            peers.append(Contender("bwrap minimal", [bwrap, "--unshare-all", "--dev-bind", "/", "/", "true"]))
            peers.append(Contender("bwrap comparable",
                                   [bwrap, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/",
                                    "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp",
                                    "--bind", target, target, "true"]))
        else:
            print("  note: bwrap not installed; bubblewrap peers skipped (see bench.sh output)")
        measure([lay] + peers, reps)
        for peer in peers:
            row_ratio("run start-up vs %s" % peer.name, lay, peer, None)

    def cleanup(self):
        for s in self.sessions:
            subprocess.run([self.lay, "discard", s], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def guarded(goal, fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except Failed as e:
        row_error(goal, str(e))
    except OSError as e:
        row_error(goal, "%s: %s" % (type(e).__name__, e))
    return None


def print_table():
    head = ("goal", "layover", "peer (same run)", "ratio", "goal", "result", "cpu layover / peer")
    w = [max(len(str(r[i])) for r in ROWS + [head]) for i in range(len(head))]
    fmt = "  ".join("%%-%ds" % x for x in w)
    print()
    print(fmt % head)
    print(fmt % tuple("-" * x for x in w))
    for r in ROWS:
        print(fmt % r)
    verdicts = [r[5] for r in ROWS]
    print("\n%d PASS, %d MISS, %d ERROR (goals); %d info rows" % (
        verdicts.count("PASS"), verdicts.count("MISS"), verdicts.count("ERROR"), verdicts.count("(info)")))
    for e in ERRORS:
        print("error: " + e)


def main():
    global SCRATCH
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="", help="comma list: capture,status,apply,diff,startup")
    a = ap.parse_args()
    SCRATCH = a.scratch
    only = set(filter(None, a.only.split(",")))
    want = lambda k: not only or k in only  # noqa: E731
    b = Bench(a.bin, a.scratch, a.reps)
    load0 = os.getloadavg()[0]
    print("layover bench: %d reps (1 GiB cases: %d), median times, scratch %s, %d cpus, load %.2f" % (
        b.reps, b.big_reps, a.scratch, os.cpu_count(), load0), flush=True)
    try:
        try:
            b.setup()
        except Failed as e:
            row_error("setup (sandboxed tree generation)", str(e))
            print_table()
            return 1
        p_small = p_big = None
        if want("capture") or want("apply"):
            p_small = guarded("save, 10k x 4 KiB files", b.save, "small", "save, 10k x 4 KiB files", 1.0)
            p_big = guarded("save, one 1 GiB modified file", b.save, "big", "save, one 1 GiB modified file", 1.2,
                            rss_goal="save RSS, 1 GiB file")
        if want("status"):
            guarded("status, 10k-file upper layer", b.status)
            guarded("status, 10k touched (unchanged) files", b.status_touched)
        if want("apply"):
            if p_small:
                guarded("apply, 10k x 4 KiB files", b.apply, p_small, b.p("small"),
                        "apply, 10k x 4 KiB files", 1.5)
            if p_big:
                guarded("apply, one 1 GiB file", b.apply, p_big, b.p("big"), "apply, one 1 GiB file", 1.5,
                        rss_goal="apply RSS, 1 GiB file", big=True)
        if want("diff"):
            guarded("diff, 100 changed of 10k files", b.diff)
        if want("startup"):
            guarded("run start-up", b.startup)
    finally:
        b.cleanup()
    print_table()
    load1 = os.getloadavg()[0]
    if max(load0, load1) > 0.5 * (os.cpu_count() or 1):
        print("warning: load average was %.2f at start, %.2f at end on %d cpus: other work shared the machine, "
              "so the times are noisy (the ratios less so: contenders alternate)" % (load0, load1, os.cpu_count()))
    return 0 if all(r[5] in ("PASS", "(info)") for r in ROWS) else 1


SCRATCH = "/tmp"
if __name__ == "__main__":
    sys.exit(main())
