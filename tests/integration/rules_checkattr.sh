#!/usr/bin/env bash
# rules_checkattr.sh [BUILD_DIR] - git check-attr is the oracle for rule
# globs. Thousands of (pattern, path) pairs, tricky ones included, go to
# `git check-attr` (one .gitattributes line "<pattern> tN" per pattern) and
# to migrate's matcher (tests/tools/rules_probe.c); every verdict must agree.
# Patterns migrate refuses as "git never matches" must match nothing in git
# either. The .gitattributes forms migrate writes (rules_rule_attr_pattern,
# rules_attr_path) are checked the same way. A case fails on any
# disagreement, printing the first 20 of its kind.
#
# The probe is the rules_probe CMake builds (with MIGRATE_TESTS on) in
# BUILD_DIR, by default the folder of $MIGRATE (build/ without it).
# Needs git and python3 (which generates the cases, seeded, and compares).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

probe=${1:-$(dirname "$MIGRATE")}/rules_probe
if [ ! -x "$probe" ]; then
	printf 'FAIL: no %s: cmake --build %s --target rules_probe\n' "$probe" "$(dirname "$probe")" >&2
	exit 1
fi
tmp="$SCRATCH"

# no system, user or XDG config or attributes may change git's answers
export GIT_CONFIG_NOSYSTEM=1 HOME="$tmp"
unset XDG_CONFIG_HOME GIT_DIR GIT_WORK_TREE
git init -q "$tmp/repo"

# The verdicts: one program (the pairs are generated, seeded, once) asks
# migrate's matcher and git for every verdict and writes the disagreements
# of each kind to $tmp/bad.KIND, which the cases after it judge.
test_case "migrate's matcher and git check-attr give a verdict on every (pattern, path) pair" <<'EOF'
python3 - "$probe" "$tmp/repo" "$tmp" <<'PY'
import random, subprocess, sys

probe, repo, outdir = sys.argv[1], sys.argv[2], sys.argv[3]
rnd = random.Random(20240611)	# fixed: a failure reproduces

# ---- patterns: hand-picked tricky ones, then generated ones ----
tricky = r"""*.bin *.BIN foo /foo foo/bar /foo/bar foo/* foo/** **/foo **/foo/bar
a/**/b a/**/**/b **/*.bin /**/x a/** ** * ? ??? *.tar.gz .hidden .* *~ \#foo
\!foo !foo foo/ dir/ / a[bc]d a[!bc]d a[^bc]d a[]]b a[!]]b [a-c]x [c-a]x
[[:space:]]x my[[:space:]]file.bin a\*b a\?b a\[b a\\b a\b foo\ a[b [[:nope:]]
[[:alpha:] [[:alpha:]]] [a-] [-a] [\]] [\\] [a\-c] foo**/bar foo/**bar foo/b**
**foo foo** a*/b a/*/b */b */* a/?/b a?b a[/]b a[!x]b ***/foo a/***/b /* /*.bin
/a* x/y/z [[:digit:][:upper:]]* [[:punct:]] [[:xdigit:]]? [[:blank:]]* [[:cntrl:]]*
*[[:graph:]] [[:print:]]* [[:lower:]]* [[:alnum:]]* [[:upper:]] [[:space:]]
[!a-z]* [^.]* .git* d/.* d/**/.* **/.hidden a/**/ a/\**/b a/**\/b /**/
a/b/ \[ab] [[:]] [[:] []-a] [!-] a**b/c d/*.bin /d/*/ x[[:space:]]y
é ?? [é] [[:alpha:]]? \é foo/*/ */ **/ a*b*c*d */*/* *.b?n [ab]*/[cd]*
**/b/** a/**/b/**/c /a/**/ ** x/**/y/**/**/z [a-z][0-9] \\* \a\b\c
/**/**/**/**/**/**/x a/**/**/**/**/**/b **/*/**/*/**/*/b **/a*/**/*b*/**/x
"""
words = tricky.split() + ["my file.bin", "a b/c d", "'quoted'", '"dq', "#c",
                          "x\ty", "[ ]x", "a[b c]", "sp ace/*", "\\ x"]

LIT = ["a", "b", "ab", "foo", "x.y", ".", "-", "_", "é", " ", "#", "!", "1",
       "B", "~", "+", "%", "]"]
WILD = ["*", "?", "**", "[ab]", "[!a]", "[^a]", "[a-c]", "[]a]", "[!]]",
        "[a-]", "[-a]", "[[:space:]]", "[[:alpha:]]", "[[:digit:][:upper:]]",
        "[[:punct:]]", "[[:xdigit:]]", "[[:blank:]]", "[[:cntrl:]]", "[\\]]",
        "[a\\-z]", "\\*", "\\?", "\\[", "\\a", "\\ ", "[[:lower:]]"]


def segment():
    return "".join(rnd.choice(LIT) if rnd.random() < .5 else rnd.choice(WILD)
                   for _ in range(rnd.randint(1, 3)))


def gen_pattern():
    segs = [segment() for _ in range(rnd.randint(1, 3))]
    p = ""
    for i, s in enumerate(segs):
        if i:
            p += rnd.choice(["/", "/", "/**/"])
        p += s
    r = rnd.random()
    if r < .2:
        p = "/" + p
    elif r < .3:
        p = "**/" + p
    if rnd.random() < .1:
        p += "/**"
    return p


patterns = []
for w in words + [gen_pattern() for _ in range(420)]:
    if w not in patterns and "\n" not in w:
        patterns.append(w)

# ---- paths: fixed ones, random ones, and near-instances of the patterns ----
NAMES = ["a", "b", "ab", "foo", "bar", "x.y", ".hidden", "d", "é", "a b",
         "x\ty", "#c", "!foo", "B", "1", "a]b", "a*b", "a?b", "a[b", "a\\b",
         "file.bin", "f.BIN", "t.tar.gz", "z~", "v\x0bw", "f\x0cg", "c\rd",
         "n\nl", "q:", "-", "_", "%", "x.bin", "A"]
fixed = ["a/1/2/3/4/5/6/7/8/b", "1/2/3/4/5/6/7/8/9/x", "a/b/a/b/a/b/a/b/c",
         "foo", "foo/bar", "a/b", "a/x/b", "a/x/y/b", "x/foo", "x/foo/bar",
         "foo/x/bar", "foobar", "foox/bar", "fooz/x/bar", "a/bx/y", ".hidden",
         "d/.hidden", "d/e/.hidden", "my file.bin", "my\tfile.bin",
         "dir/my file.bin", "#foo", "!foo", "a/b/c/d", "abcd", "a]b", "x y",
         "x", "y", "Z", "é", "éé", "a/é", "t.tar.gz", ".git", "dir", "a/b.bin",
         "a b.bin", "a\tb.bin", "a\nb.bin", "a\rb.bin", " lead.bin", "\tlead.bin",
         'q"uote', '"q', "b\\s", "h#x", "#h", "!x"]


def sample(tok):
    """Text that a glob token might match (or narrowly miss)."""
    table = {"*": ["", "x", "ab", ".q", "a/b"], "?": ["x", "/", ".", "é"],
             "**": ["", "d", "d/e", "x/"], "/**/": ["/", "/d/", "/d/e/"]}
    if tok in table:
        return rnd.choice(table[tok])
    if tok.startswith("["):
        return rnd.choice(["a", "b", "]", "-", " ", "\t", "Z", "7", "!", "^",
                           "\\", ".", "\x0b", "/"])
    if tok.startswith("\\") and len(tok) == 2:
        return tok[1]
    return tok


def instance(p):
    """A path built by reading p loosely, token by token."""
    out, i = "", 0
    while i < len(p):
        if p.startswith("/**/", i):
            tok = "/**/"
        elif p.startswith("**", i):
            tok = "**"
        elif p[i] == "\\" and i + 1 < len(p):
            tok = p[i:i + 2]
        elif p[i] == "[":
            j = p.find("]", i + 2)
            tok = p[i:j + 1] if j > 0 else p[i]
        else:
            tok = p[i]
        out += sample(tok)
        i += len(tok)
    out = out.lstrip("/")
    if rnd.random() < .3:
        out = rnd.choice(NAMES) + "/" + out
    return out


def valid(path):
    parts = path.split("/")
    return (path and "\0" not in path and
            all(c and c not in (".", "..", ".git") for c in parts))


paths = list(fixed)
for _ in range(120):
    paths.append("/".join(rnd.choice(NAMES) for _ in range(rnd.randint(1, 4))))
for p in patterns:
    for _ in range(5):
        paths.append(instance(p))
paths = list(dict.fromkeys(x for x in paths if valid(x)))

# ---- migrate's verdicts ----


def run_probe(args, data):
    r = subprocess.run([probe] + args, input=data, stdout=subprocess.PIPE,
                       check=True)
    return r.stdout.decode("utf-8", "surrogateescape").split("\n")[:-1]


def enc(s):
    return s.encode("utf-8", "surrogateescape")


data = b"".join(enc(p) + b"\0" + enc(x) + b"\0" for p in patterns for x in paths)
out = run_probe(["-z"], data)
assert len(out) == len(patterns) * len(paths), "probe output count"
ours, refused = {}, {}
k = 0
for p in patterns:
    for x in paths:
        v = out[k]
        k += 1
        if v.startswith("E"):
            refused[p] = v[2:]
        else:
            ours[(p, x)] = v == "1"

# ---- git's verdicts ----


def cquote(s):
    return '"' + "".join({"\\": "\\\\", '"': '\\"', "\t": "\\t",
                          "\n": "\\n", "\r": "\\r"}.get(c, c)
                         for c in s) + '"'


def attr_line(pat, name):
    plain = not any(c in pat for c in " \t\r\n") and pat[0] not in '"#'
    return (pat if plain else cquote(pat)) + " " + name + "\n"


def check_attr(lines, query):
    """{(attr name, path)} for every attribute git sets."""
    with open(repo + "/.gitattributes", "wb") as f:
        f.write(enc("".join(lines)))
    r = subprocess.run(["git", "-C", repo, "check-attr", "-a", "--stdin",
                        "-z"], input=b"".join(enc(x) + b"\0" for x in query),
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       check=True)
    f = r.stdout.decode("utf-8", "surrogateescape").split("\0")
    return {(f[i + 1], f[i]) for i in range(0, len(f) - 2, 3)
            if f[i + 2] == "set"}


# negative patterns are ignored by git (with a warning): leave them out
judged = [p for p in patterns if not p.startswith("!")]
names = {p: "t%d" % i for i, p in enumerate(judged)}
git = check_attr([attr_line(p, names[p]) for p in judged], paths)

bad = {"globs": [], "never": [], "attr": [], "anchored": []}
compared, skipped, nevers = 0, [], 0
for p in patterns:
    if p in refused:
        why = refused[p]
        if "git never matches" in why or "negative" in why:
            hits = [x for x in paths if (names.get(p), x) in git]
            nevers += 1
            compared += len(paths)
            if hits:
                bad["never"].append("refused %r (%s) but git matches %r" % (p, why, hits[0]))
        else:
            skipped.append((p, why))
        continue
    for x in paths:
        compared += 1
        g = (names[p], x) in git
        if g != ours[(p, x)]:
            bad["globs"].append("pattern %r path %r: git %d, migrate %d" % (p, x, g, ours[(p, x)]))

# ---- .gitattributes pattern for a glob rule: exactly the rule's paths ----
globs = [p for p in patterns if p not in refused]
attr = run_probe(["--attr"], b"".join(enc(p) + b"\0" for p in globs))
lines, hnames = [], {}
for i, (p, a) in enumerate(zip(globs, attr)):
    if a.startswith("A\t"):
        hnames[p] = "h%d" % i
        lines.append(a[2:] + " " + hnames[p] + "\n")
    else:
        skipped.append((p, "attr form: " + a[2:]))
git2 = check_attr(lines, paths)
for p in hnames:
    for x in paths:
        compared += 1
        g = (hnames[p], x) in git2
        if g != ours[(p, x)]:
            bad["attr"].append("attr form of %r path %r: git %d, migrate %d" % (p, x, g, ours[(p, x)]))

# ---- anchored per-path line: matches its path and nothing else ----
some = paths[:700]
anch = run_probe(["--attr-path"], b"".join(enc(x) + b"\0" for x in some))
lines = []
for i, a in enumerate(anch):
    assert a.startswith("A\t"), a
    lines.append(a[2:] + " p%d\n" % i)
git3 = check_attr(lines, some)

for i, q in enumerate(some):
    for x in some:
        compared += 1
        g = ("p%d" % i, x) in git3
        if g != (q == x):
            bad["anchored"].append("anchored line %r for %r, path %r: git %d" % (anch[i], q, x, g))

print("rules_checkattr: %d patterns, %d paths, %d verdicts compared "
      "(%d of them matches), %d disagreements"
      % (len(patterns), len(paths), compared, len(git) + len(git2) + len(git3),
         sum(len(v) for v in bad.values())))
print("rules_checkattr: %d patterns refused as never matching, each "
      "checked against git" % nevers)
print("rules_checkattr: %d skipped (git versions differ, or no "
      ".gitattributes form):" % len(skipped))
for p, why in skipped:
    print("   %r: %s" % (p, why))
for kind, v in bad.items():
    with open(outdir + "/bad." + kind, "w") as f:
        f.write("".join("MISMATCH " + b + "\n" for b in v))
PY
EOF

# agree KIND: no disagreement of that kind (the first 20 said)
agree() {
	[ -e "$tmp/bad.$1" ] || die "no verdicts (the first case failed)"
	[ ! -s "$tmp/bad.$1" ] || { head -n 20 "$tmp/bad.$1"; die "$(wc -l <"$tmp/bad.$1") disagreement(s)"; }
}

test_case "every rule glob agrees with git check-attr on every path" <<'EOF'
agree globs
EOF

test_case "every pattern refused as never matching (or negative) matches no path in git" <<'EOF'
agree never
EOF

test_case "the .gitattributes line migrate writes for a glob rule matches exactly the rule's paths" <<'EOF'
agree attr
EOF

test_case "the anchored per-path .gitattributes line matches its path and nothing else" <<'EOF'
agree anchored
EOF

test_done
