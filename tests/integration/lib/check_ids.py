#!/usr/bin/env python3
"""check_ids.py - are the ids migrate computed the ids git fast-import wrote?

    check_ids.py --stream IN --migrate-marks MM --fastimport-marks X
                 --commit-map M --ref-map R --repo NEW
                 [--orig-repo ORIG] [--partial-refs] [--map-may-have-more]

IN is the stream migrate read (original-oid -> mark), MM migrate's
--export-marks, X fast-import's --export-marks of migrate's output imported
into NEW, M and R migrate's commit map (git-filter-repo layout) and ref map.
Git and fast-import are the oracle; nothing here is hard-coded. Prints one
line per failed assertion (at most 20 of each kind) and exits 1 on any.
"""

import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the work tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stream_marks  # noqa: E402

HEX40 = re.compile(r"^[0-9a-f]{40}$")
ZERO = "0" * 40
MAX_SHOWN = 20


class Checker:
    def __init__(self):
        self.failures = 0
        self.shown = {}

    def fail(self, kind, msg):
        self.failures += 1
        n = self.shown.get(kind, 0)
        if n < MAX_SHOWN:
            print("FAIL: %s: %s" % (kind, msg))
        elif n == MAX_SHOWN:
            print("FAIL: %s: ... (more not shown)" % kind)
        self.shown[kind] = n + 1


def read_marks(path, ck, who):
    marks = {}
    if not os.path.exists(path):
        ck.fail("marks", "%s wrote no marks file %s" % (who, path))
        return None
    with open(path, "r", encoding="ascii", errors="replace") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = re.match(r"^:([0-9]+) ([0-9a-f]{40})$", line)
            if not m:
                ck.fail("marks", "%s:%d: not ':<mark> <id40>': %r" % (path, no, line))
                continue
            mark = int(m.group(1))
            if mark in marks and marks[mark] != m.group(2):
                ck.fail("marks", "%s:%d: mark :%d given twice" % (path, no, mark))
            marks[mark] = m.group(2)
    return marks


def read_commit_map(path, ck):
    if not os.path.exists(path):
        ck.fail("commit-map", "migrate wrote no commit map %s" % path)
        return None
    cmap = {}
    with open(path, "r", encoding="ascii", errors="replace") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        ck.fail("commit-map", "%s does not end with a newline" % path)
    header = "%-40s %s" % ("old", "new")
    if not lines or lines[0] != header:
        ck.fail("commit-map", "%s: first line is not the git-filter-repo header %r: %r"
                % (path, header, lines[0] if lines else ""))
    for no, line in enumerate(lines[1:], 2):
        parts = line.split(" ")
        if len(parts) != 2 or not HEX40.match(parts[0]) or not HEX40.match(parts[1]):
            ck.fail("commit-map", "%s:%d: not '<old40> <new40>': %r" % (path, no, line))
            continue
        old, new = parts
        if old in cmap and cmap[old] != new:
            ck.fail("commit-map", "%s:%d: %s mapped twice (%s, %s)"
                    % (path, no, old, cmap[old], new))
        cmap[old] = new
    return cmap


def read_ref_map(path, ck):
    if not os.path.exists(path):
        ck.fail("ref-map", "migrate wrote no ref map %s" % path)
        return None
    rmap = {}
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        ck.fail("ref-map", "%s does not end with a newline" % path)
    for no, raw in enumerate(data.split(b"\n"), 1):
        if not raw:
            continue
        line = raw.decode("utf-8", "surrogateescape")
        parts = line.split(" ", 2)
        if len(parts) != 3 or not HEX40.match(parts[0]) or not HEX40.match(parts[1]) \
                or not parts[2]:
            ck.fail("ref-map", "%s:%d: not '<old40> <new40> <ref>': %r" % (path, no, line))
            continue
        old, new, ref = parts
        if ref in rmap:
            ck.fail("ref-map", "%s:%d: %s listed twice" % (path, no, ref))
        rmap[ref] = (old, new)
    return rmap


def git_refs(repo):
    out = subprocess.run(
        ["git", "-C", repo, "for-each-ref", "--format=%(objectname) %(refname)"],
        check=True, stdout=subprocess.PIPE).stdout.decode("utf-8", "surrogateescape")
    refs = {}
    for line in out.splitlines():
        oid, ref = line.split(" ", 1)
        refs[ref] = oid
    return refs


def rev_parse(repo, ref):
    p = subprocess.run(["git", "-C", repo, "rev-parse", "--verify", "-q", ref],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if p.returncode != 0:
        return None
    return p.stdout.decode().strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stream", required=True)
    ap.add_argument("--migrate-marks", required=True)
    ap.add_argument("--fastimport-marks", required=True)
    ap.add_argument("--commit-map", required=True)
    ap.add_argument("--ref-map", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--orig-repo")
    ap.add_argument("--partial-refs", action="store_true")
    ap.add_argument("--map-may-have-more", action="store_true")
    a = ap.parse_args()
    ck = Checker()

    # 1. marks: migrate's == fast-import's, every line.
    mm = read_marks(a.migrate_marks, ck, "migrate")
    fm = read_marks(a.fastimport_marks, ck, "git fast-import")
    if fm is not None and not fm:
        ck.fail("marks", "git fast-import exported no marks: nothing was imported?")
    if mm is not None and fm is not None:
        for mark in sorted(set(mm) | set(fm)):
            if mark not in mm:
                ck.fail("marks", ":%d missing from migrate's marks (fast-import: %s)"
                        % (mark, fm[mark]))
            elif mark not in fm:
                ck.fail("marks", ":%d in migrate's marks (%s) but not fast-import's"
                        % (mark, mm[mark]))
            elif mm[mark] != fm[mark]:
                ck.fail("marks", ":%d migrate computed %s, fast-import wrote %s"
                        % (mark, mm[mark], fm[mark]))

    # 2. commit map: old -> new equals fast-import's id of the mark that
    #    carried original-oid old.
    recs = list(stream_marks.walk(a.stream))
    commits = [r for r in recs if r.kind == "commit" and r.original_oid]
    cmap = read_commit_map(a.commit_map, ck)
    checked_map = 0
    pruned = 0
    if cmap is not None:
        seen = set()
        for r in commits:
            seen.add(r.original_oid)
            if r.original_oid not in cmap:
                ck.fail("commit-map", "commit %s (mark :%s, %s) is not in the map"
                        % (r.original_oid, r.mark, r.ref))
                continue
            if r.mark is None:
                continue  # nothing to compare with; listed is all we can ask
            if cmap[r.original_oid] == "0" * 40 and (fm is None or r.mark not in fm):
                pruned += 1  # pruned: fast-import never saw it (as
                continue     # git filter-repo's map says, 40 zeros)
            if fm is None or r.mark not in fm:
                ck.fail("commit-map", "fast-import has no mark :%d for %s"
                        % (r.mark, r.original_oid))
                continue
            if cmap[r.original_oid] != fm[r.mark]:
                ck.fail("commit-map", "%s -> %s, but fast-import wrote %s for mark :%d"
                        % (r.original_oid, cmap[r.original_oid], fm[r.mark], r.mark))
            checked_map += 1
        extra = [o for o in cmap if o not in seen]
        if extra and not a.map_may_have_more:
            ck.fail("commit-map", "%d entries name no commit of the stream, e.g. %s"
                    % (len(extra), extra[0]))

    # 3. ref map: new == rev-parse in NEW; every ref of NEW listed.
    rmap = read_ref_map(a.ref_map, ck)
    checked_refs = 0
    if rmap is not None:
        refs = git_refs(a.repo)
        orig = git_refs(a.orig_repo) if a.orig_repo else None
        for ref, (old, new) in sorted(rmap.items()):
            actual = refs.get(ref)
            if actual is None:
                actual = rev_parse(a.repo, ref)
            if new == ZERO:
                if actual is not None:
                    ck.fail("ref-map", "%s: map says deleted, repo has %s" % (ref, actual))
            elif actual != new:
                ck.fail("ref-map", "%s: map says %s, repo has %s" % (ref, new, actual))
            if orig is not None and ref in orig and old != orig[ref]:
                ck.fail("ref-map", "%s: map says old %s, source repo has %s"
                        % (ref, old, orig[ref]))
            checked_refs += 1
        if not a.partial_refs:
            for ref in sorted(refs):
                if ref not in rmap:
                    ck.fail("ref-map", "%s (%s) is in the new repo but not in the ref map"
                            % (ref, refs[ref]))

    print("info: ids: %s marks compared, %d commit-map entries checked against "
          "fast-import%s, %d ref-map entries checked against git rev-parse"
          % (len(fm) if fm else 0, checked_map,
             " (%d pruned: 40 zeros, no mark)" % pruned if pruned else "",
             checked_refs))
    if ck.failures:
        print("FAIL: check_ids: %d failed assertion(s)" % ck.failures)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
