"""tests/include_graph.py: the gateway's include graph, read from the tree,
for tests/rooms.py (the room rules) and tests/figures.py (the figures).

Modules are file stems (x.c, x.h and a private x_int.h are one module), each
in the room its folder names; an arrow is an #include "gateway/..." of
another module. components() gives the strongly connected components
(Tarjan's), each sorted, in the order Tarjan finds them when it walks the
modules and their arrows in sorted order.
"""
import os
import re
import sys

INCLUDE = re.compile(r'#include\s+"gateway/([^"]+)"')


def module_of(rel):
    """The module of a file path relative to gateway/ ("api/http.c" -> "api/http")."""
    mod = rel[:-2]
    return mod[:-4] if mod.endswith("_int") else mod


def read(gw):
    """({module: room}, {(from module, to module)}) of the tree under gw."""
    modules, edges = {}, set()
    for root, _, files in os.walk(gw):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, gw)
            mod = module_of(rel)
            modules[mod] = os.path.dirname(rel) or "."
            with open(path, errors="replace") as fh:
                for m in INCLUDE.finditer(fh.read()):
                    dst = module_of(m.group(1))
                    if dst != mod:
                        edges.add((mod, dst))
    return modules, edges


def components(nodes, edges):
    """The strongly connected components of nodes under edges, each sorted."""
    graph = {}
    for s, d in edges:
        graph.setdefault(s, set()).add(d)
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out
