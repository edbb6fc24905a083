#!/usr/bin/env bash
# prune_git2008.sh - pruning on real history (issue 28, item 1): gitk
# dropped from git's own history to v1.6.0 (../shared/corpus/
# git-history-2008.bundle) gives the commit map and the refs git
# filter-repo --path gitk --invert-paths gives: the same commit ids, the
# same commits pruned (gitk's own history, merged into git's, goes whole:
# its root commits, and the merges that become degenerate). migrate's ids
# are fast-import's (check_ids). Then `migrate run --in-place`, whose
# writer thread stores the trees and whose fast-import writes commits
# only (made_trees.sh): the same map and refs, git fsck clean. Skipped
# (exit 77) without the bundle.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

need_shared corpus/git-history-2008.bundle
command -v git-filter-repo >/dev/null || die "git-filter-repo is not installed (scripts/lib.sh installs it)"

SRC="$SCRATCH/src.git"
git clone -q --mirror "$SHARED/corpus/git-history-2008.bundle" "$SRC"

# every ref with the commit (or blob) it names, tags peeled to the end:
# filter-repo strips the signatures of signed tags, migrate keeps them
refs() {
	git -C "$1" for-each-ref --format='%(refname)' | grep -v '^refs/replace/' |
		LC_ALL=C sort | while read -r ref; do
		printf '%s %s\n' "$ref" "$(git -C "$1" rev-parse "$ref^{}")"
	done
}

test_case "drop gitk: git filter-repo's commit map and refs" <<'EOF'
	git clone -q --mirror "$SRC" "$SCRATCH/fr.git"
	(cd "$SCRATCH/fr.git" && git filter-repo --path gitk --invert-paths --force) \
		>"$SCRATCH/fr.log" 2>&1 || { cat "$SCRATCH/fr.log" >&2; die "git filter-repo failed"; }
	printf '/gitk drop\n' >"$SCRATCH/rules"
	export_stream "$SRC" --all --no-data >"$SCRATCH/in.fe"
	git init -q "$SCRATCH/new"
	# --no-data: the blobs come from the source, as migrate run does it
	echo "$SRC/objects" >"$SCRATCH/new/.git/objects/info/alternates"
	(cd "$SRC" && run_migrate --rules "$SCRATCH/rules" --commit-map "$SCRATCH/M" \
		--ref-map "$SCRATCH/R" --export-marks "$SCRATCH/MM" -q) <"$SCRATCH/in.fe" |
		import_stream "$SCRATCH/new" "$SCRATCH/X" || die "the pipeline failed"
	check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" \
		"$SCRATCH/new" --orig-repo "$SRC" || die "migrate's ids are not fast-import's"
	grep -v '^old' "$SCRATCH/fr.git/filter-repo/commit-map" | LC_ALL=C sort >"$SCRATCH/fr.map"
	grep -v '^old' "$SCRATCH/M" | LC_ALL=C sort >"$SCRATCH/mg.map"
	diff "$SCRATCH/fr.map" "$SCRATCH/mg.map" | head -n 20 >&2
	cmp -s "$SCRATCH/fr.map" "$SCRATCH/mg.map" || die "the commit maps differ"
	# junio-gpg-pub tags a blob, which fast-export leaves out of a
	# --no-data export (passthrough too: not pruning's business)
	refs "$SCRATCH/fr.git" | grep -v '^refs/tags/junio-gpg-pub ' >"$SCRATCH/fr.refs"
	refs "$SCRATCH/new" >"$SCRATCH/mg.refs"
	diff "$SCRATCH/fr.refs" "$SCRATCH/mg.refs" >&2 || die "the refs differ"
	pruned=$(grep -c ' 0\{40\}$' "$SCRATCH/mg.map")
	[ "$pruned" -gt 100 ] || die "only $pruned commits pruned: the test is blind"
	info "$(wc -l <"$SCRATCH/mg.map") commits as git filter-repo maps them, $pruned pruned;" \
		"$(wc -l <"$SCRATCH/mg.refs") refs the same"
EOF

test_case "migrate run --in-place, trees by the run: the same map and refs" <<'EOF'
	[ -s "$SCRATCH/fr.map" ] || die "the first case did not run"
	git clone -q --mirror "$SRC" "$SCRATCH/ip.git"
	run_migrate run -q --rules "$SCRATCH/rules" --repo "$SCRATCH/ip.git" --in-place ||
		die "the run failed"
	grep -v '^old' "$SCRATCH/ip.git/migrate/commit-map" | LC_ALL=C sort >"$SCRATCH/ip.map"
	cmp -s "$SCRATCH/fr.map" "$SCRATCH/ip.map" || die "the run's commit map differs from filter-repo's"
	refs "$SCRATCH/ip.git" | grep -v -e '^refs/migrate/' -e '^refs/tags/junio-gpg-pub ' >"$SCRATCH/ip.refs"
	diff "$SCRATCH/fr.refs" "$SCRATCH/ip.refs" >&2 || die "the refs differ"
	git -C "$SCRATCH/ip.git" fsck --no-progress --no-dangling >"$SCRATCH/ip.fsck" 2>&1 ||
		die "git fsck: $(grep -v '^warning' "$SCRATCH/ip.fsck" | head -3)"
	info "run --in-place: filter-repo's map ($(wc -l <"$SCRATCH/ip.map") commits) and refs; git fsck clean"
EOF

test_done
