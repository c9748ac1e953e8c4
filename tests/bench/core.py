"""The measuring core of `make bench` (stdlib only): contenders, interleaved
reps that each check their own result, rows with median and min, the machine
they ran on, results.json, and the last line `bench: N met, M missed`.

Rules (issue 20):
- Each rep of every contender starts from the same state, made the same way
  (its `prepare`), outside the timing; `os.sync()` before each timed run so
  earlier writeback does not land inside it.
- Contenders alternate A B A B within a row, after one untimed warm-up rep
  each (the same warm cache for both), except where a row says otherwise.
- Every rep runs its contender's `verify` after the timing: a rep whose
  command failed or whose result is wrong makes the row ERROR, never a time.
- A gated row is met when median(layover) / median(peer) <= its goal; ERROR
  rows count as missed.
"""
import json
import os
import platform
import statistics
import subprocess
import time

MiB = 1 << 20
SYNC = True  # os.sync() before each timed run (off in the smoke run)


class Failed(Exception):
    pass


def run_timed(argv, cwd=None, env=None, ok=(0,), errfile=None, pass_fds=()):
    """Run argv once; return (seconds, max RSS bytes, cpu seconds). Raises Failed on a bad exit."""
    errf = open(errfile or os.devnull, "w+b")
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf,
                         pass_fds=pass_fds)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if ok is not None and code not in ok:
        msg = b""
        if errfile:
            errf.seek(0)
            msg = errf.read()
        errf.close()
        last = msg.decode(errors="replace").strip().splitlines()
        raise Failed("%s exited %d: %s" % (os.path.basename(argv[0]) if argv[0] != "sh" else argv[2][:50], code,
                                           last[-1] if last else "(no stderr)"))
    errf.close()
    return dt, ru.ru_maxrss * 1024, ru.ru_utime + ru.ru_stime


def check(argv, cwd=None, **kw):
    r = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, **kw)
    if r.returncode != 0:
        raise Failed("%s exited %d: %s" % (" ".join(str(a) for a in argv[:3]), r.returncode,
                                           r.stderr.decode(errors="replace").strip()[-300:]))
    return r


def rm(path):
    if os.path.lexists(path):
        subprocess.run(["chmod", "-R", "u+rwX", path], stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", path], check=True)


def fresh_copy(src, dst):
    rm(dst)
    check(["cp", "-a", "--reflink=auto", src, dst])


def new_target(cur, made, key, base, where, prefix):
    """A new dir under where for the next rep of key (cur[key]), a fresh copy
    of base; made lists every dir made, removed only after the row."""
    cur[key] = os.path.join(where, "%s%s%d" % (prefix, key, len(made)))
    made.append(cur[key])
    fresh_copy(base, cur[key])


def count_files(root):
    return sum(len(fs) for _, _, fs in os.walk(root))


class Contender:
    """argv and pass_fds may be callables (evaluated after prepare); verify() raises Failed."""

    def __init__(self, name, argv, prepare=None, verify=None, cleanup=None, cwd=None, ok=(0,), timer=None,
                 pass_fds=()):
        self.name, self.argv, self.prepare, self.verify, self.cleanup = name, argv, prepare, verify, cleanup
        self.cwd, self.ok, self.pass_fds = cwd, ok, pass_fds
        self.timer = timer  # a callable returning seconds, for in-process work (Python rows)
        self.times, self.rss, self.cpu = [], [], []

    def once(self, errfile):
        if self.prepare:
            self.prepare()
        if SYNC:
            os.sync()
        if self.timer:
            dt, rss, cpu = self.timer(), 0, 0.0
        else:
            dt, rss, cpu = run_timed(self.argv() if callable(self.argv) else self.argv, cwd=self.cwd, ok=self.ok,
                                     errfile=errfile,
                                     pass_fds=self.pass_fds() if callable(self.pass_fds) else self.pass_fds)
        if self.verify:
            self.verify()
        if self.cleanup:
            self.cleanup()
        return dt, rss, cpu


def measure(contenders, reps, warmup=True, errfile=None):
    """A B A B ...: each rep runs every contender once, in the same order."""
    for rep in range(-1 if warmup else 0, reps):
        for c in contenders:
            dt, rss, cpu = c.once(errfile)
            if rep >= 0:
                c.times.append(dt)
                c.rss.append(rss)
                c.cpu.append(cpu)
    return contenders


def compile_c(source, out, *flags):
    """A C program the bench measures against (a floor), built at `out`; None without a C compiler."""
    import shutil
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    with open(out + ".c", "w") as f:
        f.write(source)
    check([cc, "-O2", *flags, "-o", out, out + ".c"])
    return out


def fmt_s(s):
    return "%.2f ms" % (s * 1000) if s < 0.01 else "%.1f ms" % (s * 1000) if s < 10 else "%.2f s" % s


class Results:
    def __init__(self):
        self.rows = []

    def ratio(self, goal, lay, peer, limit, note=""):
        lm, pm = statistics.median(lay.times), statistics.median(peer.times)
        r = lm / pm if pm > 0 else float("inf")
        verdict = "info" if limit is None else ("met" if r <= limit else "MISS")
        self._add(goal, verdict, layover=fmt_s(lm), layover_min=fmt_s(min(lay.times)),
                  peer="%s (%s)" % (fmt_s(pm), peer.name), peer_min=fmt_s(min(peer.times)),
                  ratio="%.2fx" % r, limit="<= %.1fx" % limit if limit is not None else "-",
                  reps=len(lay.times), note=note,
                  raw={"layover_s": lay.times, "peer_s": peer.times, "ratio": r, "limit": limit})

    def rss(self, goal, lay, limit_mib):
        peak = max(lay.rss)
        verdict = "met" if peak <= limit_mib * MiB else "MISS"
        self._add(goal, verdict, layover="%.1f MiB" % (peak / MiB), layover_min="-", peer="%d MiB (budget)" % limit_mib,
                  peer_min="-", ratio="%.2fx" % (peak / (limit_mib * MiB)), limit="<= 1.0x", reps=len(lay.rss),
                  note="", raw={"peak_rss_bytes": peak, "limit_bytes": limit_mib * MiB})

    def error(self, goal, err):
        self._add(goal, "ERROR", layover="-", layover_min="-", peer="-", peer_min="-", ratio="-", limit="-", reps=0,
                  note=err, raw={"error": err})
        print("  %-46s ERROR: %s" % (goal, err), flush=True)

    def _add(self, goal, verdict, **kw):
        self.rows.append(dict(goal=goal, verdict=verdict, **kw))
        if verdict != "ERROR":
            print("  %-46s %-5s %s vs %s = %s" % (goal, verdict, kw["layover"], kw["peer"], kw["ratio"]), flush=True)

    def counts(self):
        gated = [r for r in self.rows if r["verdict"] != "info"]
        met = sum(1 for r in gated if r["verdict"] == "met")
        return met, len(gated) - met

    def table(self):
        cols = [("goal", "goal"), ("layover", "layover median"), ("layover_min", "min"),
                ("peer", "peer median (same run)"), ("peer_min", "min"), ("ratio", "ratio"), ("limit", "goal"),
                ("verdict", "result")]
        w = [max(len(str(r[k])) for r in self.rows + [dict((k, h) for k, h in cols)]) for k, _ in cols]
        fmt = "  ".join("%%-%ds" % x for x in w)
        lines = [fmt % tuple(h for _, h in cols), fmt % tuple("-" * x for x in w)]
        lines += [fmt % tuple(str(r[k]) for k, _ in cols) for r in self.rows]
        lines += ["error: %s: %s" % (r["goal"], r["note"]) for r in self.rows if r["verdict"] == "ERROR"]
        return "\n".join(lines)

    def write_json(self, path, machine):
        met, missed = self.counts()
        doc = {"machine": machine, "met": met, "missed": missed,
               "rows": [dict((k, v) for k, v in r.items()) for r in self.rows]}
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)


def fs_of(path):
    """(type, mount options) of the filesystem holding path, from mountinfo."""
    best, st_dev = None, os.stat(path).st_dev
    with open("/proc/self/mountinfo") as f:
        for line in f:
            a, _, b = line.partition(" - ")
            fields, rest = a.split(), b.split()
            major, minor = (int(x) for x in fields[2].split(":"))
            if os.makedev(major, minor) == st_dev and (best is None or len(fields[4]) > len(best[0])):
                best = (fields[4], rest[0], fields[5] + "," + (rest[2] if len(rest) > 2 else ""))
    return (best[1], best[2]) if best else ("?", "?")


def busy_share(seconds=1.0):
    """The share of all CPUs' time spent busy (not idle, not waiting on
    I/O) over `seconds` while this process sleeps: other work on the
    machine, unlike the load average, which still counts the last minute's
    work (a build or the bench's own reps) for a while after it ended."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]
    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return 1.0 - (i1 - i0) / (t1 - t0) if t1 > t0 else None


def machine(scratch):
    fstype, opts = fs_of(scratch)
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "?")
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model, "kernel": platform.release(),
            "fixtures_fs": fstype, "fixtures_mount_options": opts, "load_at_start": os.getloadavg()[0],
            "busy_at_start": busy_share()}


def machine_lines(m):
    return ["machine: %d CPUs (%s), kernel %s" % (m["cpus"], m["cpu_model"], m["kernel"]),
            "fixtures: %s, mounted %s" % (m["fixtures_fs"], m["fixtures_mount_options"]),
            "load average at start: %.2f; CPUs busy in the second before: %s" % (
                m["load_at_start"], "?" if m["busy_at_start"] is None else "%.0f%%" % (100 * m["busy_at_start"]))]


def absolute(res, goal, lay, limit_s, note=""):
    """A row against a fixed budget (seconds) rather than a peer."""
    lm = statistics.median(lay.times)
    res._add(goal, "met" if lm <= limit_s else "MISS", layover=fmt_s(lm), layover_min=fmt_s(min(lay.times)),
             peer="%s (budget)" % fmt_s(limit_s), peer_min="-", ratio="%.2fx" % (lm / limit_s),
             limit="<= 1.0x", reps=len(lay.times), note=note,
             raw={"layover_s": lay.times, "limit_s": limit_s, "ratio": lm / limit_s})


def size_ratio(res, goal, size, peer_size, peer_name, limit):
    """Bytes against bytes (a patch's size against a peer's)."""
    r = size / peer_size if peer_size else float("inf")
    res._add(goal, "met" if r <= limit else "MISS", layover="%.1f MiB" % (size / MiB), layover_min="-",
             peer="%.1f MiB (%s)" % (peer_size / MiB, peer_name), peer_min="-", ratio="%.2fx" % r,
             limit="<= %.1fx" % limit, reps=1, note="", raw={"bytes": size, "peer_bytes": peer_size, "ratio": r})
