"""Include cycles inside a folder: the modules of FOLDER (a header and its .cc, by path without extension) and the
project includes between them; a strongly connected group of two or more modules is a cycle. A module's .cc
including another module's header counts: `a.h` included by `b.cc` and `b.h` by `a.cc` is a cycle, though no header
includes itself. Prints each cycle and exits 1 when there is one.

usage: include_cycles.py ROOT FOLDER...
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def modules_of(root, folder):
    modules = {}
    for directory, _, files in os.walk(os.path.join(root, folder)):
        for name in sorted(files):
            if name.endswith((".h", ".cc")):
                path = os.path.relpath(os.path.join(directory, name), root)
                modules.setdefault(path.rsplit(".", 1)[0], []).append(path)
    return modules


def edges_of(root, modules):
    edges = {}
    for module, paths in modules.items():
        for path in paths:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for target in INCLUDE.findall(f.read()):
                    used = target.rsplit(".", 1)[0]
                    if used in modules and used != module:
                        edges.setdefault(module, set()).add(used)
    return edges


def cycles(modules, edges):
    """Tarjan's strongly connected components of two or more modules, iteratively."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges.get(target, ())))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def main():
    root, folders = sys.argv[1], sys.argv[2:]
    status = 0
    for folder in folders:
        modules = modules_of(root, folder)
        for group in cycles(modules, edges_of(root, modules)):
            print("include cycle in %s/ among: %s" % (folder, ", ".join(group)))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
