#!/usr/bin/env bash
# attrs_nested.sh - converted means converted, whatever lies lower in the
# tree (issue 28, item 3): under a directory whose own .gitattributes says
# otherwise (`filter=custom`, `-filter`, `!filter`, `binary`, a macro of
# the root's, anchored and relative patterns), git check-attr says lfs for
# exactly the LFS pointers at every commit, and every other file keeps the
# attributes it had. A generated history (nested files at several depths
# added, edited and deleted, some of random lines of patterns and words
# in any order, the root's macro redefined, two branches) goes through
# `migrate run --to`; git judges each commit against the original
# (check-attr on an index of the commit's tree: git 2.39 has no
# --source), the user's lines are kept in order with ours after them, the
# work tree, `git lfs ls-files` and a fresh clone have the content. With
# annex rules nothing is written into the tree: info/attributes (`*
# filter=annex`, what `git annex init` writes in every clone) outranks
# every .gitattributes, which git-annex judges in the target and a clone.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
git lfs install --skip-repo >/dev/null

# --- the history: a fast-import stream from a fixed seed ---------------------
cat >"$SCRATCH/gen.py" <<'PY'
import random, sys
rnd = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 28)
w = sys.stdout.buffer.write
DIRS = ["", "a", "a/b", "a/b/c", "d", "d/e", "k", "k/m"]
NESTED = ["a", "a/b", "a/b/c", "d", "d/e", "k", "k/m"]
# nested file texts: those that assign one of the four to .bin or .dat
# paths, and (after "quiet") those that assign none or are ignored by git
VARIANTS = [
    b"*.bin filter=custom\n",
    b"*.bin -filter\n",
    b"*.bin !filter\n",
    b"*.bin binary\n",
    b"*.bin mymacro\n",
    b"*.bin -mymacro\n",
    b"# comment\n*.bin -merge",                      # no final LF
    b"/f1.bin -filter\n*.txt text\n",               # anchored here
    b"c/*.bin -diff\n",                             # relative, with a slash
    b"**/f2.bin filter=custom\n",
    b"*.dat filter=custom diff=custom\n*.bin -text\n",
    b"\"f 3.bin\" -filter\n",                       # C-quoted pattern
    b"*.bin -filter\n*.bin filter=lfs\n",           # filter ours, the rest not
    b"f[0-2].bin binary merge=custom\n",
]
QUIET = [
    b"*.bin filter=lfs diff=lfs merge=lfs -text\n",  # an LFS file already
    b"*.txt eol=lf\n*.bin linguist-generated\n",
    b"!*.bin -filter\n",                            # negative: git ignores it
    b"*.bin/ -filter\n",                            # directories only
]
NAMES = ["f0.bin", "f1.bin", "f2.bin", "f 3.bin", "g0.dat", "g1.dat", "t0.txt"]
ROOTS = [b"[attr]mymacro filter=custom\n*.txt text\n",
         b"[attr]mymacro -diff\n*.txt text\n",
         b"[attr]mymacro filter=custom diff=lfs merge=lfs\n"]

mark = [0]
def blob(data):
    mark[0] += 1
    w(b"blob\nmark :%d\ndata %d\n" % (mark[0], len(data)) + data + b"\n")
    return mark[0]

def content(name):
    if name.endswith(".txt"):
        return b"text %d\n" % rnd.randrange(10**6)
    size = rnd.choice([600, 1200, 2000, 2600])   # .dat: lfs from 1500 bytes
    return bytes(rnd.randrange(256) for _ in range(size))

trees = {"main": {}, "side": {}}
shared = blob(bytes(rnd.randrange(256) for _ in range(1800)))
when = [1700000000]
def commit(branch, n, changes, parent=None):
    when[0] += 60
    msg = b"c%d %s" % (n, branch.encode())
    w(b"commit refs/heads/%s\ncommitter T <t@e> %d +0000\ndata %d\n%s\n"
      % (branch.encode(), when[0], len(msg), msg))
    if parent:
        w(b"from refs/heads/%s\n" % parent.encode())
    for path, m in changes:
        if m is None:
            w(b"D %s\n" % path.encode())
        elif isinstance(m, tuple):
            w(b"M %s :%d %s\n" % (m[0], m[1], path.encode()))
        else:
            w(b"M 100644 :%d %s\n" % (m, path.encode()))
    w(b"\n")

# a nested file of random lines: patterns and words git may read in any
# order, macros set and unset, our own attributes among them
PATTERNS = ["*.bin", "*", "f1.bin", "/f0.bin", "c/*.bin", "**/f2.bin", "*.dat",
            '"f 3.bin"', "f[0-9].bin", "b/**", "g?.dat"]
WORDS = ["filter=custom", "-filter", "!filter", "filter=lfs", "diff=lfs",
         "merge=lfs", "-text", "text", "text=auto", "-diff", "diff", "!merge",
         "binary", "-binary", "mymacro", "-mymacro", "!mymacro", "eol=lf",
         "linguist-generated", "-merge"]
def random_text():
    lines = []
    for _ in range(rnd.randrange(1, 4)):
        words = rnd.sample(WORDS, rnd.randrange(1, 5))
        lines.append(" ".join([rnd.choice(PATTERNS)] + words))
    return ("\n".join(lines) + "\n").encode()

def step(tree):
    ch = []
    for _ in range(rnd.randrange(2, 7)):
        op = rnd.random()
        if op < 0.5:
            d = rnd.choice(DIRS); name = rnd.choice(NAMES)
            p = (d + "/" if d else "") + name
            m = shared if rnd.random() < 0.1 else blob(content(name))
            tree[p] = m; ch.append((p, m))
        elif op < 0.6 and tree:
            p = rnd.choice(sorted(k for k in tree if not k.endswith(".gitattributes")) or [None])
            if p:
                del tree[p]; ch.append((p, None))
        elif op < 0.85:
            d = rnd.choice(NESTED); p = d + "/.gitattributes"
            if p in tree and rnd.random() < 0.25:
                del tree[p]; ch.append((p, None))
            else:
                v = rnd.choice(VARIANTS + QUIET) if rnd.random() < 0.6 else random_text()
                m = blob(v); tree[p] = m; ch.append((p, m))
        elif op < 0.9:
            m = blob(rnd.choice(ROOTS)); tree[".gitattributes"] = m
            ch.append((".gitattributes", m))
        else:   # a symbolic link named .bin: never converted
            d = rnd.choice(DIRS); p = (d + "/" if d else "") + "link.bin"
            m = blob(b"f0.bin"); tree[p] = (b"120000", m); ch.append((p, (b"120000", m)))
    return ch

# the first commit: every directory with files, a nested file each
first = []
root = blob(ROOTS[0]); first.append((".gitattributes", root))
for d in DIRS:
    for name in NAMES:
        p = (d + "/" if d else "") + name
        m = blob(content(name)); first.append((p, m))
for i, d in enumerate(NESTED):
    m = blob((VARIANTS + QUIET)[i * 3 % len(VARIANTS + QUIET)])
    first.append((d + "/.gitattributes", m))
commit("main", 0, first)
for n in range(1, 31):
    commit("main", n, step(trees["main"]))
    if n == 12:
        commit("side", 100, [], parent="main")
        for k in range(101, 111):
            commit("side", k, step(trees["side"]))
w(b"done\n")
PY

# --- the oracle: per commit, check-attr of the new tree against the old ------
cat >"$SCRATCH/judge.py" <<'PY'
# judge.py OLD NEW INDEX: for every commit of NEW (matched to OLD by its
# subject), every file but .gitattributes: an LFS pointer has filter=lfs
# diff=lfs merge=lfs -text, any other file the four attributes it had in
# OLD. Prints counts; exits 1 naming the first difference.
import os, subprocess, sys
old, new, index = sys.argv[1:4]
PTR = b"version https://git-lfs.github.com/spec/v1\n"

def git(repo, *args, inp=None, env=None):
    return subprocess.run(["git", "-C", repo] + list(args), input=inp,
                          stdout=subprocess.PIPE, check=True, env=env).stdout

def commits(repo):
    out = {}
    for line in git(repo, "log", "--all", "--format=%H %s").decode().splitlines():
        h, s = line.split(" ", 1)
        out[s] = h
    return out

def attrs(repo, rev, paths):
    env = dict(os.environ, GIT_INDEX_FILE=index)
    git(repo, "read-tree", rev, env=env)
    out = git(repo, "check-attr", "--cached", "-z", "--stdin", "filter", "diff",
              "merge", "text", inp=b"".join(p + b"\0" for p in paths), env=env)
    f = out.split(b"\0")
    got = {}
    for i in range(0, len(f) - 2, 3):
        got.setdefault(f[i], {})[f[i + 1].decode()] = f[i + 2].decode()
    return got

def files(repo, rev):
    out = git(repo, "ls-tree", "-r", "-z", rev)
    res = {}
    for ent in out.split(b"\0"):
        if not ent:
            continue
        meta, path = ent.split(b"\t", 1)
        mode, _, oid = meta.split(b" ")
        if path.split(b"/")[-1] != b".gitattributes":
            res[path] = (mode, oid)
    return res

def pointers(repo, oids):
    p = subprocess.run(["git", "-C", repo, "cat-file", "--batch"],
                       input=b"".join(o + b"\n" for o in oids),
                       stdout=subprocess.PIPE, check=True).stdout
    res, pos = {}, 0
    for o in oids:
        nl = p.index(b"\n", pos)
        size = int(p[pos:nl].split(b" ")[2])
        data = p[nl + 1:nl + 1 + size]
        pos = nl + 1 + size + 1
        res[o] = data.startswith(PTR)
    return res

LFS = {"filter": "lfs", "diff": "lfs", "merge": "lfs", "text": "unset"}
old_c, new_c = commits(old), commits(new)
assert sorted(old_c) == sorted(new_c), "the commits differ"
judged = nptr = nested_ptr = 0
for subj, rev in sorted(new_c.items()):
    nf, of = files(new, rev), files(old, old_c[subj])
    assert sorted(nf) == sorted(of), "%s: other paths" % subj
    isptr = pointers(new, sorted({oid for mode, oid in nf.values() if mode != b"120000"}))
    na, oa = attrs(new, rev, sorted(nf)), attrs(old, old_c[subj], sorted(nf))
    for path, (mode, oid) in sorted(nf.items()):
        ptr = mode != b"120000" and isptr[oid]
        want = LFS if ptr else oa[path]
        if na[path] != want:
            sys.exit("%s %s (%s): check-attr says %s, want %s" % (
                subj, path.decode(), "pointer" if ptr else "not converted",
                na[path], want))
        judged += 1
        nptr += ptr
        nested_ptr += ptr and set(oa[path].values()) != {"unspecified"}
print("%d (commit, path) pairs judged, %d pointers, %d of them where the "
      "original attributes said something" % (judged, nptr, nested_ptr))
PY

python3 "$SCRATCH/gen.py" >"$SCRATCH/in.fi"
git init -q "$SCRATCH/src"
git -C "$SCRATCH/src" fast-import --quiet <"$SCRATCH/in.fi"
printf 'k/** keep\n*.bin lfs\n*.dat size>=1500 lfs\n' >"$SCRATCH/rules"
# shellcheck disable=SC2034	# the cases use it
NEW="$SCRATCH/new"

test_case "check-attr says lfs for exactly the pointers at every commit, others keep theirs" <<'EOF'
# git warns of the negative pattern, a line git ignores, on every read
run_migrate run -q --rules "$SCRATCH/rules" --repo "$SCRATCH/src" --to "$NEW" 2>"$SCRATCH/run.err" ||
	{ grep -v 'Negative patterns\|leading exclamation' "$SCRATCH/run.err"; die "run failed"; }
out=$(python3 "$SCRATCH/judge.py" "$SCRATCH/src" "$NEW" "$SCRATCH/judge.idx")
info "$out"
nested=$(sed -n 's/.*, \([0-9]*\) of them where.*/\1/p' <<<"$out")
[ "${nested:-0}" -ge 100 ] || die "too few pointers where the original said something: $out"
EOF

test_case "four more seeds: check-attr at every commit" <<'EOF'
for seed in 1 2 3 4; do
	python3 "$SCRATCH/gen.py" "$seed" >"$SCRATCH/in-$seed.fi"
	git init -q "$SCRATCH/src-$seed"
	git -C "$SCRATCH/src-$seed" fast-import --quiet <"$SCRATCH/in-$seed.fi"
	run_migrate run -q --rules "$SCRATCH/rules" --repo "$SCRATCH/src-$seed" \
		--to "$SCRATCH/new-$seed" 2>"$SCRATCH/run.err" ||
		{ grep -v 'Negative patterns\|leading exclamation' "$SCRATCH/run.err"; die "seed $seed: run failed"; }
	out=$(python3 "$SCRATCH/judge.py" "$SCRATCH/src-$seed" "$SCRATCH/new-$seed" "$SCRATCH/judge.idx")
	info "seed $seed: $out"
done
EOF

test_case "the cost follows the commit, not the tree: 10,000 files under 51 nested files" <<'EOF'
python3 - >"$SCRATCH/cost.fi" <<'PY'
import sys
w = sys.stdout.buffer.write
w(b"blob\nmark :1\ndata 7\nbinary\n\n")
w(b"blob\nmark :2\ndata 14\n*.bin -filter\n\n")
w(b"blob\nmark :3\ndata 13\n* text=auto\n\n")
w(b"commit refs/heads/main\ncommitter A <a@b> 0 +0000\ndata 1\nx\n")
w(b"M 100644 :3 big/.gitattributes\n")
for d in range(50):
    w(b"M 100644 :2 big/d%02d/.gitattributes\n" % d)
for i in range(10000):
    w(b"M 100644 :1 big/d%02d/f%05d.bin\n" % (i % 50, i))
w(b"\n")
for c in range(1, 301):
    w(b"commit refs/heads/main\ncommitter A <a@b> %d +0000\ndata 1\nx\n" % c)
    w(b"M 100644 inline readme.txt\ndata %d\n%d\n\n" % (len(str(c)) + 1, c))
    if c % 25 == 0:
        w(b"M 100644 :1 big/new/g%03d.bin\nD big/d%02d/f%05d.bin\n" % (c, c % 50, c))
w(b"done\n")
PY
printf 're:\\.bin$ lfs\n' >"$SCRATCH/cost.rules"
rc=0
start=$SECONDS
timeout 300 "$MIGRATE" -q --rules "$SCRATCH/cost.rules" --store "$SCRATCH/cost-store" \
	<"$SCRATCH/cost.fi" >"$SCRATCH/cost.out" || rc=$?
[ "$rc" != 124 ] || die "10,000 nested lines and 300 commits took more than 300 s"
[ "$rc" = 0 ] || die "migrate failed (exit $rc)"
took=$((SECONDS - start))
C="$SCRATCH/cost-new"
git init -q "$C"
git -C "$C" fast-import --quiet <"$SCRATCH/cost.out"
export GIT_INDEX_FILE="$SCRATCH/cost.idx"
git -C "$C" read-tree main
git -C "$C" ls-files | grep '\.bin$' | sort >"$SCRATCH/cost.bins"
git -C "$C" check-attr --cached --stdin filter <"$SCRATCH/cost.bins" |
	sed -n 's/: filter: lfs$//p' | sort >"$SCRATCH/cost.lfs"
[ "$(wc -l <"$SCRATCH/cost.bins")" = 10000 ] || die "expected 10,000 .bin files"
cmp -s "$SCRATCH/cost.bins" "$SCRATCH/cost.lfs" || die "check-attr: not filter=lfs for every .bin"
info "10,000 paths under 51 nested files, 300 commits: $took s; check-attr lfs for all of them"
EOF

test_case "the user's lines stay, in order; ours follow, single paths; quiet files untouched" <<'EOF'
[ -d "$NEW" ] || die "no target (the first case failed)"
python3 - "$SCRATCH/src" "$NEW" <<'PY'
import subprocess, sys
old, new = sys.argv[1:3]
QUIET = [b"*.bin filter=lfs diff=lfs merge=lfs -text\n",
         b"*.txt eol=lf\n*.bin linguist-generated\n", b"!*.bin -filter\n",
         b"*.bin/ -filter\n"]
def git(repo, *a):
    return subprocess.run(["git", "-C", repo] + list(a), stdout=subprocess.PIPE,
                          check=True).stdout
def subjects(repo):
    return dict(l.split(" ", 1)[::-1] for l in
                git(repo, "log", "--all", "--format=%H %s").decode().splitlines())
oc, nc = subjects(old), subjects(new)
grown = same = 0
for s, rev in nc.items():
    for path in git(new, "ls-tree", "-r", "--name-only", rev).decode().splitlines():
        if not path.endswith(".gitattributes") or path == ".gitattributes":
            continue
        o = git(old, "cat-file", "blob", "%s:%s" % (oc[s], path))
        n = git(new, "cat-file", "blob", "%s:%s" % (rev, path))
        if o in QUIET:
            assert n == o, "%s %s: a file that says none of the four was changed" % (s, path)
        if n == o:
            same += 1
            continue
        base = o if o.endswith(b"\n") else o + b"\n"
        assert n.startswith(base), "%s %s: the user's lines were not kept as they were" % (s, path)
        added = n[len(base):].decode().splitlines()
        for line in added:
            assert line.startswith(("/", '"/')) and line.endswith(
                " filter=lfs diff=lfs merge=lfs -text"), "%s %s: %r" % (s, path, line)
        assert len(set(added)) == len(added), "%s %s: a line twice" % (s, path)
        grown += 1
assert grown >= 20, "only %d nested files got lines" % grown
print("info: %d nested files (commit, path) got lines, %d stayed as they were" % (grown, same))
PY
EOF

test_case "the work tree, git lfs ls-files and a fresh clone have the content" <<'EOF'
[ -d "$NEW" ] || die "no target (the first case failed)"
for b in main side; do
	git -C "$NEW" checkout -q "$b" 2>/dev/null
	git -C "$NEW" lfs ls-files | grep -v ' \* ' && die "$b: git lfs ls-files shows files not smudged"
	n=$(git -C "$NEW" lfs ls-files | wc -l)
	# the source has nested filter=lfs lines but no pointers: plain bytes
	mkdir -p "$SCRATCH/src/.git/info"
	printf '* -filter\n' >"$SCRATCH/src/.git/info/attributes"
	git -C "$SCRATCH/src" checkout -q -f "$b" 2>/dev/null
	diff -r -q --no-dereference -x .git -x .gitattributes "$SCRATCH/src" "$NEW" || die "$b: the work tree differs from the original"
	git clone -q -b "$b" "file://$NEW" "$SCRATCH/clone-$b" 2>"$SCRATCH/clone.err" ||
		{ grep -v 'Negative patterns\|leading exclamation' "$SCRATCH/clone.err"; die "clone failed"; }
	diff -r -q --no-dereference -x .git -x .gitattributes "$SCRATCH/src" "$SCRATCH/clone-$b" ||
		die "$b: a fresh clone differs from the original"
	info "$b: $n LFS files smudged in the work tree and in a fresh clone, content as it was"
done
git -C "$NEW" checkout -q main 2>/dev/null
EOF

test_case "the pipeline (no run) gives the same trees" <<'EOF'
[ -d "$NEW" ] || die "no target (the first case failed)"
git -C "$SCRATCH/src" fast-export --all --show-original-ids --signed-tags=strip |
	(cd "$SCRATCH/src" && "$MIGRATE" -q --rules "$SCRATCH/rules" --store "$SCRATCH/pipe-store") \
	>"$SCRATCH/pipe.fi"
git init -q "$SCRATCH/pipe"
git -C "$SCRATCH/pipe" fast-import --quiet <"$SCRATCH/pipe.fi"
for b in main side; do
	[ "$(git -C "$SCRATCH/pipe" rev-parse "$b^{tree}")" = "$(git -C "$NEW" rev-parse "$b^{tree}")" ] ||
		die "$b: the pipeline's tree is not run's"
done
info "the pipeline's trees are run's"
EOF

test_case "unlfs takes the nested lines out again: the original trees" <<'EOF'
[ -d "$NEW" ] || die "no target (the first case failed)"
printf '*.bin unlfs\n*.dat unlfs\n' >"$SCRATCH/unlfs.rules"
run_migrate run -q --rules "$SCRATCH/unlfs.rules" --repo "$NEW" --to "$SCRATCH/back" 2>"$SCRATCH/run.err" ||
	{ grep -v 'Negative patterns\|leading exclamation' "$SCRATCH/run.err"; die "unlfs run failed"; }
python3 - "$SCRATCH/src" "$SCRATCH/back" <<'PY'
import subprocess, sys
old, new = sys.argv[1:3]
def git(repo, *a):
    return subprocess.run(["git", "-C", repo] + list(a), stdout=subprocess.PIPE,
                          check=True).stdout
def subjects(repo):
    return dict(l.split(" ", 1)[::-1] for l in
                git(repo, "log", "--all", "--format=%H %s").decode().splitlines())
def tree(repo, rev):
    return dict(l.split(b"\t", 1)[::-1] for l in git(repo, "ls-tree", "-r", rev).splitlines())
oc, nc = subjects(old), subjects(new)
assert sorted(oc) == sorted(nc)
same = lf = 0
for s, rev in nc.items():
    o, n = tree(old, oc[s]), tree(new, rev)
    assert sorted(o) == sorted(n), "%s: other paths" % s
    for path in o:
        if o[path] == n[path]:
            same += 1
            continue
        # lfs gave a file without a final LF one (docs/GUARANTEES.md, 7: unlfs's limits)
        ob = git(old, "cat-file", "blob", "%s:%s" % (oc[s], path.decode()))
        nb = git(new, "cat-file", "blob", "%s:%s" % (rev, path.decode()))
        assert path.endswith(b".gitattributes") and not ob.endswith(b"\n") \
            and nb == ob + b"\n", "%s %s: not the original" % (s, path.decode())
        lf += 1
print("info: every (commit, path) as it was: %d the same, %d .gitattributes "
      "given a final LF" % (same, lf))
PY
EOF

test_case "annex: info/attributes outranks nested files, in the target and a clone" <<'EOF'
A="$SCRATCH/annex-src"
git init -q "$A"
(
	cd "$A"
	mkdir -p a/b
	printf '[attr]mymacro filter=custom\n' >.gitattributes
	printf '*.bin -filter\n' >a/.gitattributes
	printf '*.bin mymacro\n' >a/b/.gitattributes
	for p in top.bin a/x.bin a/b/y.bin; do
		python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(3000))" >"$p"
	done
	git add -A && git commit -qm one
)
printf '*.bin annex\n' >"$SCRATCH/annex.rules"
run_migrate run -q --rules "$SCRATCH/annex.rules" --repo "$A" --to "$SCRATCH/annex-new"
for p in a/.gitattributes a/b/.gitattributes .gitattributes; do
	[ "$(git -C "$SCRATCH/annex-new" rev-parse "HEAD:$p")" = "$(git -C "$A" rev-parse "HEAD:$p")" ] ||
		die "$p: changed under annex rules"
done
git -C "$SCRATCH/annex-new" check-attr filter top.bin a/x.bin a/b/y.bin >"$SCRATCH/annex.attr"
[ "$(grep -c ': filter: annex$' "$SCRATCH/annex.attr")" = 3 ] ||
	die "target: $(cat "$SCRATCH/annex.attr")"
for p in top.bin a/x.bin a/b/y.bin; do
	cmp -s "$A/$p" "$SCRATCH/annex-new/$p" || die "target: $p has not its content"
done
git clone -q "$SCRATCH/annex-new" "$SCRATCH/annex-clone"
(
	cd "$SCRATCH/annex-clone"
	git annex init -q clone >/dev/null 2>&1
	git check-attr filter top.bin a/x.bin a/b/y.bin >"$SCRATCH/annex.attr"
	[ "$(grep -c ': filter: annex$' "$SCRATCH/annex.attr")" = 3 ] ||
		die "clone: $(cat "$SCRATCH/annex.attr")"
	git annex get -q . >/dev/null 2>&1
	for p in top.bin a/x.bin a/b/y.bin; do
		cmp -s "$A/$p" "$p" || die "clone: $p has not its content after git annex get"
	done
)
info "annex: filter=annex under every nested file, target and clone; nested files unchanged"
EOF

test_done
