#!/usr/bin/env python3
"""tests/figures.py: the gateway's structure in a few numbers, the ones the
front-door issue (a route table, opaque sessions, one work queue, `vitrine
serve` in three steps) is measured by. Read-only; prints, never fails.

    python3 tests/figures.py [REPO_DIR]

On an old commit: git worktree add /tmp/old REV && python3 tests/figures.py /tmp/old

Printed:
  - the largest include cycle inside each room of gateway/ (modules: x.c,
    x.h and x_int.h are one), as tests/rooms.py counts them;
  - the places naming route kinds: the R_* enum members and, per file,
    the `case R_...:` labels (a switch over routes is a place a new route
    must be written);
  - the files outside gateway/session/ that read struct sess's fields
    (through a pointer named s, sess or the like: `s->field` where field
    is one of struct sess's);
  - the threads: pthread_create calls, per file;
  - the loop timers: lws_sul_schedule calls, per file;
  - the length of cmd_serve (lines, returns, calls of registry_close).
"""
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import include_graph  # noqa: E402

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
gw = os.path.join(repo, "gateway")


def sources():
    for root, _, files in os.walk(gw):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.join(root, f)
                with open(path, errors="replace") as fh:
                    yield os.path.relpath(path, gw), fh.read()


SRC = dict(sources())


def largest_cycles():
    """Per room, its largest include circle (arrows inside the room only)."""
    modules, edges = include_graph.read(gw)
    inside = {(a, b) for a, b in edges if modules[a] == modules.get(b)}
    best = {}
    for comp in include_graph.components(modules, inside):
        room = modules[comp[0]]
        if len(comp) > len(best.get(room, [])):
            best[room] = comp
    return [(r, best.get(r, [None])) for r in sorted(set(modules.values()))]


def struct_fields(text, name):
    """The member names of struct name as text defines it (one level)."""
    m = re.search(r"^struct %s \{(.*?)^\};" % name, text, re.S | re.M)
    if not m:
        return set()
    body = re.sub(r"/\*.*?\*/|//[^\n]*", "", m.group(1), flags=re.S)
    fields = set()
    for decl in body.split(";"):
        decl = re.sub(r"\[[^]]*\]|:\s*\d+", "", decl)
        for part in decl.split(","):
            ids = re.findall(r"[A-Za-z_]\w*", part)
            if ids:
                fields.add(ids[-1])
    return fields


def main():
    print("largest include cycle inside each room (modules):")
    for room, comp in largest_cycles():
        size = 0 if comp == [None] else len(comp)
        print("  %-10s %2d%s" % (room, size if size > 1 else 0,
                                  "  (" + " ".join(os.path.basename(c) for c in comp) + ")"
                                  if size > 1 else ""))

    routes_h = SRC.get("api/routes.h", "")
    enum = re.search(r"enum route_kind \{(.*?)\};", routes_h, re.S)
    # The kinds: the enum's members, or the X-macro list it is made from.
    kinds = re.findall(r"\bX\((R_[A-Z0-9_]+)", routes_h) or (
        re.findall(r"\bR_[A-Z0-9_]+", enum.group(1)) if enum else [])
    cases = Counter()
    for rel, text in SRC.items():
        n = len(re.findall(r"\bcase R_[A-Z0-9_]+\s*:", text))
        if n:
            cases[rel] = n
    print("\nroute kinds: %d; `case R_...:` labels in %d files (%d labels)"
          % (len(kinds), len(cases), sum(cases.values())))
    for rel, n in sorted(cases.items()):
        print("  %-28s %3d" % (rel, n))

    header = next((t for r, t in SRC.items() if re.search(r"^struct sess \{", t, re.M)), "")
    fields = struct_fields(header, "sess")
    use = re.compile(r"\b(?:s|sess|ss|child|parent|src|owner)->(\w+)")
    seen = Counter()
    for rel, text in SRC.items():
        if rel.startswith("session/"):
            continue
        n = sum(1 for m in use.finditer(text) if m.group(1) in fields)
        if n:
            seen[rel] = n
    print("\nstruct sess: %d fields; files outside session/ reading them: %d (%d reads)"
          % (len(fields), len(seen), sum(seen.values())))

    for what, pat in (("threads (pthread_create calls)", r"\bpthread_create\("),
                      ("loop timers (lws_sul_schedule calls)", r"\blws_sul_schedule\(")):
        per = Counter({rel: len(re.findall(pat, t)) for rel, t in SRC.items()})
        per = +per
        print("\n%s: %d in %d files" % (what, sum(per.values()), len(per)))
        for rel, n in sorted(per.items()):
            print("  %-28s %3d" % (rel, n))

    serve = SRC.get("cli/cmd_serve.c", "")
    m = re.search(r"^int cmd_serve\(.*?^\}", serve, re.S | re.M)
    body = m.group(0) if m else ""
    print("\ncmd_serve: %d lines, %d returns, %d calls of registry_close"
          % (body.count("\n") + 1 if body else 0, len(re.findall(r"\breturn\b", body)),
             len(re.findall(r"\bregistry_close\(", body))))


main()
