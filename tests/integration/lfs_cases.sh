#!/usr/bin/env bash
# lfs_cases.sh - hand-made histories for the cases that break LFS
# migrations, each judged by git and git-lfs (lfs_lib.sh):
#  - one blob at a converted and at a kept path, in one commit, across
#    branches, and again later after only converted uses;
#  - a rename (-M export) out of and into a converted name;
#  - drop: the path and its content vanish from all history;
#  - .gitattributes written by history (no final LF, later edited, in a
#    subdirectory) survives, with our lines once;
#  - executables stay executable, symlinks and protected files are never
#    converted, a file that already is a pointer is left alone;
#  - a --no-data export: blobs read from the source repository;
#  - bad rules: FILE:LINE:COLUMN, exit 1, nothing written;
#  - names with blanks, glob specials and quotes: on every commit, git
#    check-attr says filter=lfs for exactly the converted paths (near
#    misses such as a TAB where a space was are not LFS);
#  - a path whose .gitattributes line git would ignore (2048 bytes or
#    more) is an error, not a silent miss.
. "$(dirname "$0")/lib/lib.sh"
. "$HERE/lfs_lib.sh"

ORIG="$SCRATCH/orig"
git init -q "$ORIG"
cd "$ORIG"
big() { head -c "$2" /dev/urandom >"$1"; }
big a.bin 300000
cp a.bin same-as-a.txt			# same blob, kept path, same commit
# already.bin is LFS already (its object in the store); no final LF
printf 'already.bin filter=lfs diff=lfs merge=lfs -text\n*.md text' >.gitattributes
mkdir sub && printf 'sub.bin -text\n' >sub/.gitattributes
big run.bin 1000 && chmod +x run.bin
ln -s a.bin link.bin			# a symlink named *.bin
printf 'lfs\n' >"$SCRATCH/content" && git lfs pointer --file="$SCRATCH/content" >already.bin 2>/dev/null
git lfs install --local >/dev/null
oid=$(sha256sum "$SCRATCH/content" | cut -c1-64)
mkdir -p ".git/lfs/objects/${oid:0:2}/${oid:2:2}"
cp "$SCRATCH/content" ".git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid"
printf 'SECRET=1\n' >secrets.env
: >empty.bin
cp a.bin copy-of-a.bin			# same content, two converted paths
printf 'small\n' >grow.log		# under the size threshold for now
git add -A && git commit -qm one
git tag t-one
git checkout -qb side
cp a.bin on-side.dat			# same blob on another branch, kept
git rm -q .gitattributes already.bin	# history deletes .gitattributes
git add -A && git commit -qm side
git checkout -q main
big b.bin 200000 && git add b.bin && git commit -qm two
big grow.log 150000 && git add grow.log && git commit -qm "grow.log grows"
git tag t-grown
git rm -q b.bin && git commit -qm "drop b"
cp "$ORIG/a.bin" later.dat		# a.bin's blob again, kept, later
printf 'already.bin filter=lfs diff=lfs merge=lfs -text\n*.md text\n*.cfg eol=lf\n' >.gitattributes
git add -A && git commit -qm three
git mv a.bin renamed.txt		# out of a converted name
git mv same-as-a.txt renamed.bin	# into one
git commit -qm rename
printf 'SECRET=2\n' >secrets.env && git commit -qam "secret again"
git merge -q --no-ff side -m merge >/dev/null 2>&1 || {
	git checkout -q HEAD -- .gitattributes already.bin && git commit -qm merge; }
git tag -a v1 -m v1
cd - >/dev/null

cat >"$SCRATCH/rules" <<'EOF'
secrets.env   drop
*.bin         lfs
*.log         size>=100kB   lfs
EOF

# -M so that renames reach migrate as R lines
git -C "$ORIG" fast-export --all -M "${EXPORT_FLAGS[@]}" >"$SCRATCH/in.fe"
grep -q '^R ' "$SCRATCH/in.fe" || die "the export has no rename"
# the same history without data, for the --no-data check below (ORIG is
# filter-branched on the way; a commit it empties would be kept as empty
# from the start, where the rules' run prunes it)
git -C "$ORIG" fast-export --all --no-data "${EXPORT_FLAGS[@]}" >"$SCRATCH/nodata.fe"
NEW="$SCRATCH/new"
git init -q "$NEW"

test_case "migrate's ids are fast-import's, and git lfs fsck passes" <<'EOF'
run_migrate --rules "$SCRATCH/rules" --source-repo "$ORIG" \
	--store "$NEW/.git/lfs/objects" --commit-map "$SCRATCH/M" \
	--ref-map "$SCRATCH/R" --export-marks "$SCRATCH/MM" \
	<"$SCRATCH/in.fe" >"$SCRATCH/out.fi" || die "migrate failed"
import_stream "$NEW" "$SCRATCH/X" <"$SCRATCH/out.fi" || die "fast-import failed"
check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" "$NEW"
# already.bin was LFS before: its object is the user's to copy over
mkdir -p "$NEW/.git/lfs/objects/${oid:0:2}/${oid:2:2}"
cp "$SCRATCH/content" "$NEW/.git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid"
(cd "$NEW" && git lfs fsck >/dev/null) || die "git lfs fsck failed"
EOF

# the cases below judge NEW, the repository the case above made
test_case "a store object of the right size with a flipped byte is replaced by a re-run" <<'EOF'
# a store object of the right size with wrong bytes (a flipped byte) is
# not trusted: a re-run into the same store replaces it with the good copy
victim="$(git -C "$NEW" cat-file -p main:renamed.bin | sed -n 's/^oid sha256://p')"
victim="$NEW/.git/lfs/objects/${victim:0:2}/${victim:2:2}/$victim"
[ -f "$victim" ] || die "test setup: no object for renamed.bin in the store"
good_sum="$(sha256sum <"$victim" | cut -c1-64)"
size_before="$(wc -c <"$victim")"
printf 'X' | dd of="$victim" bs=1 seek=1000 conv=notrunc status=none
[ "$(wc -c <"$victim")" = "$size_before" ] || die "test setup: the size changed"
# --dry-run: fsck would move a corrupt object to .git/lfs/bad/
(cd "$NEW" && git lfs fsck --dry-run >/dev/null 2>&1) &&
	die "test setup: git lfs fsck missed the corruption"
run_migrate --rules "$SCRATCH/rules" --source-repo "$ORIG" \
	--store "$NEW/.git/lfs/objects" <"$SCRATCH/in.fe" >/dev/null ||
	die "the re-run over a corrupt store failed"
[ "$(sha256sum <"$victim" | cut -c1-64)" = "$good_sum" ] ||
	die "the corrupt object $(basename "$victim") was kept"
(cd "$NEW" && git lfs fsck >/dev/null) || die "git lfs fsck failed after the re-run"
[ -z "$(find "$NEW/.git/lfs/objects/tmp" -type f)" ] || die "the re-run left temp files"
info "store: a corrupt object of the right size is replaced by the re-run"
EOF

test_case "drop: secrets.env and both its contents are gone from all history" <<'EOF'
# the dropped file is gone from every commit, and its contents with it
output_has . -- git -C "$NEW" log --all --format=%H -- secrets.env &&
	die "secrets.env is still in history"
for v in 1 2; do
	id=$(printf 'SECRET=%s\n' "$v" | git hash-object --stdin)
	git -C "$NEW" cat-file -e "$id" 2>/dev/null && die "secret blob $id is in the new repository"
done
info "drop: path and content gone"
EOF

# checkouts, except the dropped file: compare against the original minus it
# (the original is rewritten here, outside the cases: every case below sees
# it so, as it did when this script was one sequence)
git -C "$ORIG" filter-branch -f --index-filter \
	'git rm -q --cached --ignore-unmatch secrets.env' --tag-name-filter cat -- --all \
	>/dev/null 2>&1 || die "could not make the reference history"

test_case "every branch and tag checks out (smudged) as the original without secrets.env" <<'EOF'
check_ref_checkouts "$ORIG" "$NEW"
EOF

# pointers where *.bin (and nothing else), modes kept
ls_new() { git -C "$NEW" ls-tree -r "$1" | awk -v p="$2" '$4 == p { print $1, $3 }'; }
blob_new() { git -C "$NEW" cat-file -p "$1:$2"; }

test_case "pointers where *.bin and nothing else; modes, symlinks, existing pointers and nested .gitattributes kept" <<'EOF'
blob_new main renamed.bin | grep -q '^version https://git-lfs' || die "renamed.bin is not a pointer"
blob_new main renamed.txt | cmp -s - "$ORIG/renamed.txt" 2>/dev/null ||
	git -C "$ORIG" cat-file -p main:renamed.txt | cmp -s - <(blob_new main renamed.txt) ||
	die "renamed.txt does not hold the original bytes"
[ "$(ls_new main run.bin | cut -d' ' -f1)" = 100755 ] || die "run.bin lost its mode"
[ "$(ls_new main link.bin | cut -d' ' -f1)" = 120000 ] || die "link.bin is no symlink"
[ "$(blob_new main link.bin)" = a.bin ] || die "the symlink was converted"
[ "$(git -C "$NEW" rev-parse main:already.bin)" = "$(git -C "$ORIG" rev-parse main:already.bin)" ] ||
	die "a pointer was converted again"
[ "$(git -C "$NEW" rev-parse main:sub/.gitattributes)" = "$(git -C "$ORIG" rev-parse main:sub/.gitattributes)" ] ||
	die "sub/.gitattributes changed"
info "pointers, modes, symlinks, existing pointers, nested .gitattributes: ok"
EOF

test_case ".gitattributes: the user's lines first as they were, ours once, history's edit and deletion kept" <<'EOF'
# .gitattributes: the user's file first, as it was (an LF added where it
# had none), ours once; where history deleted it, ours alone
tail -n +2 "$SCRATCH/M" | while read -r old new; do
	# the commit that only touched secrets.env is pruned (40 zeros)
	[ "$new" != 0000000000000000000000000000000000000000 ] || continue
	attrs="$(git -C "$NEW" cat-file -p "$new:.gitattributes")" ||
		die "commit $new has no .gitattributes"
	[ "$(grep -c '^\*\.bin filter=lfs diff=lfs merge=lfs -text$' <<<"$attrs")" = 1 ] ||
		die "commit $new: the lfs line is not there exactly once"
	if user="$(git -C "$ORIG" cat-file -p "$old:.gitattributes" 2>/dev/null)"; then
		[ "${attrs:0:${#user}}" = "$user" ] ||
			die "commit $new does not start with the user's .gitattributes"
	fi
done
git -C "$NEW" cat-file -p main:.gitattributes | grep -qx '\*\.cfg eol=lf' ||
	die "the history's edit of .gitattributes did not survive"
output_has 'md text' -- git -C "$NEW" cat-file -p side:.gitattributes &&
	die "the deleted user lines came back"
info ".gitattributes: user lines kept, edits and deletion survive, ours once"
EOF

test_case "one content at two converted paths is one pointer and one store object; a file growing past the threshold converts from then on" <<'EOF'
# identical content at two converted paths: one pointer, one store object
[ "$(git -C "$NEW" rev-parse main:copy-of-a.bin)" = "$(git -C "$NEW" rev-parse t-one:a.bin)" ] ||
	die "the same content gave two pointers"
[ "$(find "$NEW/.git/lfs/objects" -type f | wc -l)" = \
	"$(git -C "$NEW" lfs ls-files --all --long | awk '{print $1}' | sort -u | wc -l)" ] ||
	die "the store does not hold one object per content"
# a file that grows past the threshold: kept before, LFS after
git -C "$NEW" cat-file -p t-one:grow.log | grep -qx small || die "small grow.log was converted"
git -C "$NEW" cat-file -p t-grown:grow.log | grep -q '^version https://git-lfs' ||
	die "grown grow.log is not a pointer"
info "shared content, size threshold over time: ok"
EOF

test_case "a --no-data export gives the commits of the full export (converted blobs read from the source repository)" <<'EOF'
# --no-data: only converted blobs are read, from the source repository
ND="$SCRATCH/nodata"
git clone -q --bare "$ORIG" "$ND/.git" && git -C "$ND" config core.bare false
git -C "$ND" for-each-ref --format='delete %(refname)' | git -C "$ND" update-ref --stdin
run_migrate --rules "$SCRATCH/rules" --source-repo "$ORIG" --store "$ND/.git/lfs/objects" \
	<"$SCRATCH/nodata.fe" | git -C "$ND" fast-import --quiet || die "--no-data run failed"
for ref in $(git -C "$NEW" for-each-ref --format='%(refname)'); do
	[ "$(git -C "$ND" rev-parse "$ref")" = "$(git -C "$NEW" rev-parse "$ref")" ] ||
		die "--no-data gives another $ref than the full export"
done
info "--no-data export: the same commits as the full export"
EOF

test_case "bad rules: FILE:LINE:COLUMN, exit 1, no map written, the output not ended" <<'EOF'
# bad rules: one message with FILE:LINE:COLUMN, exit 1, nothing written
printf '*.bin lfs\n*.psd  lfz\n' >"$SCRATCH/bad.rules"
rc=0
"$MIGRATE" --rules "$SCRATCH/bad.rules" --store "$SCRATCH/bad-store" \
	--commit-map "$SCRATCH/bad-map" <"$SCRATCH/in.fe" >"$SCRATCH/bad.out" 2>"$SCRATCH/bad.err" || rc=$?
[ "$rc" = 1 ] || die "bad rules: exit $rc, expected 1"
grep -q "bad.rules:2:8:" "$SCRATCH/bad.err" || die "bad rules: no FILE:LINE:COLUMN in: $(cat "$SCRATCH/bad.err")"
[ ! -e "$SCRATCH/bad-map" ] || die "bad rules: a commit map was written"
! grep -q '^done$' "$SCRATCH/bad.out" || die "bad rules: the output ends with done"
info "bad rules: $(head -1 "$SCRATCH/bad.err")"
EOF

# ---- names .gitattributes must escape ---------------------------------------
# A glob rule with a blank (one quoted glob line) and a size rule (one
# anchored line per converted path). Each converted name has near misses
# that an over-broad escape would also catch: a TAB or LF for a space (and
# the other way round), a glob special read as a wildcard, a lost backslash.
NAMES="$SCRATCH/names"
git init -q "$NAMES"
(
	cd "$NAMES"
	mkdir -p 'g dir' "g${TAB:=$'\t'}dir" sub
	big() { head -c 3000 /dev/urandom >"$1"; }
	small() { printf 'small %s\n' "$1" >"$1"; }
	# converted: big, or below 'g dir/'
	for f in $'a\tb.bin' 'x[1].bin' 'st*r.bin' 'q?.bin' 'back\slash.bin' \
		'!bang.bin' '#hash.bin' ' lead.bin' 'dq"uote.bin' $'l\nf.bin' \
		'sp ace.bin' 'sub/[ab].bin' $'cr\rx.bin' 'sub/**.bin'; do
		big "$f"
	done
	small 'g dir/x.bin'
	# near misses, kept (small): each matches a wrong escape of the above
	for f in 'a b.bin' $'a\nb.bin' 'x1.bin' 'stXr.bin' 'qq.bin' 'backslash.bin' \
		'bang.bin' 'hash.bin' 'lead.bin' $'\tlead.bin' 'dquote.bin' 'l f.bin' \
		$'l\tf.bin' $'sp\tace.bin' $'sp\nace.bin' 'sub/a.bin' 'cr x.bin' \
		'sub/xy.bin' "g${TAB}dir/x.bin" $'g\ndir.bin'; do
		small "$f"
	done
	git add -A && git commit -qm names
	# grow a near miss past the threshold, shrink a converted file
	big 'a b.bin' && small $'a\tb.bin'
	git mv 'x[1].bin' 'sub/x[1].bin'
	git add -A && git commit -qm "grow, shrink, move"
	git rm -q 'st*r.bin' 'stXr.bin' && small 'q?.bin'
	git add -A && git commit -qm "delete, shrink"
)
printf "'g dir/*.bin' lfs\n* size>=1000 lfs\n" >"$SCRATCH/names.rules"
git -C "$NAMES" fast-export --all "${EXPORT_FLAGS[@]}" >"$SCRATCH/names.fe"
NNEW="$SCRATCH/names-new"
git init -q "$NNEW"

test_case "names with blanks, glob specials and quotes: on every commit check-attr says filter=lfs exactly for the converted paths" <<'EOF'
run_migrate --rules "$SCRATCH/names.rules" --store "$NNEW/.git/lfs/objects" \
	--commit-map "$SCRATCH/names.M" <"$SCRATCH/names.fe" >"$SCRATCH/names.fi" ||
	die "migrate failed on the tricky names"
import_stream "$NNEW" "$SCRATCH/names.X" <"$SCRATCH/names.fi" || die "fast-import failed on the tricky names"
(cd "$NNEW" && git lfs fsck >/dev/null) || die "git lfs fsck failed on the tricky names"
# every commit: the paths holding pointers are exactly those check-attr
# (reading that commit's .gitattributes) says filter=lfs for
python3 - "$NNEW" "$SCRATCH/names.M" "$SCRATCH/names.idx" <<'PY' || die "tricky names: check-attr is not exact"
import os, subprocess, sys
repo, cmap, idx = sys.argv[1:4]
env = dict(os.environ, GIT_INDEX_FILE=idx)
def git(*a, data=None):
    return subprocess.run(["git", "-C", repo] + list(a), input=data, env=env,
                          stdout=subprocess.PIPE, check=True).stdout
must = {b"a\tb.bin", b"x[1].bin", b"st*r.bin", b"q?.bin", b"back\\slash.bin",
        b"!bang.bin", b"#hash.bin", b" lead.bin", b'dq"uote.bin', b"l\nf.bin",
        b"sp ace.bin", b"sub/[ab].bin", b"cr\rx.bin", b"sub/**.bin", b"g dir/x.bin"}
seen, commits = set(), 0
for line in open(cmap).read().split("\n")[1:]:
    if not line:
        continue
    new = line.split()[1]
    commits += 1
    files = {}
    for ent in git("ls-tree", "-r", "-z", "--full-tree", new).split(b"\0")[:-1]:
        meta, path = ent.split(b"\t", 1)
        mode, typ, oid = meta.split()
        if typ == b"blob" and path != b".gitattributes":
            files[path] = oid
    pointers = set()
    for path, oid in files.items():
        if git("cat-file", "-p", oid.decode()).startswith(b"version https://git-lfs"):
            pointers.add(path)
    git("read-tree", new)
    out = git("check-attr", "--cached", "-z", "--stdin", "filter",
              data=b"".join(p + b"\0" for p in files)).split(b"\0")
    lfs = {out[i] for i in range(0, len(out) - 2, 3) if out[i + 2] == b"lfs"}
    if lfs != pointers:
        print("commit %s: filter=lfs but no pointer: %r; pointer but not lfs: %r"
              % (new, sorted(lfs - pointers), sorted(pointers - lfs)))
        sys.exit(1)
    seen |= pointers
    near = {b"a b.bin", b"a\nb.bin", b"x1.bin", b"g\tdir/x.bin", b"sp\tace.bin"} & set(files)
    assert near - lfs, near  # near misses present, not LFS: not vacuous
if not must <= seen:
    print("never converted: %r" % sorted(must - seen))
    sys.exit(1)
print("info: tricky names: %d commits, check-attr exact" % commits)
PY
info "names with TAB, LF, CR, [, *, ?, \\, !, #, \", leading blanks: filter=lfs exactly where converted"
EOF

test_case "a converted path whose .gitattributes line git would ignore (2048 bytes or more) is an error, exit 1" <<'EOF'
# a path whose line would be 2048 bytes or more: git would ignore the line
long="$(printf 'd%.0s' $(seq 1 60))"
long="$long/$long/$long/$long/$long/$long/$long/$long/$long/$long"
long="$long/$long/$long/$long.bin"	# 2443 bytes
printf 'M 100644 inline %s\ndata 3\nabc\n' "$long" >"$SCRATCH/long.body"
{
	printf 'commit refs/heads/main\ncommitter A <a@b> 0 +0000\ndata 0\n'
	cat "$SCRATCH/long.body"
	printf '\ndone\n'
} >"$SCRATCH/long.fe"
printf 're:\\.bin$ lfs\n' >"$SCRATCH/long.rules"
rc=0
"$MIGRATE" --rules "$SCRATCH/long.rules" --store "$SCRATCH/long-store" \
	<"$SCRATCH/long.fe" >"$SCRATCH/long.out" 2>"$SCRATCH/long.err" || rc=$?
[ "$rc" = 1 ] || die "a 2443-byte converted path: exit $rc, expected 1"
grep -q "too long for a .gitattributes line" "$SCRATCH/long.err" ||
	die "a 2443-byte converted path: no clear message: $(cat "$SCRATCH/long.err")"
info "too long for .gitattributes: $(cut -c1-60 "$SCRATCH/long.err")..."
EOF

test_done
