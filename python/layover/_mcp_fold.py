"""The `changes` tool's listing folds a new directory into one line, as
`layover status` does (capture/scan/entry/summary.cc, `fold_at`): `A  src/  (2
files, 1.2 KiB)` stands for `src/` and all it holds. A subtree with an
entry that has a risk mark is never folded away, so the mark is seen."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

_FOLDS = ("added", "opaque_dir")


def bytes_text(n: int) -> str:
    """As the helper's base::bytes_text: `512 B`, `1.2 KiB`, `34 MiB`."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    v, u = float(n), 0
    while v >= 1024 and u < len(units) - 1:
        v, u = v / 1024, u + 1
    if u == 0:
        return "%d B" % n
    return ("%.1f %s" if v < 10 else "%.0f %s") % (v, units[u])


def fold(out: List[Dict[str, Any]], i: int) -> Tuple[int, str]:
    """The end of the run of entries out[i] stands for, and its note
    (`2 files, 1.2 KiB`); (i + 1, "") when nothing is folded."""
    d = out[i]
    if d["type"] != "dir" or d["kind"] not in _FOLDS:
        return i + 1, ""
    prefix = d["path"] + "/"
    end, files, size, sized = i + 1, 0, 0, True
    while end < len(out) and out[end]["path"].startswith(prefix):
        c = out[end]
        if c["risks"]:
            return i + 1, ""
        if c["type"] != "dir":
            files += 1
            sized = sized and c["size"] is not None
            size += c["size"] or 0
        end += 1
    if end == i + 1:
        return end, ""
    note = "{:,} file{}".format(files, "" if files == 1 else "s")
    return end, note + (", " + bytes_text(size) if sized else "")
