#!/usr/bin/env python3
"""explain_map.py REPO COMMITMAP REFMAP - count and explain old != new.

Counts the commits of the commit map whose id changed and the refs of the
ref map whose id changed. A changed commit whose parents all kept their ids
changed by itself; for those (the causes) it reads the original raw objects
and names the reason: a tree entry mode that is not canonical (e.g. 2005's
100664, which fast-export prints and fast-import writes as 100644), or a
commit header fast-export drops (gpgsig, mergetag, ...). Every other changed
commit descends from a cause. Prints 'info:' lines; exits 0.
"""

import subprocess
import sys

CANON = {b"100644", b"100755", b"120000", b"160000", b"40000"}
KEPT_HEADERS = {b"tree", b"parent", b"author", b"committer", b"encoding"}


class Cat:
    def __init__(self, repo):
        self.p = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def get(self, oid):
        self.p.stdin.write(oid.encode() + b"\n")
        self.p.stdin.flush()
        hdr = self.p.stdout.readline().split()
        size = int(hdr[2])
        body = self.p.stdout.read(size)
        self.p.stdout.read(1)
        return hdr[1], body


def odd_modes(cat, tree, seen, found):
    if tree in seen:
        return
    seen.add(tree)
    _, body = cat.get(tree)
    i = 0
    while i < len(body):
        sp = body.index(b" ", i)
        nul = body.index(b"\0", sp)
        mode = body[i:sp]
        oid = body[nul + 1:nul + 21].hex()
        if mode not in CANON:
            found.add(mode.decode())
        if mode == b"40000" or mode == b"040000":
            odd_modes(cat, oid, seen, found)
        i = nul + 21


def main():
    repo, cmap_path, rmap_path = sys.argv[1:4]
    cmap = {}
    with open(cmap_path) as f:
        next(f)
        for line in f:
            old, new = line.split()
            cmap[old] = new
    changed = [o for o, n in cmap.items() if o != n]
    refs_total = refs_changed = 0
    with open(rmap_path, "rb") as f:
        for line in f:
            old, new, _ = line.split(b" ", 2)
            refs_total += 1
            refs_changed += old != new
    out = subprocess.run(["git", "-C", repo, "rev-list", "--all", "--parents"],
                         check=True, stdout=subprocess.PIPE).stdout.decode()
    causes = []
    for line in out.splitlines():
        c, *parents = line.split()
        if c in cmap and cmap[c] != c and all(cmap.get(p, p) == p for p in parents):
            causes.append(c)
    print("info: commits: %d of %d have old != new" % (len(changed), len(cmap)))
    print("info: refs: %d of %d have old != new" % (refs_changed, refs_total))
    print("info: %d commit(s) changed by themselves (parents unchanged); the other %d"
          " changed because an ancestor did" % (len(causes), len(changed) - len(causes)))
    cat = Cat(repo)
    for c in causes[:20]:
        _, body = cat.get(c)
        head = body.split(b"\n\n", 1)[0]
        reasons = []
        extra = sorted({l.split(b" ", 1)[0].decode() for l in head.split(b"\n")
                        if l and not l.startswith(b" ")
                        and l.split(b" ", 1)[0] not in KEPT_HEADERS})
        if extra:
            reasons.append("headers fast-export drops: " + ", ".join(extra))
        found = set()
        odd_modes(cat, head.split(b"\n", 1)[0].split(b" ")[1].decode(), set(), found)
        if found:
            reasons.append("tree modes fast-import normalises: " + ", ".join(sorted(found)))
        if b"\0" in body:
            reasons.append("NUL in the message")
        print("info:   %s %s" % (c, "; ".join(reasons) or "reason not identified"))
    if len(causes) > 20:
        print("info:   ... and %d more" % (len(causes) - 20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
