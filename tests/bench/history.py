"""Session history rows of `make bench` (docs/history.md, issue 23): fork of
a session whose step holds N files costs <= 20 ms and the same as of a
100-file session (<= 1.5x: the fork refers to the layer store's layers, it
copies nothing); checkpoint of a 10,000-file live upper."""
import os
import statistics

import gen
from core import Contender, Failed, fmt_s


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


def _files(root):
    return sum(len(fs) for _, _, fs in os.walk(root))


def checkpoint(b):
    """`layover checkpoint` of a kept session whose live upper holds n files,
    against one whose live upper holds one file, and against the issue's
    20 ms. Each rep freezes the live upper as step 1; its prepare puts the
    layer back (renamed to upper/, its record removed), outside the timing."""
    many, one = "ck-many", "ck-one"
    b.sandbox(b.p("small"), many, gen.SMALL_CODE, str(b.n))
    b.sandbox(b.p("small"), one, gen.SMALL_CODE, "1")

    def back(name):
        d = b.p("state", "sessions", name)

        def prepare():
            layer = os.path.join(d, "steps", "0001")
            if os.path.isdir(layer):
                os.rmdir(os.path.join(d, "upper"))  # the fresh, empty one
                os.rename(layer, os.path.join(d, "upper"))
                os.unlink(layer + ".json")
        return prepare

    def frozen(name, count):
        def verify():
            layer = b.p("state", "sessions", name, "steps", "0001")
            if not os.path.isdir(layer) or _files(layer) != count or os.listdir(b.upper(name)):
                raise Failed("checkpoint of %s did not freeze its %d files as step 1" % (name, count))
        return verify

    c_many = Contender("%s-file live upper" % b.thousands(b.n), [b.lay, "checkpoint", many], prepare=back(many),
                       verify=frozen(many, b.n))
    c_one = Contender("1-file live upper", [b.lay, "checkpoint", one], prepare=back(one), verify=frozen(one, 1))
    b.measure([c_many, c_one])
    b.res.ratio("checkpoint, %s-file live upper" % b.thousands(b.n), c_many, c_one, 2.0)
    budget = Contender("the issue's 20 ms", None)
    budget.times = [0.020] * len(c_many.times)
    b.res.ratio("checkpoint, %s files, time" % b.thousands(b.n), c_many, budget, 1.0)
