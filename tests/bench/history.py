"""Session history rows of `make bench` (docs/history.md, issue 23)."""
import os

import gen
from core import Contender, Failed


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
