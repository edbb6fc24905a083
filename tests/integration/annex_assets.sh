#!/usr/bin/env bash
# annex_assets.sh - large files out of history into git-annex (issue 14),
# judged by git-annex itself.
#
# The small assets corpus goes through `migrate --rules` (*.bin unlocked,
# *.psd locked) into a fresh repository, and through `migrate run --to`.
# Then, with git-annex as the judge:
#  - ids: migrate's marks, commit map and ref map (git-annex branch
#    included) equal fast-import's;
#  - `git annex fsck --all` passes and fixes no location log; `git annex
#    whereis --all` finds every key in the repository's own UUID, and
#    `git annex find` lists exactly the converted paths;
#  - keys, pointer blobs and object paths are what `git annex calckey`,
#    `git annex add` and `git annex examinekey` make of the same files;
#  - every branch and tag, checked out, equals the original byte for byte
#    and `git status` is clean;
#  - a bare target (hashdirlower objects), a second run that changes
#    nothing, an incremental run that logs only the new keys;
#  - the content moves to a directory special remote and comes back in a
#    fresh clone (git annex initremote, move --to, clone, get);
#  - `migrate run --in-place`, and a second one that changes nothing.
. "$(dirname "$0")/lib/lib.sh"

export HOME="$SCRATCH/home"
mkdir -p "$HOME"
command -v git-annex >/dev/null || die "git-annex is not installed (scripts/lib.sh installs it)"
git lfs install --skip-repo >/dev/null

make_history --only assets "$SCRATCH/corpus"
ORIG="$SCRATCH/corpus/assets"
export_stream "$ORIG" >"$SCRATCH/in.fe"

cat >"$SCRATCH/rules" <<'EOF'
/vendor/keep.bin    keep
*.bin               annex
*.psd               annex mode=locked
*.mp4               lfs
EOF
U=$(python3 -c 'import uuid; print(uuid.uuid4())')

NEW="$SCRATCH/new"
git init -q "$NEW"

test_case "migrate's marks, commit map and ref map (git-annex branch included) are the ids fast-import gives" <<'EOF'
(cd "$ORIG" && run_migrate --rules "$SCRATCH/rules" --annex-uuid "$U" \
	--annex-dir "$NEW/.git/annex" --store "$NEW/.git/lfs/objects" --commit-map "$SCRATCH/M" --ref-map "$SCRATCH/R" --export-marks "$SCRATCH/MM") \
	<"$SCRATCH/in.fe" >"$SCRATCH/out.fi" 2>"$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "migrate failed"; }
import_stream "$NEW" "$SCRATCH/X" <"$SCRATCH/out.fi" || die "fast-import failed"
check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" "$NEW"
grep -q ' refs/heads/git-annex$' "$SCRATCH/R" || die "the ref map has no git-annex branch"
EOF

test_case "check-rules shows the annex rules like lfs ones, with their mode and backend" <<'EOF'
# check-rules and a dry run's report show the annex rules like lfs ones
"$MIGRATE" check-rules --rules "$SCRATCH/rules" a/b.psd x.bin >"$SCRATCH/cr"
grep -q $'^a/b.psd\t.*\tannex mode=locked backend=SHA256E\t' "$SCRATCH/cr" &&
	grep -q $'^x.bin\t.*\tannex mode=unlocked backend=SHA256E\t' "$SCRATCH/cr" ||
	die "check-rules: $(cat "$SCRATCH/cr")"
EOF

test_case "a dry run writes the real run's stream (git-annex branch included), and its report counts the annex rules" <<'EOF'
# out.fi: the first case's stream
(cd "$ORIG" && run_migrate --dry-run --rules "$SCRATCH/rules" --report-json "$SCRATCH/rep.json" \
	--annex-uuid "$U" -o "$SCRATCH/dry.fi") <"$SCRATCH/in.fe" 2>"$SCRATCH/dry.err" || die "dry run failed"
[ ! -s "$SCRATCH/dry.err" ] || die "the dry run printed: $(head -3 "$SCRATCH/dry.err")"
# the same input and UUID give the same stream, git-annex branch included
cmp "$SCRATCH/out.fi" "$SCRATCH/dry.fi" || die "the dry run's stream differs from the real one's"
python3 - "$SCRATCH/rep.json" <<'PY' || die "the dry run's report does not count the annex rules"
import json, sys
rules = json.load(open(sys.argv[1]))["rules"]
annex = [r for r in rules if r["action"] == "annex"]
assert len(annex) == 2 and all(r["blobs"] > 0 and r["bytes"] > 0 for r in annex), annex
PY
EOF

# the cases below judge NEW, the repository the first case made
test_case "git annex init takes the UUID the git-annex branch names" <<'EOF'
# git annex init in a repository whose git-annex branch names its UUID
(cd "$NEW" && git config annex.uuid "$U" && git annex init -q >/dev/null 2>&1 &&
	echo '*.mp4 filter=lfs diff=lfs merge=lfs -text' >>.git/info/attributes) ||
	die "git annex init failed"
grep -qx "$U"' migrate timestamp=[0-9.]*s' <(git -C "$NEW" show git-annex:uuid.log) ||
	die "uuid.log does not describe $U: $(git -C "$NEW" show git-annex:uuid.log)"
EOF

# judge_annex REPO UUID: fsck (no location log fixed), whereis, every key
# of the history stored with git-annex's own layout
judge_annex() {
	local repo="$1" uuid="$2" bad
	(cd "$repo" && git annex fsck --all >"$SCRATCH/fsck" 2>&1) ||
		{ tail -5 "$SCRATCH/fsck" >&2; die "$repo: git annex fsck --all failed"; }
	! grep -i 'fixing location log' "$SCRATCH/fsck" || die "$repo: fsck fixed a location log"
	grep -c ' ok$' "$SCRATCH/fsck" >"$SCRATCH/nkeys" || die "$repo: fsck checked no key"
	(cd "$repo" && git annex whereis --all --json) >"$SCRATCH/whereis" 2>/dev/null ||
		die "$repo: git annex whereis failed"
	bad=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    j = json.loads(line)
    ids = [w["uuid"] for w in j.get("whereis", [])]
    if ids != [sys.argv[2]]:
        print(j["key"], ids); sys.exit(0)
    n += 1
print("ok", n)' "$SCRATCH/whereis" "$uuid")
	case "$bad" in ok\ [1-9]*) ;; *) die "$repo: whereis: $bad" ;; esac
	info "$repo: git annex fsck --all: $(cat "$SCRATCH/nkeys") keys ok; whereis: ${bad#ok } keys here"
}

test_case "git annex fsck --all passes and fixes no location log; whereis finds every key here" <<'EOF'
judge_annex "$NEW" "$U"
EOF

test_case "at main, keys, objects and pointer blobs are what git annex calckey, examinekey and add make" <<'EOF'
# keys, pointers and object paths: git-annex as the oracle. At main: every
# converted path's key is calckey's, its object is where examinekey says,
# its pointer (unlocked) or symlink (locked) is what git annex add makes.
ORACLE="$SCRATCH/oracle"
git init -q "$ORACLE"
(cd "$ORACLE" && git annex init -q oracle >/dev/null 2>&1) || die "oracle: git annex init failed"
git -C "$ORIG" archive main | tar -x -C "$ORACLE"
git -C "$NEW" ls-tree -r -z main | python3 -c '
import os, subprocess, sys
new, oracle = sys.argv[1], sys.argv[2]
n = 0
out = sys.stdout.buffer
for line in sys.stdin.buffer.read().split(b"\0"):
    if not line:
        continue
    meta, path = line.split(b"\t", 1)
    meta = meta.decode()
    mode, typ, oid = meta.split()
    body = subprocess.run(["git", "-C", new, "cat-file", "blob", oid],
                          capture_output=True, check=True).stdout
    if mode == "120000" and b".git/annex/objects/" in body:
        key = body.rsplit(b"/", 1)[1].decode()
    elif body.startswith(b"/annex/objects/"):
        key = body[len(b"/annex/objects/"):].rstrip(b"\n").decode()
    else:
        continue
    calc = subprocess.run(["git", "annex", "calckey", "--backend=SHA256E", path],
                          cwd=oracle, capture_output=True, check=True).stdout.decode().strip()
    if calc != key:
        sys.exit("%s: key %s, git annex calckey says %s" % (path, key, calc))
    obj = subprocess.run(["git", "annex", "examinekey", "--format=${hashdirmixed}${key}/${key}", key],
                         cwd=oracle, capture_output=True, check=True).stdout.decode()
    if not os.path.isfile(os.path.join(new, ".git/annex/objects", obj)):
        sys.exit("%s: no object at .git/annex/objects/%s" % (path, obj))
    out.write((b"L " if mode == "120000" else b"U ") + path + b"\t" + oid.encode() + b"\n")
    n += 1
if n == 0:
    sys.exit("no annexed file at main")
' "$NEW" "$ORACLE" >"$SCRATCH/annexed" || die "keys differ from git-annex's"
awk '$1 == "L"' "$SCRATCH/annexed" | grep -q . || die "no locked file at main"
awk '$1 == "U"' "$SCRATCH/annexed" | grep -q . || die "no unlocked file at main"
# what git annex add writes for the same files, locked (*.psd) and unlocked
(cd "$ORACLE" && cut -d' ' -f2- "$SCRATCH/annexed" | cut -f1 | grep '\.psd$' |
	xargs -r -d '\n' git annex add --force-large -- >/dev/null 2>&1 &&
	cut -d' ' -f2- "$SCRATCH/annexed" | cut -f1 | grep '\.bin$' |
	xargs -r -d '\n' git -c annex.addunlocked=true annex add --force-large -- >/dev/null 2>&1) ||
	die "oracle: git annex add failed"
while IFS=$'\t' read -r kp oid; do
	p=${kp#? }
	want=$(git -C "$ORACLE" ls-files -s -z -- "$p" | cut -d' ' -f2)
	[ "$want" = "$oid" ] || die "$p: pointer blob $oid, git annex add makes $want"
done <"$SCRATCH/annexed"
info "$(wc -l <"$SCRATCH/annexed") annexed files at main: keys, objects and pointer blobs as git-annex makes them"
EOF

test_case "git annex find lists exactly the converted paths" <<'EOF'
# git annex find lists exactly the converted paths (annexed: the case before's)
[ -s "$SCRATCH/annexed" ] || die "no list of the annexed files (the case before failed)"
git -C "$NEW" checkout -q -f main
(cd "$NEW" && git annex find --include='*') | sort >"$SCRATCH/found"
cut -f1 "$SCRATCH/annexed" | cut -d' ' -f2- | sort >"$SCRATCH/want"
diff -u "$SCRATCH/want" "$SCRATCH/found" || die "git annex find lists other paths"
EOF

test_case "renames: a locked file moved deeper gets the symlink of its depth, one renamed out of the rules is the original executable file" <<'EOF'
# renames (fast-export -M): a locked file moved one level deeper gets the
# symlink of its new depth; one renamed out of the rules is the original
# file again, its executable bit kept
T="$SCRATCH/ren"
git init -q "$T"
mkdir -p "$T/d"
head -c 2000 /dev/urandom >"$T/d/a.psd"
head -c 2000 /dev/urandom >"$T/x.psd"
chmod +x "$T/x.psd"
git -C "$T" add . && git -C "$T" commit -qm one
mkdir -p "$T/e/f"
git -C "$T" mv d/a.psd e/f/a.psd && git -C "$T" mv x.psd x.txt && git -C "$T" commit -qm two
git -C "$T" fast-export -M --all --show-original-ids >"$SCRATCH/ren.fe"
grep -q '^R ' "$SCRATCH/ren.fe" || die "fast-export -M wrote no R line"
TR="$SCRATCH/ren-new"
git init -q "$TR"
UR=$(python3 -c 'import uuid; print(uuid.uuid4())')
(cd "$T" && run_migrate --rules "$SCRATCH/rules" --annex-uuid "$UR" --annex-dir "$TR/.git/annex") \
	<"$SCRATCH/ren.fe" 2>/dev/null | git -C "$TR" fast-import --quiet || die "rename run failed"
(cd "$TR" && git config annex.uuid "$UR" && git annex init -q >/dev/null 2>&1 &&
	git checkout -q -f main) || die "rename: init or checkout failed"
[ "$(git -C "$TR" ls-tree main e/f/a.psd | cut -c1-6)" = 120000 ] &&
	case "$(readlink "$TR/e/f/a.psd")" in ../../.git/annex/objects/*) true ;; *) false ;; esac ||
	die "rename: e/f/a.psd is not a locked file of its depth"
cmp "$T/e/f/a.psd" "$TR/e/f/a.psd" || die "rename: e/f/a.psd differs"
[ "$(git -C "$TR" ls-tree main x.txt | cut -c1-6)" = 100755 ] && cmp "$T/x.txt" "$TR/x.txt" ||
	die "rename: x.txt is not the original executable file"
judge_annex "$TR" "$UR"
EOF

# check_checkouts ORIG NEW: every branch and tag of NEW, checked out (the
# git-annex hooks run), equals
# ORIG at the ref (symlinks: the original's as they are; locked files: the
# content behind the symlink), and git status is clean
check_checkouts() {
	local orig="$1" new="$2" o="$SCRATCH/o" n=0 ref
	while read -r ref; do
		[ "$(git -C "$new" cat-file -t "$ref^{}")" = commit ] || continue
		n=$((n + 1))
		git -C "$new" checkout -q -f --detach "$ref" 2>/dev/null || die "$ref: checkout failed"
		git -C "$new" clean -qfdx
		rm -rf "$o" && mkdir "$o"
		git -C "$orig" archive "$ref" | tar -x -C "$o"
		python3 - "$o" "$new" "$ref" <<'PY' || die "$ref: the checkout differs from the original"
import os, sys
o, n, ref = sys.argv[1:4]
def files(root):
    out = set()
    for d, dirs, fs in os.walk(root):
        dirs[:] = [x for x in dirs if not (d == root and x == ".git")]
        for f in fs:
            out.add(os.path.relpath(os.path.join(d, f), root))
        for x in dirs:
            if os.path.islink(os.path.join(d, x)):
                out.add(os.path.relpath(os.path.join(d, x), root))
    return out
a, b = files(o), files(n)
b = {p for p in b if p != ".gitattributes" or p in a}
if a != b:
    sys.exit("%s: paths differ: %s" % (ref, sorted(a ^ b)[:5]))
for p in sorted(a):
    po, pn = os.path.join(o, p), os.path.join(n, p)
    if os.path.islink(po):
        if not os.path.islink(pn) or os.readlink(po) != os.readlink(pn):
            sys.exit("%s: %s: the symlink differs" % (ref, p))
        continue
    if os.path.basename(p) == ".gitattributes":
        continue
    if open(po, "rb").read() != open(pn, "rb").read():
        sys.exit("%s: %s: content differs" % (ref, p))
    if os.access(po, os.X_OK) != os.access(pn, os.X_OK) and not os.path.islink(pn):
        sys.exit("%s: %s: mode differs" % (ref, p))
PY
		[ -z "$(git -C "$new" status --porcelain)" ] ||
			die "$ref: git status is not clean: $(git -C "$new" status --porcelain | head -3)"
	done < <(git -C "$new" for-each-ref --format='%(refname)' refs/heads refs/tags | grep -v '^refs/heads/git-annex$')
	[ "$n" -gt 0 ] || die "no refs to check in $new"
	git -C "$new" checkout -q -f main
	info "$n refs checked out: identical to the original, status clean"
}

test_case "every branch and tag, checked out, equals the original; status clean" <<'EOF'
check_checkouts "$ORIG" "$NEW"
EOF

test_case "a second run over the converted history changes nothing" <<'EOF'
# a second run over the converted history changes nothing
export_stream "$NEW" >"$SCRATCH/again.fe"
(cd "$NEW" && run_migrate --rules "$SCRATCH/rules" --annex-uuid "$U" \
	--ref-map "$SCRATCH/R2" --store "$SCRATCH/lfs2") <"$SCRATCH/again.fe" >"$SCRATCH/again.fi" 2>/dev/null ||
	die "second run failed"
awk '$1 != $2' "$SCRATCH/R2" >"$SCRATCH/R2.changed"
[ ! -s "$SCRATCH/R2.changed" ] ||
	die "a second run changed refs: $(head -3 "$SCRATCH/R2.changed")"
info "a second run changes nothing"
EOF

test_case "a bare target: objects in hashdirlower, as git-annex lays out a bare repository; fsck agrees" <<'EOF'
# a bare target: objects in hashdirlower, as git-annex lays out a bare
# repository, and git-annex's fsck agrees
BARE="$SCRATCH/bare.git"
git init -q --bare "$BARE"
UB=$(python3 -c 'import uuid; print(uuid.uuid4())')
(cd "$ORIG" && run_migrate --rules "$SCRATCH/rules" --annex-uuid "$UB" \
	--annex-dir "$BARE/annex" --store "$BARE/lfs/objects") <"$SCRATCH/in.fe" 2>/dev/null |
	git -C "$BARE" fast-import --quiet || die "bare run failed"
(cd "$BARE" && git config annex.uuid "$UB" && git annex init -q >/dev/null 2>&1) ||
	die "bare: git annex init failed"
key=$(git -C "$BARE" ls-tree -r --name-only git-annex | grep '\.log$' | grep -v '^uuid' | head -1)
key=${key##*/}; key=${key%.log}
obj=$(cd "$BARE" && git annex examinekey --format='${hashdirlower}${key}/${key}' "$key")
[ -f "$BARE/annex/objects/$obj" ] || die "bare: no object at annex/objects/$obj"
judge_annex "$BARE" "$UB"
EOF

TO="$SCRATCH/to"
snap() { git -C "$1" for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags | sort; }

test_case "run --to sets git-annex up as git annex init would, and checks out every annexed file's content" <<'EOF'
# migrate run --to: git-annex set up as `git annex init` would, the work
# tree checked out with the content of every annexed file
run_migrate run -q --repo "$ORIG" --rules "$SCRATCH/rules" --to "$TO" || die "run --to failed"
UT=$(git -C "$TO" config annex.uuid) || die "run --to: no annex.uuid"
[ "$(git -C "$TO" config annex.version)" = 10 ] || die "run --to: annex.version is not 10"
grep -qx '\* filter=annex' "$TO/.git/info/attributes" || die "run --to: no '* filter=annex' in info/attributes"
grep -q 'filter=lfs' "$TO/.git/info/attributes" || die "run --to: the lfs lines are not in info/attributes"
grep -q 'git annex get' "$TO/.git/migrate/RESET.md" || die "RESET.md says nothing of git-annex"
judge_annex "$TO" "$UT"
for h in post-checkout post-merge pre-commit post-receive; do
	[ -x "$TO/.git/hooks/$h" ] || die "run --to: no git-annex $h hook"
done
check_checkouts "$ORIG" "$TO"
EOF

# the cases below go on in TO, the repository the case above made
test_case "a second run --to changes nothing" <<'EOF'
snap "$TO" >"$SCRATCH/to.refs"
run_migrate run -q --repo "$ORIG" --rules "$SCRATCH/rules" --to "$TO" || die "second run --to failed"
snap "$TO" | diff -u "$SCRATCH/to.refs" - || die "a second run --to changed refs"
info "run --to: a second run changes nothing"
EOF

test_case "an incremental run --to (a new commit, one new *.bin) logs exactly one new key" <<'EOF'
# incremental: a new commit with one new *.bin logs exactly one new key
UT=$(git -C "$TO" config annex.uuid) || die "run --to: no annex.uuid (the case before failed)"
git -C "$ORIG" checkout -q main
head -c 3000 /dev/urandom >"$ORIG/assets/new-incremental.bin"
git -C "$ORIG" add assets/new-incremental.bin
git -C "$ORIG" commit -qm "one more binary"
old=$(git -C "$TO" rev-parse git-annex)
run_migrate run -q --repo "$ORIG" --rules "$SCRATCH/rules" --to "$TO" || die "incremental run failed"
git -C "$TO" diff --name-status "$old" git-annex >"$SCRATCH/inc"
[ "$(wc -l <"$SCRATCH/inc")" = 1 ] && grep -q '^A.*\.bin\.log$' "$SCRATCH/inc" ||
	die "the incremental run logged other than the one new key: $(cat "$SCRATCH/inc")"
judge_annex "$TO" "$UT"
cmp "$ORIG/assets/new-incremental.bin" "$TO/assets/new-incremental.bin" ||
	die "incremental: the new file's content is not in the work tree"
info "incremental run: one new key logged"
EOF

test_case "the content moves to a directory special remote, and a fresh clone gets it back from there" <<'EOF'
# the content leaves the repository for a directory special remote, and a
# fresh clone gets it back from there
mkdir "$SCRATCH/dirrem"
(cd "$TO" && git annex initremote dirrem type=directory directory="$SCRATCH/dirrem" \
	encryption=none >"$SCRATCH/rem.log" 2>&1 && git annex move --all --to dirrem >>"$SCRATCH/rem.log" 2>&1) || { tail -5 "$SCRATCH/rem.log" >&2; false; } ||
	die "git annex move --to the directory remote failed"
[ -z "$(find "$TO/.git/annex/objects" -type f)" ] || die "content left in $TO after move --to"
git clone -q "$TO" "$SCRATCH/clone"
(cd "$SCRATCH/clone" && git annex init -q >/dev/null 2>&1 &&
	git annex enableremote dirrem directory="$SCRATCH/dirrem" >/dev/null 2>&1 && git annex get . >/dev/null 2>&1) ||
	die "fresh clone: git annex get from the directory remote failed"
mkdir "$SCRATCH/o2"
git -C "$ORIG" archive main | tar -x -C "$SCRATCH/o2"
while IFS= read -r -d '' p; do
	cmp -s "$SCRATCH/o2/$p" "$SCRATCH/clone/$p" || die "fresh clone: $p differs after git annex get"
done < <(cd "$SCRATCH/clone" && git annex find --include='*' --print0)
info "directory special remote: moved out, and back in a fresh clone"
EOF

IP="$SCRATCH/inplace"
test_case "run --in-place converts: fsck and whereis pass, its ending counts the objects converted, status clean" <<'EOF'
# migrate run --in-place: the same, in the repository itself
git clone -q --no-local "$ORIG" "$IP"
run_migrate run --repo "$IP" --rules "$SCRATCH/rules" --in-place 2>"$SCRATCH/ip.err" ||
	die "run --in-place failed: $(tail -3 "$SCRATCH/ip.err")"
judge_annex "$IP" "$(git -C "$IP" config annex.uuid)"
# the ending counts the objects converted: a key stored each (annex) and
# an LFS object each (*.mp4)
keys=$(find "$IP/.git/annex/objects" "$IP/.git/lfs/objects" -type f | wc -l)
grep -q ", $keys object(s) converted$" "$SCRATCH/ip.err" ||
	die "run --in-place: the ending does not count $keys objects: $(grep converted "$SCRATCH/ip.err")"
[ -z "$(git -C "$IP" status --porcelain)" ] || die "run --in-place: git status is not clean"
EOF

test_case "a second run --in-place changes nothing" <<'EOF'
[ -s "$SCRATCH/ip.err" ] || die "no run --in-place before (the case before failed)"
snap "$IP" >"$SCRATCH/ip.refs"
run_migrate run -q --repo "$IP" --rules "$SCRATCH/rules" --in-place || die "second run --in-place failed"
snap "$IP" | diff -u "$SCRATCH/ip.refs" - || die "a second run --in-place changed refs"
info "run --in-place: converted, a second run changes nothing"
EOF

test_done
