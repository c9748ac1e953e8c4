"""The fork row (issue 23, docs/history.md): `layover fork` of a session whose
step holds N files costs <= 20 ms, and the same as of a 100-file session
(<= 1.5x): the fork refers to the layer store's layers, it copies nothing."""
import statistics

from core import Contender, fmt_s
import gen


def absolute(res, goal, lay, limit_s):
    """A row against a fixed budget (no peer): the median must be <= limit_s."""
    m = statistics.median(lay.times)
    res._add(goal, "met" if m <= limit_s else "MISS", layover=fmt_s(m), layover_min=fmt_s(min(lay.times)),
             peer="%s (budget)" % fmt_s(limit_s), peer_min="-", ratio="%.2fx" % (m / limit_s),
             limit="<= 1.0x", reps=len(lay.times), note="", raw={"layover_s": lay.times, "limit_s": limit_s})


def fork_rows(b, n_label):
    for session, files in (("fork-many", b.n), ("fork-few", 100)):
        b.sandbox(b.p("small"), session, gen.SMALL_CODE, str(files))
        b.sandbox(b.p("small"), session, "pass")  # resuming freezes the first run as step 1
    cur = {"i": 0}

    def fork_of(src):
        def argv():
            cur["i"] += 1
            return [b.lay, "fork", src, "f%d" % cur["i"], "--at", "1"]
        return argv

    many = Contender("fork, %s files" % n_label, fork_of("fork-many"))
    few = Contender("fork, 100 files", fork_of("fork-few"))
    b.measure([many, few], max(b.reps, 5) if not b.smoke else 1)
    absolute(b.res, "fork, %s-file session" % n_label, many, 0.020)
    b.res.ratio("fork, %s files vs 100" % n_label, many, few, 1.5)
