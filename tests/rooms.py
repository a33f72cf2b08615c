#!/usr/bin/env python3
"""tests/rooms.py: measures the gateway's include graph and holds it against
the rooms docs/architecture.md allows.

Modules are file stems (x.c, x.h and a private x_int.h are one module). Printed: the modules,
the include arrows between them, the largest cycle of modules (a strongly
connected component), the arrows inside cycles (each runs "back up" somewhere),
and, where gateway/ has sub-folders, the arrows between rooms that the
```rooms``` block of docs/architecture.md does not allow and any cycle of
rooms, and any include circle inside a room of more than 3 modules; and,
whatever the rooms block says, any file of the front door (api/) that
includes a door's (e2b/) or names E2B at all: a door registers itself with
the front door (api/door.h), which knows nothing of it. Exit 1 when a room
rule is broken, rooms form a cycle, a room holds such a circle or the front
door knows a door; 0 otherwise.

Run it on any checkout: python3 tests/rooms.py [REPO_DIR] (also on an old
commit: git worktree add /tmp/old REV && python3 tests/rooms.py /tmp/old).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import include_graph  # noqa: E402

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
gw = os.path.join(repo, "gateway")
modules, edges = include_graph.read(gw)  # {"api/http": room}, {(from, to)}
sccs = include_graph.components(modules, edges)
cycles = [c for c in sccs if len(c) > 1]
comp_of = {m: i for i, c in enumerate(sccs) for m in c}
in_cycles = [(s, d) for s, d in edges if comp_of.get(s) == comp_of.get(d)]
largest = max((len(c) for c in cycles), default=0)
print(f"gateway: {len(modules)} modules, {len(edges)} include arrows")
print(f"module cycles: {len(cycles)}, largest {largest} modules"
      + (f" ({' '.join(max(cycles, key=len))})" if cycles else ""))
print(f"arrows inside cycles: {len(in_cycles)}")

rooms = sorted(set(modules.values()) - {"."})
if not rooms:
    sys.exit(0)

allowed = {}
doc = os.path.join(repo, "docs", "architecture.md")
if os.path.exists(doc):
    text = open(doc).read()
    block = re.search(r"```rooms\n(.*?)```", text, re.S)
    for line in (block.group(1) if block else "").splitlines():
        if ":" in line:
            room, deps = line.split(":", 1)
            allowed[room.strip()] = set(deps.split())

room_edges = {}
for s, d in edges:
    rs, rd = modules[s], modules.get(d)
    if rd is None:
        print(f"include of a missing module: {s} -> {d}")
        continue
    if rs != rd:
        room_edges.setdefault((rs, rd), []).append(f"{s} -> {d}")
bad = 0
for (rs, rd), why in sorted(room_edges.items()):
    if rs == "." or rd not in allowed.get(rs, set()):
        bad += 1
        print(f"arrow not allowed: {rs} -> {rd} ({why[0]}{' ...' if len(why) > 1 else ''})")
for r in rooms:
    if r not in allowed:
        bad += 1
        print(f"room without a rule in docs/architecture.md: {r}")
if "." in set(modules.values()):
    bad += 1
    print("files directly in gateway/: every file belongs to a room")
# The front door knows no door: none of its files includes a door's, or
# names E2B (in code, strings or comments), whatever the rooms block allows.
FRONT, DOORS = "api", ("e2b",)
for (rs, rd), why in sorted(room_edges.items()):
    if rs == FRONT and rd in DOORS:
        for w in why:
            bad += 1
            print(f"the front door includes a door: {w}")
front = os.path.join(gw, FRONT)
for f in sorted(os.listdir(front)) if os.path.isdir(front) else []:
    with open(os.path.join(front, f), errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if any(d in line.lower() for d in DOORS):
                bad += 1
                print(f"the front door names a door: {FRONT}/{f}:{n}: {line.strip()}")
# A session is session/'s own: struct sess and the jobs' insides are in
# private headers that no file of another room includes.
PRIVATE = ("gateway/session/session_int.h", "gateway/session/job_int.h",
           "gateway/session/job_kind.h")
for root, _, files in os.walk(gw):
    for f in sorted(files):
        rel = os.path.relpath(os.path.join(root, f), gw)
        if rel.startswith("session/") or not f.endswith((".c", ".h")):
            continue
        with open(os.path.join(root, f), errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if any('#include "%s"' % h in line for h in PRIVATE):
                    bad += 1
                    print(f"a private header of session/ included by {rel}:{n}: {line.strip()}")
# Inside a room, includes may go both ways between a few modules, no more.
MAX_CIRCLE = 3
for c in cycles:
    inside = {modules[m] for m in c}
    if len(inside) == 1 and len(c) > MAX_CIRCLE:
        bad += 1
        print(f"include circle of {len(c)} modules inside {inside.pop()} (at most {MAX_CIRCLE}): "
              f"{' '.join(c)}")

# Rooms form a cycle?
rgraph = {}
for rs, rd in room_edges:
    rgraph.setdefault(rs, set()).add(rd)
state, cyc = {}, []


def visit(n, path):
    state[n] = 1
    for m in sorted(rgraph.get(n, ())):
        if state.get(m) == 1 and not cyc:
            cyc.extend(path[path.index(m):] + [m])
        elif not state.get(m):
            visit(m, path + [m])
    state[n] = 2


for n in sorted(rgraph):
    if not state.get(n):
        visit(n, [n])
print(f"rooms: {len(rooms)} ({' '.join(rooms)}), {len(room_edges)} arrows between them, "
      f"{bad} not allowed, room cycle: {' -> '.join(cyc) if cyc else 'none'}")
sys.exit(1 if bad or cyc else 0)
