#!/usr/bin/env python3
"""include_cycles.py [--max N] [DIR] — the circles of a C folder read from its #include lines.

A header stands for the .c files that define what it declares: X.h declares f(), g();
f is defined in a.c, g in b.c; so a file that includes X.h needs a.c and b.c.  A .c file
needs every file behind each header it includes (a header declaring most of a room
pulls in most of it).
The circles are the strongly connected components of that graph with more than one file.
Prints each circle (largest first) and exits 1 when one has more than N files (default 3),
0 otherwise.  DIR defaults to service/ (issue 27: "no circle of more than 3 files")."""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
DECL = re.compile(r'\b([a-z_][a-z0-9_]*)\s*\(', re.I)
# a function definition: a line starting at column 0 with NAME( and no ';' before its '{'
DEFN = re.compile(r'^[A-Za-z_][^;=(]*?\b([a-z_][a-z0-9_]*)\s*\([^;]*$', re.M | re.I)


def strip_comments(s):
    s = re.sub(r'/\*.*?\*/', ' ', s, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', s)


def main(argv):
    limit, folder = 3, 'service'
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == '--max':
            limit = int(args.pop(0))
        else:
            folder = a.rstrip('/')
    files = sorted(f for f in os.listdir(folder) if f.endswith(('.c', '.h')))
    text = {f: strip_comments(open(os.path.join(folder, f), encoding='utf-8').read()) for f in files}
    defined = {}  # function name -> the .c file defining it
    for f in files:
        if f.endswith('.c'):
            for m in DEFN.finditer(text[f]):
                if not m.group(0).lstrip().startswith('static'):
                    defined.setdefault(m.group(1), f)
    behind = {}  # header -> the .c files behind it
    for f in files:
        if f.endswith('.h'):
            names = {m.group(1) for m in DECL.finditer(text[f])}
            behind[f] = {defined[n] for n in names if n in defined}
    needs = {f: set() for f in files}
    for f in files:
        for inc in INCLUDE.findall(text[f]):
            h = os.path.basename(inc)
            if os.path.dirname(inc) != os.path.basename(folder) or h not in behind:
                continue  # another room's header
            needs[f].add(h)
            needs[f] |= behind[h] - {f}
    # headers stand between their includers and their definers
    for h, defs in behind.items():
        needs[h] |= defs
    # Tarjan's strongly connected components (iterative)
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in files:
        if root in index:
            continue
        work = [(root, iter(sorted(needs[root])))]
        index[root] = low[root] = counter[0]; counter[0] += 1
        stack.append(root); on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(needs[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop(); on.discard(w); comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    comps.sort(key=len, reverse=True)
    cfiles = lambda c: [f for f in c if f.endswith('.c')] or c
    for c in comps:
        print('circle of %d files: %s' % (len(cfiles(c)), ' '.join(c)))
    worst = max((len(cfiles(c)) for c in comps), default=0)
    print('%s: %d files, largest circle %d .c files (limit %d)' % (folder, len(files), worst, limit))
    return 1 if worst > limit else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
