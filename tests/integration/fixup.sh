#!/usr/bin/env bash
# fixup.sh - migrate run --fixup (and the filter's --fixup): git lfs
# migrate import --fixup's job (issue 28, its last item). In each commit,
# the files that commit's own .gitattributes mark filter=lfs (root and
# nested, as git reads them) and that are no LFS pointer become LFS
# pointers; nothing else changes, the .gitattributes included.
#  - git judges every commit: `git check-attr --cached filter` on the
#    commit's own tree says which files must be pointers, `git lfs
#    pointer` what each pointer is; every other file keeps its blob;
#  - git lfs migrate import --fixup --everything on a clone: every commit
#    the same, file by file, but where git-lfs 3.3 is wrong on purpose
#    of ours: it decides a path and blob once, in the first commit that has
#    them, and keeps that answer. So a file added before its pattern stays
#    a file in the commit that adds the pattern (the attributes say LFS;
#    `git lfs fsck --pointers` on git-lfs's own result calls it "should
#    have been a pointer"), and a pointer it made stays after its pattern
#    went (git then checks out the pointer's text). Each difference must
#    be one of these two, and a history whose patterns come before their
#    files must come out the same as git-lfs's, commit by commit;
#  - `git lfs fsck --pointers` on the result finds nothing;
#  - the filter in the pipe gives the same commits; a dry run lists
#    --fixup; --include with --fixup, an lfs rule with --fixup and
#    check-rules --fixup are refused.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

# The histories are made without any LFS filter (this git config has none):
# a file the attributes mark is committed as it is, as in a repository
# where git-lfs was not installed, which is what --fixup repairs.

# the history builders' helpers: f PATH TEXT writes a file of the
# repository $S (the builder's own, by bash's dynamic scope), c MSG commits
# everything
f() { mkdir -p "$(dirname "$S/$1")"; printf '%s\n' "$2" >"$S/$1"; }
c() { git -C "$S" add -A && git -C "$S" commit -q -m "$1"; }

# history SRC: files added before their pattern, patterns added later and
# removed later, a file that is a pointer already, an empty file, an
# executable one, `*.bin -filter` below keep/, a nested sub/.gitattributes,
# a branch that changes the root's patterns and its merge.
history() {
	local S="$1"
	git init -q -b main "$S"
	f a.bin "a one"; f sub/s.bin "s one"; f sub/notes.txt "notes"; f t.txt "text"
	f sub/deep/d.bin "d one"; f keep/k.bin "k one"; f keep/inner/i.bin "i one"
	f run.bin "exec"; chmod +x "$S/run.bin"
	c "files before any pattern"
	f .gitattributes "*.bin filter=lfs diff=lfs merge=lfs -text"
	f keep/.gitattributes "*.bin -filter"
	printf 'already\n' >"$SCRATCH/already"
	git lfs pointer --file="$SCRATCH/already" >"$S/p.bin" 2>/dev/null
	c "patterns added: root *.bin, keep/ -filter"
	git -C "$S" branch side
	f b.bin "b added under the pattern"; f a.bin "a two"; : >"$S/empty.bin"
	c "a file added and one changed under the pattern"
	f sub/.gitattributes "*.txt filter=lfs diff=lfs merge=lfs -text"
	c "nested pattern: sub/*.txt"
	f .gitattributes "*.dat filter=lfs diff=lfs merge=lfs -text"
	f x.dat "x"
	c "root pattern for *.bin removed, *.dat added"
	git -C "$S" checkout -q side
	f side.bin "side"; f README.md "readme"
	printf '%s\n' "*.bin filter=lfs diff=lfs merge=lfs -text" \
		"*.md filter=lfs diff=lfs merge=lfs -text" >"$S/.gitattributes"
	c "side: *.md too"
	git -C "$S" checkout -q main
	git -C "$S" merge -q --no-edit -X theirs side >/dev/null
	f c.bin "c after the merge"
	c "after the merge"
}

# plain SRC: every pattern before its files (git-lfs gets these right):
# root and nested patterns, -filter below a folder, a second branch
plain() {
	local S="$1"
	git init -q -b main "$S"
	f .gitattributes "*.bin filter=lfs diff=lfs merge=lfs -text"
	f docs/.gitattributes "*.png filter=lfs diff=lfs merge=lfs -text"
	f keep/.gitattributes "*.bin -filter"
	f t.txt "text"
	c "patterns"
	f a.bin "a"; f docs/p.png "png"; f docs/x.bin "x"; f keep/k.bin "k"; f t.png "not docs"
	c "files"
	git -C "$S" checkout -q -b feat
	f a.bin "a on feat"; f keep/deeper/k2.bin "k2"; f docs/sub/q.png "q"
	c "feat"
	git -C "$S" checkout -q main
	f a.bin "a two"
	c "main"
}

# tricky SRC: git's reading where it is subtle: a root macro set and,
# below, unset; a pattern with a slash (one level: FNM_PATHNAME); a
# C-quoted pattern with a blank; **; !filter after filter; an anchored
# and a slashed pattern in a nested file; then the macro redefined, which
# changes the answer for files no commit touches
tricky() {
	local S="$1"
	git init -q -b main "$S"
	printf '%s\n' '[attr]big filter=lfs diff=lfs merge=lfs -text' '*.iso big' \
		'docs/*.pdf filter=lfs' '"sp ace.bin" filter=lfs' \
		'**/assets/** filter=lfs' '*.tmp filter=lfs' '*.tmp !filter' \
		>"$S/.gitattributes"
	printf '%s\n' '/top.dat filter=lfs' 'x/*.so filter=lfs' '*.iso -big' \
		>"$S/.gitattributes.lib"
	mkdir -p "$S/lib" && mv "$S/.gitattributes.lib" "$S/lib/.gitattributes"
	f a.iso iso; f docs/a.pdf pdf; f docs/sub/b.pdf pdf2; f "sp ace.bin" blank
	f x/assets/y/z.png png; f f.tmp tmp; f lib/top.dat top; f lib/sub/top.dat top2
	f lib/x/a.so so; f lib/x/y/b.so so2; f lib/c.iso iso2; f n.bin plain
	c "macros, slashes, quotes"
	sed -i 's/^\[attr\]big .*/[attr]big -text/' "$S/.gitattributes"
	c "the macro redefined"
	f docs/c.pdf pdf3
	c "one file more"
}

if ! git lfs version >/dev/null 2>&1; then
	echo "SKIP: git lfs is not installed (it judges the pointers)"
	exit 77
fi

SRC="$SCRATCH/src"
PLAIN="$SCRATCH/plain"
TRICKY="$SCRATCH/tricky"
history "$SRC"
plain "$PLAIN"
tricky "$TRICKY"

# ours SRC NAME [ARGS]: migrate run --fixup into $SCRATCH/NAME, its commit
# map in $SCRATCH/NAME.map
ours() {
	local src="$1" name="$2"
	shift 2
	(cd "$src" && run_migrate run --to "$SCRATCH/$name" -q --fixup \
		--commit-map "$SCRATCH/$name.map" "$@")
}
# theirs SRC NAME [ARGS]: git lfs migrate import --fixup --everything on
# a clone, its commit map (old,new) in $SCRATCH/NAME.map as "old new" lines
theirs() {
	local src="$1" name="$2"
	shift 2
	clone_refs "$src" "$SCRATCH/$name"
	git -C "$SCRATCH/$name" lfs migrate import --fixup --everything --yes "$@" \
		--object-map="$SCRATCH/$name.omap" >"$SCRATCH/$name.log" 2>&1 ||
		die "git lfs migrate import --fixup $*: $(cat "$SCRATCH/$name.log")"
	tr ',' ' ' <"$SCRATCH/$name.omap" >"$SCRATCH/$name.map"
}
# new_of MAP OLD: the commit OLD became (the map's line; git-lfs's
# object map lists only the commits it changed)
new_of() { awk -v o="$2" '$1 == o { n = $2 } END { print (n == "" ? o : n) }' "$1"; }

# pointer_of REPO BLOB: the id of the LFS pointer of BLOB's content, as
# git lfs pointer makes it (remembered per blob)
pointer_of() {
	local memo="$SCRATCH/ptr.$2"
	if [ ! -f "$memo" ]; then
		git -C "$1" cat-file blob "$2" >"$SCRATCH/content"
		git lfs pointer --file="$SCRATCH/content" 2>/dev/null |
			git hash-object --stdin >"$memo"
	fi
	cat "$memo"
}

# expected SRC COMMIT: "<mode> <id> <path>" per file of COMMIT as --fixup
# must leave it: a file its own attributes mark filter=lfs (git
# check-attr, reading the commit's .gitattributes from an index of its
# tree), no pointer and not empty, becomes its pointer
expected() {
	local src="$1" commit="$2" idx="$SCRATCH/idx"
	rm -f "$idx"
	GIT_INDEX_FILE="$idx" git -C "$src" read-tree "$commit"
	git -C "$src" ls-tree -r -z "$commit" | while IFS= read -r -d '' line; do
		local meta="${line%%	*}" path="${line#*	}"
		local mode="${meta%% *}" id="${meta##* }"
		local attr
		attr=$(GIT_INDEX_FILE="$idx" git -C "$src" check-attr --cached filter -- "$path")
		if [ "${attr##*: }" = lfs ] && [ "$mode" != 120000 ] &&
			[ "$(git -C "$src" cat-file -s "$id")" -gt 0 ] &&
			! git -C "$src" cat-file blob "$id" | git lfs pointer --check --stdin 2>/dev/null; then
			id=$(pointer_of "$src" "$id")
		fi
		printf '%s %s %s\n' "$mode" "$id" "$path"
	done
}
files_of() { # REPO COMMIT: "<mode> <id> <path>" per file
	git -C "$1" ls-tree -r "$2" | awk -F '\t' '{ split($1, m, " "); print m[1], m[3], $2 }'
}

test_case "every commit: the files its own .gitattributes mark filter=lfs are pointers, the rest as they were (git check-attr, git lfs pointer)" <<'EOF2'
for src in "$SRC" "$PLAIN" "$TRICKY"; do
	name="ours.$(basename "$src")"
	ours "$src" "$name"
	n=0
	for old in $(git -C "$src" rev-list --all); do
		new=$(new_of "$SCRATCH/$name.map" "$old")
		[ -n "$new" ] || die "$name: commit $old is not in the map"
		expected "$src" "$old" >"$SCRATCH/want"
		files_of "$SCRATCH/$name" "$new" >"$SCRATCH/got"
		cmp -s "$SCRATCH/want" "$SCRATCH/got" ||
			die "$name: commit '$(git -C "$src" log -1 --format=%s "$old")' differs from its attributes (- wanted, + got): $(diff "$SCRATCH/want" "$SCRATCH/got" | grep '^[<>]' | head -8)"
		n=$((n + 1))
	done
	info "$name: $n commits, each file as its commit's attributes say"
done
# the files the history's first commits had, converted where a later
# pattern came: the proof the case can fail
mid=$(git -C "$SRC" rev-parse 'main~4')
new=$(new_of "$SCRATCH/ours.src.map" "$mid")
git -C "$SCRATCH/ours.src" cat-file blob "$new:a.bin" | git lfs pointer --check --stdin ||
	die "a.bin (added before *.bin filter=lfs) is no pointer where the pattern came"
[ "$(git -C "$SCRATCH/ours.src" cat-file blob "$new:keep/k.bin")" = "k one" ] ||
	die "keep/k.bin (keep/: *.bin -filter) was converted"
EOF2

test_case "git lfs fsck: every object in the store; a pointer it misses only where git says no filter=lfs" <<'EOF2'
# git lfs fsck reads a nested pattern without a slash (keep/: *.bin
# -filter) for that directory's own files only; git for every file below
# it. So fsck's "should have been a pointer" must name such a file, which
# git check-attr, on the tree fsck names, says is no LFS file.
# the pointer the history had already (p.bin) is the user's: its object
# is put where a fetch would put it
oid=$(sha256sum <"$SCRATCH/already" | cut -c1-64)
mkdir -p "$SCRATCH/ours.src/.git/lfs/objects/${oid:0:2}/${oid:2:2}"
cp "$SCRATCH/already" "$SCRATCH/ours.src/.git/lfs/objects/${oid:0:2}/${oid:2:2}/$oid"
for name in ours.src ours.plain; do
	[ -d "$SCRATCH/$name" ] || die "no $name: the first case made none"
	for ref in $(git -C "$SCRATCH/$name" for-each-ref --format='%(refname)' refs/heads); do
		git -C "$SCRATCH/$name" lfs fsck --objects "$ref" >"$SCRATCH/fsck" 2>&1 ||
			die "$name $ref: git lfs fsck --objects: $(cat "$SCRATCH/fsck")"
		git -C "$SCRATCH/$name" lfs fsck --pointers "$ref" >"$SCRATCH/fsck" 2>&1 || true
		grep -qv '^pointer: unexpectedGitObject: \|^Git LFS fsck OK$\|^$' "$SCRATCH/fsck" &&
			die "$name $ref: git lfs fsck --pointers: $(cat "$SCRATCH/fsck")"
		sed -n 's/^pointer: unexpectedGitObject: "\(.*\)" (treeish \([0-9a-f]*\)).*/\2 \1/p' \
			"$SCRATCH/fsck" | sort -u | while read -r tree path; do
			rm -f "$SCRATCH/idx"
			GIT_INDEX_FILE="$SCRATCH/idx" git -C "$SCRATCH/$name" read-tree "$tree"
			attr=$(GIT_INDEX_FILE="$SCRATCH/idx" git -C "$SCRATCH/$name" check-attr --cached filter -- "$path")
			[ "${attr##*: }" != lfs ] ||
				die "$name $ref: $path is no pointer and git says filter=lfs"
			info "$name $ref: git lfs fsck takes $path for an LFS file; git says filter: ${attr##*: }"
		done
	done
done
info "git lfs fsck: every object there; every pointer git wants is one"
EOF2

test_case "git lfs migrate import --fixup --everything: every commit the same, but for git-lfs's once-decided paths" <<'EOF2'
: >"$SCRATCH/kinds"
for src in "$SRC" "$PLAIN"; do
	name="$(basename "$src")"
	theirs "$src" "lfs.$name"
	same=0 ondiff=0
	for old in $(git -C "$src" rev-list --all); do
		a=$(new_of "$SCRATCH/lfs.$name.map" "$old")
		b=$(new_of "$SCRATCH/ours.$name.map" "$old")
		[ -n "$a" ] || die "git-lfs's map lacks $old"
		files_of "$SCRATCH/lfs.$name" "$a" >"$SCRATCH/theirs"
		files_of "$SCRATCH/ours.$name" "$b" >"$SCRATCH/mine"
		expected "$src" "$old" >"$SCRATCH/want"
		if cmp -s "$SCRATCH/theirs" "$SCRATCH/mine"; then
			same=$((same + 1))
			continue
		fi
		[ "$src" = "$SRC" ] ||
			die "$name (patterns before files): git-lfs and migrate differ at '$(git -C "$src" log -1 --format=%s "$old")': $(diff "$SCRATCH/theirs" "$SCRATCH/mine" | grep '^[<>]' | head -6)"
		# each differing path: ours is what the attributes want, and
		# git-lfs's is the source's own file (a file it left, or a
		# pointer of a pattern gone) -- its once-decided answer
		join -1 3 -2 3 <(sort -k3 "$SCRATCH/theirs") <(sort -k3 "$SCRATCH/mine") |
			awk '$3 != $5' >"$SCRATCH/diffs"
		[ -s "$SCRATCH/diffs" ] || die "other paths at '$old': $(diff "$SCRATCH/theirs" "$SCRATCH/mine" | head -4)"
		while read -r path _ theirs_id _ mine_id; do
			grep -qxF "100644 $mine_id $path" "$SCRATCH/want" ||
				grep -qxF "100755 $mine_id $path" "$SCRATCH/want" ||
				die "$path at '$old': ours is not what the attributes say"
			src_id=$(git -C "$src" rev-parse "$old:$path")
			if [ "$theirs_id" = "$src_id" ]; then
				echo "left $path" >>"$SCRATCH/kinds"
			elif git -C "$SCRATCH/lfs.$name" cat-file blob "$theirs_id" |
				git lfs pointer --check --stdin && [ "$mine_id" = "$src_id" ]; then
				echo "kept $path" >>"$SCRATCH/kinds"
			else
				die "$path at '$old': git-lfs has $theirs_id, neither the source's file nor the pointer of one no pattern marks now"
			fi
			ondiff=$((ondiff + 1))
		done <"$SCRATCH/diffs"
	done
	info "$name: $same commits the same as git-lfs's; $ondiff paths differ, each git-lfs's once-decided answer"
done
# both kinds were seen: a file added before its pattern that git-lfs
# leaves, a pointer whose pattern went that it keeps
grep -q '^left a.bin$' "$SCRATCH/kinds" || die "no file git-lfs left: $(sort -u "$SCRATCH/kinds")"
grep -q '^kept b.bin$' "$SCRATCH/kinds" || die "no pointer git-lfs kept: $(sort -u "$SCRATCH/kinds")"
info "git-lfs left files its attributes mark: $(sed -n 's/^left //p' "$SCRATCH/kinds" | sort -u | tr '\n' ' ')"
info "git-lfs kept pointers no pattern marks: $(sed -n 's/^kept //p' "$SCRATCH/kinds" | sort -u | tr '\n' ' ')"
EOF2

test_case "the filter in the pipe (full data): the same commits as migrate run --fixup, no content of a file marked when added" <<'EOF2'
[ -s "$SCRATCH/ours.src.map" ] || die "no map of migrate run --fixup: the first case made none"
git init -q --bare "$SCRATCH/pipe"
(cd "$SRC" && git fast-export --all --show-original-ids --reencode=no \
	--signed-tags=verbatim --mark-tags) |
	(cd "$SRC" && run_migrate --fixup --store "$SCRATCH/pipe/lfs/objects" \
		--commit-map "$SCRATCH/pipe.map") |
	git -C "$SCRATCH/pipe" fast-import --quiet
cmp -s <(sort "$SCRATCH/pipe.map" | grep -v '^old') <(sort "$SCRATCH/ours.src.map" | grep -v '^old') ||
	die "the pipe and migrate run give other commits: $(diff <(sort "$SCRATCH/pipe.map") <(sort "$SCRATCH/ours.src.map") | head -4)"
# a file added where its pattern was already, and marked ever after: its
# content is in no commit, and the full-data stream did not write it
c_blob=$(git -C "$SRC" rev-parse "main:c.bin")
if git -C "$SCRATCH/pipe" cat-file -e "$c_blob" 2>/dev/null; then
	die "c.bin's content ($c_blob) went into the import, though no commit has it"
fi
info "the filter with --fixup: the commits of migrate run --fixup; c.bin's content not imported"
EOF2

test_case "in place, a later run goes on (and decides again the files a new .gitattributes marks); one without --fixup is refused" <<'EOF2'
clone_refs "$SRC" "$SCRATCH/inc"
(cd "$SCRATCH/inc" && run_migrate run --in-place -q --fixup)
grep -q -- '^# --fixup$' "$SCRATCH/inc/.git/migrate/rules" ||
	die "the state does not keep --fixup: $(cat "$SCRATCH/inc/.git/migrate/rules")"
before="$(refs_of "$SCRATCH/inc")"
expect_refusal --what "a second run without --fixup" --in "$SCRATCH/inc" \
	--says "^migrate run: error: the rules are not those of the last run" \
	-- "$MIGRATE" run --in-place -q --allow-no-rules
[ "$(refs_of "$SCRATCH/inc")" = "$before" ] || die "a refused run moved refs"
# keep/'s -filter goes: keep/k.bin and keep/inner/i.bin, untouched, are
# marked now (the root's *.bin came back with the merge)
: >"$SCRATCH/inc/keep/.gitattributes"
git -C "$SCRATCH/inc" add -A && git -C "$SCRATCH/inc" commit -q -m "keep/: -filter gone"
printf 'new\n' >"$SCRATCH/inc/new.bin"
git -C "$SCRATCH/inc" add -A && git -C "$SCRATCH/inc" commit -q -m "new.bin"
olds=$(git -C "$SCRATCH/inc" rev-list -2 main)
(cd "$SCRATCH/inc" && run_migrate run --in-place -q --fixup --commit-map "$SCRATCH/inc.map")
for old in $olds; do
	new=$(new_of "$SCRATCH/inc.map" "$old")
	[ "$new" != "$old" ] || die "commit $old not rewritten by the later run"
	expected "$SCRATCH/inc" "$old" >"$SCRATCH/want"
	files_of "$SCRATCH/inc" "$new" >"$SCRATCH/got"
	cmp -s "$SCRATCH/want" "$SCRATCH/got" ||
		die "the later run: '$(git -C "$SCRATCH/inc" log -1 --format=%s "$old")' differs (- wanted, + got): $(diff "$SCRATCH/want" "$SCRATCH/got" | grep '^[<>]' | head -6)"
done
git -C "$SCRATCH/inc" cat-file blob main:keep/k.bin | git lfs pointer --check --stdin ||
	die "keep/k.bin is no pointer after keep/'s -filter went"
info "in place: a later run converts the files keep/'s change marks, and new.bin"
EOF2

test_case "with a rule file: a file a rule decides is the rule's (keep, drop), the others --fixup's" <<'EOF2'
printf '%s\n' '/a.bin keep' 't.txt drop' >"$SCRATCH/fix.rules"
ours "$SRC" rules.src --rules "$SCRATCH/fix.rules"
for old in $(git -C "$SRC" rev-list --all); do
	new=$(new_of "$SCRATCH/rules.src.map" "$old")
	[ "$(git -C "$SCRATCH/rules.src" rev-parse "$new:a.bin")" = "$(git -C "$SRC" rev-parse "$old:a.bin")" ] ||
		die "a.bin (a keep rule) changed at '$(git -C "$SRC" log -1 --format=%s "$old")'"
	! git -C "$SCRATCH/rules.src" cat-file -e "$new:t.txt" 2>/dev/null ||
		die "t.txt (a drop rule) is still there"
	expected "$SRC" "$old" | grep -v ' a\.bin$\| t\.txt$' >"$SCRATCH/want"
	files_of "$SCRATCH/rules.src" "$new" | grep -v ' a\.bin$' >"$SCRATCH/got"
	cmp -s "$SCRATCH/want" "$SCRATCH/got" ||
		die "with rules: '$(git -C "$SRC" log -1 --format=%s "$old")' differs (- wanted, + got): $(diff "$SCRATCH/want" "$SCRATCH/got" | grep '^[<>]' | head -6)"
done
info "a keep rule and a drop rule decide their files; --fixup the others, as without rules"
EOF2

test_case "a dry run lists --fixup; --include, --exclude, --above (as git-lfs), an lfs rule and check-rules with --fixup are refused" <<'EOF2'
(cd "$SRC" && run_migrate run --to "$SCRATCH/dry" --dry-run --fixup) >"$SCRATCH/dry.out" 2>&1
grep -q -- '--fixup' "$SCRATCH/dry.out" || die "the dry run does not list --fixup: $(cat "$SCRATCH/dry.out")"
[ ! -e "$SCRATCH/dry" ] || die "the dry run made $SCRATCH/dry"
for o in --include='*.bin' --exclude='*.bin' --above=1MB; do
	expect_refusal --what "--fixup $o" --in "$SRC" --no-output --one-message \
		--says "^migrate run: error: --fixup: takes no ${o%%=*}" -- \
		"$MIGRATE" run --to "$SCRATCH/bad" --fixup "$o"
done
echo '*.psd lfs' >"$SCRATCH/lfs.rules"
expect_refusal --what "--fixup with an lfs rule" --in "$SRC" --no-output --one-message \
	--says "^migrate run: error: --fixup: the rule at line 1 of" -- \
	"$MIGRATE" run --to "$SCRATCH/bad" --fixup --rules "$SCRATCH/lfs.rules"
expect_refusal --what "check-rules --fixup" --no-output --one-message \
	--says "^migrate check-rules: error: check-rules: --fixup" -- \
	"$MIGRATE" check-rules --fixup a.bin
[ ! -e "$SCRATCH/bad" ] || die "a refused run made $SCRATCH/bad"
info "dry run lists --fixup; three refusals, one message each"
EOF2

test_done
