#!/usr/bin/env bash
# prune_empty.sh - commits the rules leave empty are pruned as git
# filter-repo prunes them (issue 28, item 1): the same commit ids and refs
# as git filter-repo (--prune-empty auto, --prune-degenerate auto) on the
# same job, for a drop by path, by size, by blob id and for replace-text,
# on a history made for it: a root commit emptied, commits emptied in a
# row, a branch tip emptied, a branch emptied whole, a commit empty from
# the start (kept) and one after a pruned parent (pruned), merges that
# become degenerate (pruned) and --no-ff merges that stay, tags on pruned
# commits, a merge whose first parent's whole history is pruned. The
# commit map says 40 zeros for a pruned commit and the ref
# map follows the refs, as filter-repo's; --no-prune-empty gives the ids
# of filter-repo --prune-empty never --prune-degenerate never. migrate
# run, a second run on top of a pruned tip, and migrate remap of a
# branch on a pruned commit. git filter-repo and git fast-import judge.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

command -v git-filter-repo >/dev/null || die "git-filter-repo is not installed (scripts/lib.sh installs it)"

# --- the history -------------------------------------------------------------
T=1700000000
tick() {	# a fixed, growing date for each commit
	T=$((T + 60))
	export GIT_AUTHOR_DATE="$T +0000" GIT_COMMITTER_DATE="$T +0000"
}
big() {		# big FILE SEED: 3000 bytes, above the size limit
	python3 -c 'import sys; sys.stdout.write((sys.argv[1] * 3000)[:3000])' "$2" >"$1"
}
commit() { tick; git add -A; git commit -q --allow-empty -m "$1"; }
merge() { tick; git merge -q --no-ff --no-edit -m "$2" "$1"; }

O="$SCRATCH/orig"
git init -q "$O"
(
	cd "$O"
	big sound.wav r0; commit "root: only a sound"			# root emptied
	echo a1 >a.txt; printf 'token=one\n' >conf.txt; big b.wav b1
	commit "a, conf and b"
	big b.wav b2; commit "b only"						# emptied
	big b.wav b3; commit "b again"						# emptied
	git commit -q --allow-empty -m "empty after pruned"			# pruned too
	echo a2 >a.txt; big b.wav b4; commit "a and b"			# kept
	tick; git commit -q --allow-empty -m "empty from the start"		# kept
	git checkout -q -b side main~3
	big s.wav s1; commit "side: s"						# emptied
	big c.wav s2; commit "side: c"						# emptied
	git checkout -q main
	merge side "merge side (degenerate)"					# pruned
	git checkout -q -b topic
	echo t1 >t.txt; commit "topic: t"
	git checkout -q main
	echo a3 >a.txt; commit "main: a3"
	merge topic "merge topic (stays)"					# kept
	git checkout -q -b ff main
	big f.wav f1; commit "ff: f"						# emptied
	git checkout -q main
	merge ff "no-ff merge of emptied work"					# pruned
	git checkout -q -b noff main
	echo n1 >n.txt; commit "noff: n"
	git checkout -q main
	merge noff "no-ff merge, first parent an ancestor (stays)"		# kept
	printf 'token=two\n' >conf.txt; commit "token changes"		# replace-text empties
	printf 'token=three\n' >conf.txt; echo a4 >a.txt; commit "token and a"
	git checkout -q -b tipwav main
	big b.wav w1; commit "tipwav: b"					# tip emptied
	git checkout -q --orphan onlywav
	git rm -q -rf . ; big o.wav o1; commit "onlywav: root"		# all pruned
	big o.wav o2; commit "onlywav: more"
	# a merge whose first parent is pruned with all its history: its
	# changes then go against an empty tree (deleteall), on main's commit
	git checkout -q -b wavmerge
	tick; git merge -q --allow-unrelated-histories --no-commit main
	echo evil >evil.txt; git add evil.txt; git commit -q -m "merge main into the sounds"
	git checkout -q main
	git tag light-on-pruned main~4
	tick; git tag -a -m "annotated on pruned" ann-on-pruned tipwav
	git tag -a -m "on the pruned branch" ann-onlywav onlywav
	git tag light-onlywav onlywav
)	# (errexit holds in the subshell: no "|| die" here)

# refs and the commit each names (tags peeled; filter-repo's replace refs
# and migrate's state refs out)
refs() {
	git -C "$1" for-each-ref --format='%(refname) %(if)%(*objectname)%(then)%(*objectname)%(else)%(objectname)%(end)' |
		grep -v '^refs/replace/\|^refs/migrate/' | LC_ALL=C sort
}

# filter_repo NAME ARGS...: git filter-repo ARGS on a mirror of the
# history, into $SCRATCH/NAME.fr; its refs in NAME.fr.refs
filter_repo() {
	local name="$1"
	shift
	rm -rf "$SCRATCH/$name.fr"
	git clone -q --mirror "$O" "$SCRATCH/$name.fr"
	(cd "$SCRATCH/$name.fr" && git filter-repo "$@" --force) >"$SCRATCH/$name.fr.log" 2>&1 ||
		{ cat "$SCRATCH/$name.fr.log" >&2; die "git filter-repo $* failed"; }
	refs "$SCRATCH/$name.fr" >"$SCRATCH/$name.fr.refs"
}

# migrate_filter NAME MIGRATE-ARGS...: the pipeline into $SCRATCH/NAME.mg,
# with migrate's maps and marks checked against fast-import's
migrate_filter() {
	local name="$1" d="$SCRATCH/$1"
	shift
	rm -rf "$d.mg"
	export_stream "$O" >"$d.fe"
	(cd "$O" && run_migrate "$@" --commit-map "$d.map" --ref-map "$d.refmap" \
		--export-marks "$d.marks" -q) <"$d.fe" 2>"$d.err" |
		import_stream "$d.mg" "$d.fimarks" || die "migrate $*: $(cat "$d.err")"
	check_ids "$d.fe" "$d.marks" "$d.fimarks" "$d.map" "$d.refmap" "$d.mg" ||
		die "migrate $*: its ids are not fast-import's"
	refs "$d.mg" >"$d.mg.refs"
}

# same NAME: migrate's refs are filter-repo's, and the history was pruned
same() {
	diff "$SCRATCH/$1.fr.refs" "$SCRATCH/$1.mg.refs" >&2 ||
		die "$1: the commits differ from git filter-repo's"
	local before after
	before=$(git -C "$O" rev-list --count --all)
	after=$(git -C "$SCRATCH/$1.mg" rev-list --count --all)
	[ "$after" -lt "$before" ] || die "$1: nothing was pruned ($after of $before commits)"
	info "$1: $(wc -l <"$SCRATCH/$1.mg.refs") refs as git filter-repo's; $after of $before commits stay"
}

test_case "drop by path: the commits of git filter-repo --invert-paths" <<'EOF'
	printf '*.wav drop\n' >"$SCRATCH/path.rules"
	filter_repo path --path-glob '*.wav' --invert-paths
	migrate_filter path --rules "$SCRATCH/path.rules"
	same path
	# the pruned ones: 40 zeros, in both maps
	grep -v '^old' "$SCRATCH/path.fr/filter-repo/commit-map" | LC_ALL=C sort >"$SCRATCH/fr.map"
	grep -v '^old' "$SCRATCH/path.map" | LC_ALL=C sort >"$SCRATCH/mg.map"
	diff "$SCRATCH/fr.map" "$SCRATCH/mg.map" >&2 || die "the commit maps differ"
	zeros=$(grep -c ' 0\{40\}$' "$SCRATCH/mg.map")
	[ "$zeros" -ge 10 ] || die "only $zeros pruned commits in the map"
	info "commit map: filter-repo's, $zeros commits with 40 zeros"
EOF

test_case "the ref map follows the refs: moved to the stand-in, or deleted" <<'EOF'
	[ -s "$SCRATCH/path.refmap" ] || die "needs the first case"
	tip=$(git -C "$SCRATCH/path.mg" rev-parse tipwav)
	[ "$tip" = "$(git -C "$SCRATCH/path.mg" rev-parse main)" ] ||
		die "the emptied tip of tipwav did not move to main's commit"
	grep -q "^$(git -C "$O" rev-parse tipwav) $tip refs/heads/tipwav\$" "$SCRATCH/path.refmap" ||
		die "ref map: $(grep tipwav "$SCRATCH/path.refmap")"
	! git -C "$SCRATCH/path.mg" rev-parse -q --verify onlywav >/dev/null ||
		die "the branch pruned whole is still there"
	grep -q "^$(git -C "$O" rev-parse onlywav) 0\{40\} refs/heads/onlywav\$" "$SCRATCH/path.refmap" ||
		die "ref map: $(grep onlywav "$SCRATCH/path.refmap")"
	# against filter-repo's ref-map: the same refs deleted (40 zeros);
	# where filter-repo writes zeros for a ref it kept (its tip pruned,
	# the ref moved: tipwav, side, ff), ours names the commit it has
	tail -n +2 "$SCRATCH/path.fr/filter-repo/ref-map" | while read -r old new ref; do
		got=$(awk -v r="$ref" '$3 == r { print $2 }' "$SCRATCH/path.refmap")
		have=$(git -C "$SCRATCH/path.fr" rev-parse -q --verify "$ref^{commit}" || echo 0000000000000000000000000000000000000000)
		[ "$new" = "$got" ] || [ "$got" = "$have" ] ||
			die "$ref: filter-repo's ref-map says $new (its repository $have), ours '$got'"
		[ "$(git -C "$SCRATCH/path.mg" rev-parse -q --verify "$ref^{commit}" ||
			echo 0000000000000000000000000000000000000000)" = "$have" ] ||
			die "$ref: not where filter-repo has it"
	done
	info "tipwav moved to its stand-in, onlywav and its tags deleted, as the ref map says"
EOF

test_case "drop by size: the commits of git filter-repo --strip-blobs-bigger-than" <<'EOF'
	printf '* size>2KiB drop\n' >"$SCRATCH/size.rules"
	filter_repo size --strip-blobs-bigger-than 2K
	migrate_filter size --rules "$SCRATCH/size.rules"
	same size
EOF

test_case "strip by blob id: the commits of git filter-repo --strip-blobs-with-ids" <<'EOF'
	git -C "$O" rev-list --objects --all | grep '\.wav$' | cut -d' ' -f1 | sort -u >"$SCRATCH/ids"
	[ "$(wc -l <"$SCRATCH/ids")" -ge 8 ] || die "too few ids"
	filter_repo ids --strip-blobs-with-ids "$SCRATCH/ids"
	migrate_filter ids --strip-blobs-with-ids "$SCRATCH/ids"
	same ids
EOF

test_case "replace-text: the commits of git filter-repo --replace-text" <<'EOF'
	printf '*.wav drop\n* replace-text=expr\n' >"$SCRATCH/rt.rules"
	printf 'regex:token=.*==>token=***\n' >"$SCRATCH/expr"
	filter_repo rt --path-glob '*.wav' --invert-paths --replace-text "$SCRATCH/expr"
	migrate_filter rt --rules "$SCRATCH/rt.rules"
	same rt
	# the commit that only changed the token is gone
	output_lacks -x "token changes" -- git -C "$SCRATCH/rt.mg" log --format=%s main ||
		die "the commit replace-text emptied is still there"
EOF

test_case "--no-prune-empty: the commits of filter-repo --prune-empty never" <<'EOF'
	filter_repo keep --path-glob '*.wav' --invert-paths --prune-empty never --prune-degenerate never
	migrate_filter keep --rules "$SCRATCH/path.rules" --no-prune-empty
	diff "$SCRATCH/keep.fr.refs" "$SCRATCH/keep.mg.refs" >&2 ||
		die "--no-prune-empty: the commits differ from filter-repo --prune-empty never's"
	[ "$(git -C "$SCRATCH/keep.mg" rev-list --count --all)" = "$(git -C "$O" rev-list --count --all)" ] ||
		die "--no-prune-empty pruned"
	! grep -q ' 0\{40\}$' "$SCRATCH/keep.map" || die "--no-prune-empty: zeros in the map"
	info "every commit kept, as filter-repo --prune-empty never"
EOF

test_case "migrate run --to gives filter-repo's commits and verifies" <<'EOF'
	rm -rf "$SCRATCH/run"
	run_migrate run --repo "$O" --rules "$SCRATCH/path.rules" -q --to "$SCRATCH/run" \
		>"$SCRATCH/run.log" 2>&1 || die "migrate run: $(cat "$SCRATCH/run.log")"
	refs "$SCRATCH/run" | diff "$SCRATCH/path.fr.refs" - >&2 || die "migrate run differs"
	grep -q "^$(git -C "$O" rev-parse onlywav) 0\{40\}\$" "$SCRATCH/run/.git/migrate/commit-map" ||
		die "run's commit map: no zeros for onlywav"
	info "run --to: filter-repo's refs; onlywav gone"
EOF

test_case "a later run with --no-prune-empty is refused: two conversions would mix" <<'EOF'
	[ -d "$SCRATCH/run" ] || die "needs the run case"
	expect_refusal --says 'not those of the last run' --refs-unchanged "$SCRATCH/run" \
		-- "$MIGRATE" run --repo "$O" --rules "$SCRATCH/path.rules" --no-prune-empty \
		-q --to "$SCRATCH/run"
EOF

test_case "migrate run --in-place: the same refs, the branch pruned whole deleted" <<'EOF'
	rm -rf "$SCRATCH/inplace"
	clone_refs "$O" "$SCRATCH/inplace"
	run_migrate run --repo "$SCRATCH/inplace" --rules "$SCRATCH/path.rules" -q --in-place \
		>"$SCRATCH/inplace.log" 2>&1 || die "migrate run --in-place: $(cat "$SCRATCH/inplace.log")"
	refs "$SCRATCH/inplace" | diff "$SCRATCH/path.fr.refs" - >&2 || die "migrate run --in-place differs"
	git -C "$SCRATCH/inplace" rev-parse -q --verify refs/migrate/original/refs/heads/onlywav >/dev/null ||
		die "no backup of onlywav"
	info "run --in-place: filter-repo's refs; onlywav deleted, its backup kept"
EOF

test_case "a second run goes on from a pruned tip as one run would" <<'EOF'
	S="$SCRATCH/more"
	rm -rf "$S" "$SCRATCH/run2" "$SCRATCH/one"
	clone_refs "$O" "$S"
	run_migrate run --repo "$S" --rules "$SCRATCH/path.rules" -q --to "$SCRATCH/run2" \
		>"$SCRATCH/run2.log" 2>&1 || die "first run: $(cat "$SCRATCH/run2.log")"
	(
		cd "$S"
		git checkout -q tipwav
		big b.wav w2; commit "tipwav: b again"		# pruned, on a pruned tip
		echo x >x.txt; commit "tipwav: x"			# kept, on the stand-in
	)
	run_migrate run --repo "$S" --rules "$SCRATCH/path.rules" -q --to "$SCRATCH/run2" \
		>"$SCRATCH/run2.log" 2>&1 || die "second run: $(cat "$SCRATCH/run2.log")"
	run_migrate run --repo "$S" --rules "$SCRATCH/path.rules" -q --to "$SCRATCH/one" \
		>"$SCRATCH/one.log" 2>&1 || die "one run: $(cat "$SCRATCH/one.log")"
	refs "$SCRATCH/one" | diff - <(refs "$SCRATCH/run2") >&2 || die "two runs differ from one"
	[ "$(git -C "$SCRATCH/run2" rev-parse tipwav~1)" = "$(git -C "$SCRATCH/run2" rev-parse main)" ] ||
		die "tipwav's new commit is not on main's"
	info "the second run put 'tipwav: x' on main's commit, as one run does"
EOF

test_case "migrate remap moves a branch based on a pruned commit onto its stand-in" <<'EOF'
	[ -d "$SCRATCH/run" ] || die "needs the run case"
	rm -rf "$SCRATCH/mate"
	git clone -q "$O" "$SCRATCH/mate"
	(
		cd "$SCRATCH/mate"
		git checkout -q -b work origin/tipwav
		echo w >w.txt; commit "work on the pruned tip"
		git remote set-url origin "$SCRATCH/run"
		git fetch -q --prune origin '+refs/heads/*:refs/remotes/origin/*'
	)
	(cd "$SCRATCH/mate" && "$MIGRATE" remap --commit-map "$SCRATCH/run/.git/migrate/commit-map" work) \
		>"$SCRATCH/remap.log" 2>&1 || die "remap: $(cat "$SCRATCH/remap.log")"
	[ "$(git -C "$SCRATCH/mate" rev-parse work~1)" = "$(git -C "$SCRATCH/run" rev-parse main)" ] ||
		die "work is not on the stand-in: $(cat "$SCRATCH/remap.log")"
	[ "$(git -C "$SCRATCH/mate" log -1 --format=%s work)" = "work on the pruned tip" ] ||
		die "work lost its commit"
	info "work rebased onto main's new commit"
EOF

test_done
