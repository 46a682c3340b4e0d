#!/usr/bin/env python3
"""check_layering.py ROOT — checks that the `#include "..."` lines of preload/ and
analyzer/ follow the rooms of tests/layout/layers.txt: calls (and so includes) go
downward only.

A quoted include is resolved as the compiler would find it in this project: relative
to the including file first, else by file name among the headers of preload/,
analyzer/, common/ and include/ (the build puts every room on the include path). It
fails (exit 1, one `file:line: what` per problem) on:
  - an include of a folder above the includer's, or beside it on the same level;
  - an include of the other tree (the preload and the analyzer share only common/
    and include/);
  - a header name that two files of the project share (which one is meant depends
    on the include path order);
  - a source file of a tree outside every room of its line;
  - a cycle between folders (also reported on its own, whatever the rule above says).
Includes that name no file of the project (system and library headers) are ignored.
Exit 0 when all hold, 2 on bad usage or an unreadable layers file."""
import os
import re
import sys

INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def load_layers(path):
    trees = {}
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                raise ValueError("%s:%d: expected 'tree: room > room ...'" % (path, n))
            tree, rest = line.split(":", 1)
            levels = [lvl.split() for lvl in rest.split(">")]
            rank = {}
            for i, lvl in enumerate(levels):
                for room in lvl:
                    rank[room] = len(levels) - i
            trees[tree.strip()] = rank
    return trees


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def room_of(root, path):
    """(tree, room) of a project file: room is None for a file directly in the tree,
    tree is 'base' for common/ and include/."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] in ("common", "include"):
        return "base", None
    return rel[0], (rel[1] if len(rel) > 2 else None)


def sccs(graph):
    """Tarjan: strongly connected components with more than one node."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
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
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    try:
        trees = load_layers(os.path.join(root, "tests", "layout", "layers.txt"))
    except (OSError, ValueError) as ex:
        print("check_layering.py: %s" % ex, file=sys.stderr)
        return 2
    by_name = {}
    for top in list(trees) + ["common", "include"]:
        for p in sources(root, top):
            if p.endswith(".h"):
                by_name.setdefault(os.path.basename(p), []).append(p)
    bad, graph, edges = [], {}, 0
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1:
            bad.append("%s: header name used %d times: %s" % (name, len(paths),
                       ", ".join(os.path.relpath(p, root) for p in paths)))
    for tree, rank in trees.items():
        for src in sources(root, tree):
            rel = os.path.relpath(src, root)
            _, room = room_of(root, src)
            if room not in rank:
                bad.append("%s:1: outside every room of %s/ (%s)" % (rel, tree, " ".join(sorted(rank))))
                continue
            with open(src, errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = INC.match(line)
                    if not m:
                        continue
                    target = os.path.normpath(os.path.join(os.path.dirname(src), m.group(1)))
                    if not os.path.isfile(target):
                        hits = by_name.get(os.path.basename(m.group(1)), [])
                        if not hits:
                            continue
                        target = hits[0]
                    ttree, troom = room_of(root, target)
                    edges += 1
                    if ttree == "base" or (ttree == tree and troom == room):
                        continue
                    what = os.path.relpath(target, root)
                    if ttree != tree:
                        bad.append("%s:%d: includes %s, of the other tree %s/" % (rel, n, what, ttree))
                        continue
                    graph.setdefault(room, set()).add(troom)
                    if troom not in rank:
                        bad.append("%s:%d: includes %s, outside every room" % (rel, n, what))
                    elif rank[troom] > rank[room]:
                        bad.append("%s:%d: includes %s: %s/ is above %s/" % (rel, n, what, troom, room))
                    elif rank[troom] == rank[room]:
                        bad.append("%s:%d: includes %s: %s/ is beside %s/ (same level)" % (rel, n, what, troom, room))
        for comp in sccs(graph):
            bad.append("%s/: include cycle between folders %s" % (tree, " <-> ".join(comp)))
        graph = {}
    for b in bad:
        print(b)
    if not bad:
        print("layering ok: %d project includes follow tests/layout/layers.txt" % edges)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
