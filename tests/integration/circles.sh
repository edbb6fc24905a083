#!/usr/bin/env bash
# circles.sh - no circle of calls between the files of one folder
# (docs/DESIGN.md, "The house"; issue 26).
#
# layers.sh keeps the folders in one direction; this keeps the files
# inside a folder so: a file that needs a symbol of another file of its
# folder makes an edge, and the edges of one library must not close a
# circle. A circle means two files share state or a job that belongs to
# one of them (or to a third file both may call); it is where the
# "private" internals of a folder start writing each other's fields.
#
# nm judges, on the object files of each static library as built: an
# edge A.o -> B.o when A has an undefined symbol that B defines.
set -euo pipefail
. "$(dirname "$0")/lib/lib.sh"

BUILD="$(dirname "$MIGRATE")"
libs=(common stream rules split pointerize replace git report blob engine analyze run cli)
for name in "${libs[@]}"; do
	[ -f "$BUILD/libmigrate_$name.a" ] || die "no $BUILD/libmigrate_$name.a: build first"
done

# circles.py BUILD LIB...: a FAIL line and the loop for each circle, exit 1
# if there is one
cat >"$SCRATCH/circles.py" <<'PY'
import subprocess, sys

build, libs = sys.argv[1], sys.argv[2:]

def symbols(archive):
    """{object file: (defined, undefined)} of one archive, global only"""
    out = subprocess.run(['nm', '-A', archive], capture_output=True,
                         text=True, check=True).stdout
    objs = {}
    for line in out.splitlines():
        # "archive:member.o:[address] type name"
        head, _, rest = line.rpartition(':')
        member = head[len(archive) + 1:]
        f = rest.split()
        if len(f) < 2:
            continue
        kind, sym = f[-2], f[-1]
        d, u = objs.setdefault(member, (set(), set()))
        if kind == 'U':
            u.add(sym)
        elif kind.isupper():
            d.add(sym)
    return objs

def circles(graph):
    """the strongly connected parts of more than one file (Tarjan)"""
    index, low, stack, on, found = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found

def path(graph, a, b, inside):
    """a shortest path a -> b through the files of one circle"""
    prev, todo = {a: None}, [a]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph[v]):
            if w in inside and w not in prev:
                prev[w] = v
                todo.append(w)
    p, v = [], b
    while v is not None:
        p.append(v)
        v = prev[v]
    return p[::-1]

bad, files, edges = 0, 0, 0
for name in libs:
    objs = symbols('%s/libmigrate_%s.a' % (build, name))
    owner = {}
    for o, (d, _) in objs.items():
        for s in d:
            owner[s] = o
    graph, why = {o: set() for o in objs}, {}
    for o, (_, u) in objs.items():
        for s in sorted(u):
            t = owner.get(s)
            if t and t != o:
                graph[o].add(t)
                why.setdefault((o, t), s)
    files += len(objs)
    edges += sum(len(g) for g in graph.values())
    for part in circles(graph):
        bad += 1
        strip = lambda o: o[:-4] if o.endswith('.c.o') else o
        print('FAIL: libmigrate_%s: a circle between %s'
              % (name, ', '.join(strip(o) for o in part)))
        # one loop through the first file, each step with the symbol
        # that makes it
        first = part[0]
        for nxt in sorted(graph[first]):
            if nxt in part:
                loop = [first] + path(graph, nxt, first, set(part))
                break
        print('      ' + ' -> '.join(
            '%s (%s)' % (strip(a), why[(a, b)])
            for a, b in zip(loop, loop[1:])) + ' -> ' + strip(loop[-1]))
if bad:
    sys.exit(1)
print('info: %d files of %s, %d needs of one file from another '
      'of its library, no circle (nm)'
      % (files, ', '.join('libmigrate_' + n for n in libs), edges))
PY
# a case per library
for name in "${libs[@]}"; do
	test_case "libmigrate_$name: no circle between its files" 'python3 "$SCRATCH/circles.py" "$BUILD" "$name"'
done
test_done
