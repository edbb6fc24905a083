#!/usr/bin/env bash
# peer_options.sh - the peers' vocabulary on the command line (issue 28,
# item 2): the options of git lfs migrate import (--include, --exclude,
# --above, --include-ref, --exclude-ref, --everything) and of git
# filter-repo (--strip-blobs-bigger-than, --path, --path-glob,
# --path-regex, --paths-from-file, --invert-paths) each add the rules they
# mean after the rule file's:
#  - a dry run lists the rules in effect in the rule language; that list
#    as a rule file converts to the same commits, and so do the rules
#    written by hand;
#  - the result is the peer's on the same repository: the tip trees of
#    git filter-repo (its commit ids may differ: it prunes commits that
#    become empty), the files and LFS pointers of git lfs migrate import;
#  - the rule file's rules come first; a later run with other options is
#    refused as one with another rule file is;
#  - a bad value is one message naming the option (or FILE:LINE), exit 1,
#    nothing written;
#  - a peer's option migrate does not take names migrate's way of saying
#    it, a rule the parser takes.
# --fixup, which is no rule (it reads each commit's .gitattributes), has
# its own script: fixup.sh.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

# the repository: binary files of known sizes, text files at several
# depths, two branches and a tag (no .gitignore, symlink or submodule:
# migrate never drops those, filter-repo does)
SRC="$SCRATCH/src"
git init -q -b main "$SRC"
blob() { # PATH SIZE BYTE
	mkdir -p "$(dirname "$SRC/$1")"
	head -c "$2" </dev/zero | tr '\0' "$3" >"$SRC/$1"
}
commit() { git -C "$SRC" add -A && git -C "$SRC" commit -q -m "$1"; }
blob a.bin 3000 a
blob big.dat 5000 b
blob docs/img/p.png 1500 c
blob src/data.bin 999 d
blob vendor/x.bin 2000 e
blob "my dir/f.bin" 1000 f
echo guide >"$SRC/docs/guide.md"
echo 'int main;' >"$SRC/src/main.c"
mkdir -p "$SRC/src/lib" && echo u >"$SRC/src/lib/u.c"
commit one
blob a.bin 3100 g
echo more >>"$SRC/docs/guide.md"
commit two
git -C "$SRC" tag -a -m v1 v1
git -C "$SRC" checkout -q -b feat
blob src/more.bin 1200 h
echo feat >>"$SRC/src/main.c"
commit three
blob docs/img/q.png 800 i
commit four
git -C "$SRC" checkout -q main
echo last >"$SRC/README"
commit five

# convert NAME ARGS...: migrate run --to $SCRATCH/NAME with ARGS; its
# commit map in $SCRATCH/NAME.map
convert() {
	local name="$1"
	shift
	(cd "$SRC" && run_migrate run --to "$SCRATCH/$name" -q \
		--commit-map "$SCRATCH/$name.map" "$@")
}
# tips REPO: '<tree of the tip> <ref>' per branch and tag
tips() {
	git -C "$1" for-each-ref --format='%(refname)' refs/heads refs/tags |
		while read -r ref; do
			echo "$(git -C "$1" rev-parse "$ref^{tree}") $ref"
		done
}
same_commits() { # A B: the same commit map and the same refs
	cmp -s "$SCRATCH/$1.map" "$SCRATCH/$2.map" ||
		die "$1 and $2: other commits: $(diff "$SCRATCH/$1.map" "$SCRATCH/$2.map" | head -4)"
	[ "$(refs_of "$SCRATCH/$1")" = "$(refs_of "$SCRATCH/$2")" ] ||
		die "$1 and $2: other refs"
}

# each option, the rule file that says the same by hand
# (NAME@ARGS, a tab apart@RULES)
CASES=(
	'include@--include=*.bin,docs/**/*.png@*.bin lfs
docs/**/*.png lfs'
	'exclude@--exclude=vendor/**@vendor/** keep
* lfs'
	'include-exclude@--exclude=vendor/**	--include=*.bin@vendor/** keep
*.bin lfs'
	'above@--above=1.5kb@* size>=1500 lfs'
	'above-include@--above=1 KiB	--include=*.bin@*.bin size>=1024 lfs'
	'strip@--strip-blobs-bigger-than=2K@* size>2048 drop'
	'path-invert@--path=docs	--path=a.bin	--invert-paths@re:^docs(?:/|$) drop
re:^a\.bin(?:/|$) drop'
	'path@--path=docs	--path=src/lib/@re:^(?!docs(?:/|$)|src/lib/) drop'
	'path-glob@--path-glob=*.c@re:^(?!.*\.c$) drop'
	'path-regex-invert@--path-regex=\.(bin|dat)$	--invert-paths@re:\.(bin|dat)$ drop'
)
for c in "${CASES[@]}"; do
	IFS=@ read -r -d '' name args rules <<<"$c" || true
	rules="${rules%$'\n'}"
	test_case "$name: $args converts as its rules by hand, and as the rules its dry run lists" <<'EOF'
	printf '%s\n' "$rules" >"$SCRATCH/$name.rules"
	IFS=$'\t' read -r -a a <<<"$args"
	# the dry run lists the rules in effect, each with its option
	(cd "$SRC" && "$MIGRATE" run --to "$SCRATCH/$name.dry" --dry-run "${a[@]}") 2>"$SCRATCH/$name.dry.err" ||
		die "dry run: $(cat "$SCRATCH/$name.dry.err")"
	[ ! -e "$SCRATCH/$name.dry" ] || die "the dry run wrote $SCRATCH/$name.dry"
	grep -q '^migrate run: dry run: [0-9]* rule(s) in effect' "$SCRATCH/$name.dry.err" ||
		die "the dry run lists no rules: $(cat "$SCRATCH/$name.dry.err")"
	sed -n 's/^  \(.*\)  # --[a-z-]*.*:[0-9]*$/\1/p' "$SCRATCH/$name.dry.err" >"$SCRATCH/$name.listed"
	[ -s "$SCRATCH/$name.listed" ] || die "no rule listed with its option: $(cat "$SCRATCH/$name.dry.err")"
	convert "$name.opt" "${a[@]}"
	convert "$name.by-hand" --rules "$SCRATCH/$name.rules"
	convert "$name.as-listed" --rules "$SCRATCH/$name.listed"
	same_commits "$name.opt" "$name.by-hand"
	same_commits "$name.opt" "$name.as-listed"
	# and something changed
	! cmp -s <(tips "$SRC") <(tips "$SCRATCH/$name.opt") || die "${a[*]} changed nothing"
	info "${a[*]}: $(wc -l <"$SCRATCH/$name.listed") rule(s) listed; the same commits as by hand"
EOF
done

test_case "--paths-from-file: literal, glob: and regex: lines, comments; as the same options" <<'EOF'
printf '# the docs\ndocs\n\nglob:src/*.c\nregex:^my dir/\n' >"$SCRATCH/paths.txt"
convert pf --paths-from-file "$SCRATCH/paths.txt"
convert pf.opts --path docs --path-glob 'src/*.c' --path-regex '^my dir/'
[ "$(tips "$SCRATCH/pf")" = "$(tips "$SCRATCH/pf.opts")" ] || die "--paths-from-file differs from the options"
git -C "$SCRATCH/pf" ls-tree -r --name-only feat >"$SCRATCH/pf.files"
[ "$(tr '\n' ' ' <"$SCRATCH/pf.files")" = "docs/guide.md docs/img/p.png docs/img/q.png my dir/f.bin src/lib/u.c src/main.c " ] ||
	die "--paths-from-file kept: $(tr '\n' ' ' <"$SCRATCH/pf.files")"
convert pf.inv --paths-from-file "$SCRATCH/paths.txt" --invert-paths
git -C "$SCRATCH/pf.inv" ls-tree -r --name-only feat >"$SCRATCH/pf.inv.files"
[ "$(tr '\n' ' ' <"$SCRATCH/pf.inv.files")" = "a.bin big.dat src/data.bin src/more.bin vendor/x.bin " ] ||
	die "--paths-from-file --invert-paths kept: $(tr '\n' ' ' <"$SCRATCH/pf.inv.files")"
EOF

test_case "the filter takes them too: the same stream as the rules by hand" <<'EOF'
printf '* size>2048 drop\nre:^(?!docs(?:/|$)|src/) drop\n*.bin lfs\n' >"$SCRATCH/filter.rules"
(cd "$SRC" && export_stream . | run_migrate --strip-blobs-bigger-than 2K --path docs --path src \
	-I '*.bin' -q --store "$SCRATCH/store1" --commit-map "$SCRATCH/f1.map" >"$SCRATCH/f1.stream")
(cd "$SRC" && export_stream . | run_migrate --rules "$SCRATCH/filter.rules" -q \
	--store "$SCRATCH/store2" --commit-map "$SCRATCH/f2.map" >"$SCRATCH/f2.stream")
cmp -s "$SCRATCH/f1.stream" "$SCRATCH/f2.stream" || die "the filter's streams differ"
cmp -s "$SCRATCH/f1.map" "$SCRATCH/f2.map" || die "the filter's commit maps differ"
# its dry run lists the rules the options added
(cd "$SRC" && export_stream . | "$MIGRATE" --dry-run --path docs >/dev/null 2>"$SCRATCH/f.err")
grep -qxF '  re:^(?!(?:docs(?:/|$))) drop  # --path:1' "$SCRATCH/f.err" ||
	die "the filter's dry run does not list --path's rule: $(cat "$SCRATCH/f.err")"
EOF

# filter_repo NAME ARGS...: git filter-repo ARGS on a clone, $SCRATCH/NAME.fr
filter_repo() {
	local name="$1"
	shift
	clone_refs "$SRC" "$SCRATCH/$name.fr"
	git -C "$SCRATCH/$name.fr" filter-repo --force --quiet "$@" >"$SCRATCH/$name.fr.log" 2>&1 ||
		die "git filter-repo $*: $(cat "$SCRATCH/$name.fr.log")"
}
if git filter-repo --version >/dev/null 2>&1; then
	FR_CASES=(
		'--path	docs	--invert-paths'
		'--path	docs	--path	src/lib/'
		'--path-glob	*.c'
		'--path-glob	docs'
		'--path-regex	\.(bin|dat)$	--invert-paths'
		'--strip-blobs-bigger-than	2K'
		'--path	src	--strip-blobs-bigger-than	1K'
	)
	for args in "${FR_CASES[@]}"; do
		test_case "git filter-repo ${args//$'\t'/ }: the same trees" <<'EOF'
		IFS=$'\t' read -r -a a <<<"$args"
		name="fr$(printf '%s' "$args" | tr -c 'a-z0-9' '_')"
		filter_repo "$name" "${a[@]}"
		convert "$name" "${a[@]}"
		[ "$(tips "$SCRATCH/$name.fr")" = "$(tips "$SCRATCH/$name")" ] ||
			die "git filter-repo ${a[*]} and migrate run differ: $(diff <(tips "$SCRATCH/$name.fr") <(tips "$SCRATCH/$name") | head -6)"
		info "git filter-repo ${a[*]}: the same tree at every branch and tag"
EOF
	done
else
	info "SKIP: no git filter-repo: the trees are not compared with it"
fi

# files_at_tips REPO: '<mode> <type> <id> <path>' of every file but
# .gitattributes at each branch (git lfs's pointers are ours byte for
# byte; its .gitattributes lines are not)
files_at_tips() {
	git -C "$1" for-each-ref --format='%(refname)' refs/heads | while read -r ref; do
		echo "== $ref"
		git -C "$1" ls-tree -r "$ref" | grep -v '	\.gitattributes$'
	done
}
if git lfs version >/dev/null 2>&1; then
	LFS_CASES=(
		'--include=*.bin,docs/**/*.png'
		'--include=*.bin	--exclude=vendor/**'
		'--above=1kb'
		'--above=1.5KiB'
	)
	for args in "${LFS_CASES[@]}"; do
		test_case "git lfs migrate import --everything ${args//$'\t'/ }: the same files and pointers" <<'EOF'
		IFS=$'\t' read -r -a a <<<"$args"
		name="lfs$(printf '%s' "$args" | tr -c 'a-z0-9' '_')"
		clone_refs "$SRC" "$SCRATCH/$name.lfs"
		git -C "$SCRATCH/$name.lfs" lfs migrate import --everything --yes "${a[@]}" \
			>"$SCRATCH/$name.lfs.log" 2>&1 || die "git lfs migrate import ${a[*]}: $(cat "$SCRATCH/$name.lfs.log")"
		convert "$name" "${a[@]}"
		files_at_tips "$SCRATCH/$name.lfs" >"$SCRATCH/$name.lfs.files"
		files_at_tips "$SCRATCH/$name" >"$SCRATCH/$name.files"
		cmp -s "$SCRATCH/$name.lfs.files" "$SCRATCH/$name.files" ||
			die "git lfs migrate import ${a[*]} and migrate run differ: $(diff "$SCRATCH/$name.lfs.files" "$SCRATCH/$name.files" | head -6)"
		info "git lfs migrate import --everything ${a[*]}: the same files and pointers at every branch"
EOF
	done
else
	info "SKIP: no git lfs: the pointers are not compared with it"
fi

test_case "--include-ref, --exclude-ref, --everything: as REV-ARGS say them" <<'EOF'
convert refs.inc --include='*.bin' --include-ref=feat
convert refs.revs --include='*.bin' -- feat
same_commits refs.inc refs.revs
convert refs.exc --include='*.bin' --exclude-ref=main
convert refs.not --include='*.bin' -- --all ^main
same_commits refs.exc refs.not
# the commits of the excluded ref stay, the parents of the others
base="$(git -C "$SRC" merge-base main feat)"
git -C "$SCRATCH/refs.exc" cat-file -e "$base^{commit}" ||
	die "--exclude-ref=main: main's commits are not in the result"
git -C "$SCRATCH/refs.exc" merge-base --is-ancestor "$base" feat ||
	die "--exclude-ref=main: feat does not descend from main's commits any more"
convert refs.every -I '*.bin' --everything
convert refs.all --include='*.bin'
same_commits refs.every refs.all
expect_refusal --what "--everything with --include-ref" --in "$SRC" --no-output \
	--says "^migrate run: error: --everything converts every ref: it goes without --include-ref" \
	-- "$MIGRATE" run --to "$SCRATCH/never" --include='*.bin' --everything --include-ref=feat
[ ! -e "$SCRATCH/never" ] || die "a refused run made its --to directory"
EOF

test_case "a ref --include-ref left out is converted by a later run that names it" <<'EOF'
# --to: feat, then main, into the same target: what one run of both makes
convert part --include='*.bin' --include-ref=feat
convert part --include='*.bin' --include-ref=main
convert whole --include='*.bin' --include-ref=feat --include-ref=main
[ "$(refs_of "$SCRATCH/part" | grep ' refs/heads/')" = "$(refs_of "$SCRATCH/whole" | grep ' refs/heads/')" ] ||
	die "--to, feat then main: $(refs_of "$SCRATCH/part" | tr '\n' ' ') against one run: $(refs_of "$SCRATCH/whole" | tr '\n' ' ')"
# in place, the same
clone_refs "$SRC" "$SCRATCH/part.ip"
clone_refs "$SRC" "$SCRATCH/whole.ip"
(cd "$SCRATCH/part.ip" && run_migrate run --in-place -q --include='*.bin' --include-ref=feat &&
	run_migrate run --in-place -q --include='*.bin' --include-ref=main)
(cd "$SCRATCH/whole.ip" && run_migrate run --in-place -q --include='*.bin' --include-ref=feat --include-ref=main)
[ "$(refs_of "$SCRATCH/part.ip" | grep ' refs/heads/')" = "$(refs_of "$SCRATCH/whole.ip" | grep ' refs/heads/')" ] ||
	die "in place, feat then main: not what one run of both makes"
git -C "$SCRATCH/part.ip" show main:src/data.bin | grep -q '^version https://git-lfs' ||
	die "in place, feat then main: main's files are not LFS pointers"
EOF

test_case "with --rules FILE: the file's rules first (they win), then the options'" <<'EOF'
printf '*.bin keep\n' >"$SCRATCH/first.rules"
(cd "$SRC" && "$MIGRATE" run --to "$SCRATCH/first.dry" --dry-run --rules "$SCRATCH/first.rules" \
	--include='*.bin,*.png') 2>"$SCRATCH/first.err"
grep -A3 'rule(s) in effect' "$SCRATCH/first.err" >"$SCRATCH/first.list"
[ "$(sed -n 2p "$SCRATCH/first.list")" = "  *.bin keep  # $SCRATCH/first.rules:1" ] &&
	[ "$(sed -n 3p "$SCRATCH/first.list")" = "  *.bin lfs  # --include:1" ] &&
	[ "$(sed -n 4p "$SCRATCH/first.list")" = "  *.png lfs  # --include:2" ] ||
	die "the dry run's list: $(cat "$SCRATCH/first.list")"
# the option's *.bin can never match: a warning names both
grep -qF -- "--include:1: warning: rule never matches: $SCRATCH/first.rules:1 ('*.bin') always wins" "$SCRATCH/first.err" ||
	die "no warning that the file's rule beats the option's: $(cat "$SCRATCH/first.err")"
convert first --rules "$SCRATCH/first.rules" --include='*.bin,*.png'
printf '*.bin keep\n*.bin lfs\n*.png lfs\n' >"$SCRATCH/first.hand.rules"
convert first.by-hand --rules "$SCRATCH/first.hand.rules"
same_commits first first.by-hand
# replace-text=FILE of the rule file is still read beside the rule file
mkdir -p "$SCRATCH/reldir"
printf 'guide==>GUIDE\n' >"$SCRATCH/reldir/expr.txt"
printf 'docs/*.md replace-text=expr.txt\n' >"$SCRATCH/reldir/r.rules"
convert rel --rules "$SCRATCH/reldir/r.rules" --strip-blobs-bigger-than=4K
[ "$(git -C "$SCRATCH/rel" show main:docs/guide.md | head -1)" = GUIDE ] ||
	die "replace-text=expr.txt beside the rule file was not applied"
! git -C "$SCRATCH/rel" cat-file -e main:big.dat 2>/dev/null || die "--strip-blobs-bigger-than=4K kept big.dat"
EOF

test_case "a later run with other options is refused; with the same, it goes on" <<'EOF'
clone_refs "$SRC" "$SCRATCH/inc"
(cd "$SCRATCH/inc" && run_migrate run --in-place -q --include='*.bin')
grep -q '^\*\.bin lfs$' "$SCRATCH/inc/.git/migrate/rules" ||
	die "the state does not keep the options' rules: $(cat "$SCRATCH/inc/.git/migrate/rules")"
before="$(refs_of "$SCRATCH/inc")"
expect_refusal --what "a second run with --include=*.png" --in "$SCRATCH/inc" \
	--says "^migrate run: error: the rules are not those of the last run" \
	-- "$MIGRATE" run --in-place -q --include='*.png'
expect_refusal --what "a second run without the options" --in "$SCRATCH/inc" \
	--says "^migrate run: error: the rules are not those of the last run" \
	-- "$MIGRATE" run --in-place -q --allow-no-rules
[ "$(refs_of "$SCRATCH/inc")" = "$before" ] || die "a refused run moved refs"
git -C "$SCRATCH/inc" commit -q --allow-empty -m later
(cd "$SCRATCH/inc" && run_migrate run --in-place -q --include='*.bin')
EOF

test_case "a bad value: one message naming the option, exit 1, nothing written" <<'EOF'
printf 'docs\nold==>new\n' >"$SCRATCH/rename.txt"
bad() { # MESSAGE-START ARGS...
	local want="$1"
	shift
	expect_refusal --what "migrate run $*" --in "$SRC" --no-output --one-message \
		--says "^migrate run: error: $want" -- "$MIGRATE" run --to "$SCRATCH/bad" "$@"
	[ ! -e "$SCRATCH/bad" ] || die "migrate run $*: made $SCRATCH/bad"
}
bad "--above: expected a size as git lfs migrate takes it" --above=1XB
bad "--strip-blobs-bigger-than: expected a number of bytes" --strip-blobs-bigger-than=1.5M
bad "--invert-paths: no path to invert" --invert-paths --include='*.bin'
bad "--path-regex:2:[0-9]*: bad regex" --path-regex=x --path-regex='a('
bad "$SCRATCH/rename.txt:2: '==>' renames a path" --paths-from-file "$SCRATCH/rename.txt"
bad "--paths-from-file $SCRATCH/none: " --paths-from-file "$SCRATCH/none"
printf '# only a comment\n\n' >"$SCRATCH/comments.txt"
bad "--paths-from-file: no path given" --paths-from-file "$SCRATCH/comments.txt"
bad "--path: invalid path component '..'" --path=docs/../src
bad "--include:1:[0-9]*: " --include=docs/
info "bad values: one message each, naming the option (or FILE:LINE), nothing written"
EOF

test_case "peer options migrate does not take name our way of saying them" <<'EOF'
n=0
for o in object-map yes path-rename subdirectory-filter \
	to-subdirectory-filter use-base-name refs replace-text delete-files \
	delete-folders; do
	for cmd in run ""; do
		rc=0
		# shellcheck disable=SC2086
		"$MIGRATE" $cmd "--$o=x" </dev/null >/dev/null 2>"$SCRATCH/err" || rc=$?
		[ "$rc" = 1 ] || die "migrate $cmd --$o: exit $rc, not 1"
		grep -q "^migrate.*: error: unknown option '$o' (\(git lfs migrate\|git filter-repo\|BFG\)'s); in migrate: " \
			"$SCRATCH/err" || die "migrate $cmd --$o: no word of our way: $(cat "$SCRATCH/err")"
		# the rule it quotes parses
		rule=$(sed -n "s/.*in migrate: [^']*'\([^']* [^']*\)'.*/\1/p" "$SCRATCH/err" | head -1)
		if [ -n "$rule" ]; then
			printf '%s\n' "${rule//EXPRESSIONS/$SCRATCH/expr.txt}" >"$SCRATCH/r.rules"
			echo 'secret==>xxx' >"$SCRATCH/expr.txt"
			"$MIGRATE" check-rules --rules "$SCRATCH/r.rules" a/b.png:5MB >/dev/null 2>"$SCRATCH/cr.err" ||
				die "--$o: the suggested rule '$rule' does not parse: $(cat "$SCRATCH/cr.err")"
		fi
		n=$((n + 1))
	done
done
# run's ref options, given to the filter, name run's
for o in include-ref exclude-ref everything; do
	rc=0
	"$MIGRATE" "--$o=x" </dev/null >/dev/null 2>"$SCRATCH/err" || rc=$?
	[ "$rc" = 1 ] && grep -q "^migrate: error: unknown option '$o' (git lfs migrate's); in migrate: .*migrate run --$o" "$SCRATCH/err" ||
		die "migrate --$o: $(cat "$SCRATCH/err")"
done
info "$n peer options (git lfs migrate, git filter-repo, BFG) refused with migrate's way of saying them; the rules quoted parse"
EOF

test_case "a near miss of our own option gets the nearest one" <<'EOF'
"$MIGRATE" run --inclde x </dev/null >/dev/null 2>"$SCRATCH/err" || true
grep -q "^migrate run: error: unknown option 'inclde'$" "$SCRATCH/err" || die "--inclde: $(cat "$SCRATCH/err")"
grep -qx "did you mean '--include'?" "$SCRATCH/err" || die "--inclde: no suggestion: $(cat "$SCRATCH/err")"
EOF

test_done
