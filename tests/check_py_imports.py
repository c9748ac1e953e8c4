"""Part of `make check-layers`: no import cycle among python/layover's modules
(counting every `from .x import` and `import layover.x`, TYPE_CHECKING ones too)."""
import re
import sys
from pathlib import Path

pkg = Path(__file__).resolve().parents[1] / "python" / "layover"
graph = {}
for f in pkg.glob("*.py"):
    text = f.read_text()
    deps = set(re.findall(r"^\s*from \.(\w+) import", text, re.M))
    deps |= set(re.findall(r"^\s*import layover\.(\w+)", text, re.M))
    graph[f.stem] = deps - {f.stem}


def cycle_from(node, path, done):
    if node in path:
        return path[path.index(node):] + [node]
    if node in done:
        return None
    done.add(node)
    for d in sorted(graph.get(node, ())):
        c = cycle_from(d, path + [node], done)
        if c:
            return c
    return None


done = set()
for n in sorted(graph):
    c = cycle_from(n, [], done)
    if c:
        print("check-layers: python modules import each other: " + " -> ".join(c), file=sys.stderr)
        sys.exit(1)
