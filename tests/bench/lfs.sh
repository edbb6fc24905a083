#!/usr/bin/env bash
# tests/bench/lfs.sh - large files into Git LFS (issue 3): migrate against
# `git lfs migrate import --everything` with the same globs, side by side in
# one run, on the full-scale assets corpus and on the history of large
# binaries (300 commits, binaries of 1 to 60 MB; BIGBIN_OPTIONS in
# tests/bench/lib.sh). A measurement, not a test.
#
#   peer:      git lfs migrate import --everything --include=GLOBS   (in a mirror clone)
#   in place:  git fast-export --no-data | migrate --source-repo . | git fast-import --force
#              (in a mirror clone: what `git lfs migrate` does too; only the
#              converted blobs are read, everything else stays by id)
#   new repo:  git fast-export | migrate | git fast-import   (full data, fresh repository)
#   run --in-place: migrate run --in-place   (in a bare mirror clone; the
#              one command: state, the check of every id, the journal)
#   run --to:  migrate run --to NEWDIR       (ends with git repack -a -d:
#              already packed, no alternate left)
#
# Wall time of each, the ratio to the peer, and the peak RSS of every
# process of each (tests/bench/peak_rss.py --tree: git-lfs and its git
# children; fast-export, migrate, fast-import; migrate run and the git
# processes it starts). Every result is checked: the same LFS paths as the
# peer, git lfs fsck passes.
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate), BENCH_HISTORY_OPTIONS (tests/bench/lib.sh),
# BENCH_LFS_CORPORA (default "assets bigbin": which histories, in order).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup lfs
bench_git_lfs

GLOBS="$BENCH_LFS_GLOBS"
bench_rules_lfs "$WORK/rules"
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=rewrite) # as migrate run: a tag of a blob survives --no-data
export WORK MIGRATE GLOBS

# one_corpus KIND TITLE: the five pipelines on SRC, checked; a table.
one_corpus() {
	local kind="$1" title="$2" load0 r nfiles bytes
	rm -rf "$WORK"/r-*
	load0=$(bench_load)

	say "$kind: peer: git lfs migrate import --everything --include=$GLOBS"
	bench_mirror "$WORK/r-peer"
	# shellcheck disable=SC2016 # expanded by the inner bash
	bench_timed peer bash -c 'cd "$WORK/r-peer" &&
		git lfs migrate import --everything --yes --include="$GLOBS" >/dev/null 2>&1'

	say "$kind: migrate in place: fast-export --no-data | migrate | fast-import --force"
	bench_mirror "$WORK/r-inplace"
	# shellcheck disable=SC2016 # expanded by the inner bash
	bench_timed inplace bash -c 'cd "$WORK/r-inplace" &&
		git fast-export --no-data "${@}" |
		"$MIGRATE" --rules "$WORK/rules" --commit-map "$WORK/inplace.map" |
		git fast-import --quiet --force' - "${FLAGS[@]}"

	say "$kind: migrate into a new repository: fast-export | migrate | fast-import"
	git init -q "$WORK/r-new"
	# shellcheck disable=SC2016 # expanded by the inner bash
	bench_timed new bash -c 'cd "$1" && shift && git fast-export "${@}" |
		"$MIGRATE" --rules "$WORK/rules" --store "$WORK/r-new/.git/lfs/objects" |
		git -C "$WORK/r-new" fast-import --quiet' - "$SRC" "${FLAGS[@]}"

	say "$kind: migrate run --in-place (a bare mirror)"
	git clone -q --mirror "$SRC" "$WORK/r-runip"
	bench_timed_phases runip "$MIGRATE" run --rules "$WORK/rules" --repo "$WORK/r-runip" \
		--in-place --progress

	say "$kind: migrate run --to NEWDIR"
	bench_timed_phases runto "$MIGRATE" run --rules "$WORK/rules" --repo "$SRC" \
		--to "$WORK/r-runto" --progress
	[ ! -e "$WORK/r-runto/.git/objects/info/alternates" ] ||
		{ echo "run --to left its alternate" >&2; exit 1; }
	packs_runto=$(git -C "$WORK/r-runto" count-objects -v | sed -n 's/^packs: //p')

	say "$kind: checking the results"
	for r in peer inplace new runip runto; do
		git -C "$WORK/r-$r" lfs ls-files --all --name-only | sort -u >"$WORK/$r.names"
		git -C "$WORK/r-$r" symbolic-ref HEAD refs/heads/main
		(cd "$WORK/r-$r" && git lfs fsck >/dev/null) ||
			{ echo "git lfs fsck failed in $r" >&2; exit 1; }
		cmp -s "$WORK/peer.names" "$WORK/$r.names" ||
			{ echo "the converted paths of $r differ from the peer's" >&2; exit 1; }
	done
	nfiles=$(wc -l <"$WORK/peer.names")
	bytes=$(du -sb "$WORK/r-peer/.git/lfs/objects" | cut -f1)

	cat <<EOT

Git LFS conversion, $title ($(git -C "$SRC" rev-list --all | wc -l) commits,
$nfiles LFS paths, $(calc "round($bytes / 1e6)") MB into the LFS store), globs $GLOBS,
load average $load0 before, $(bench_load) after:

| pipeline | wall s | vs git lfs migrate | peak RSS of each process, MiB |
|---|---|---|---|
| git lfs migrate import --everything | $(bench_wall peer) | 1.00× | $(bench_rss peer) |
| migrate in place (--no-data) | $(bench_wall inplace) | $(ratio inplace)× faster | $(bench_rss inplace) |
| migrate into a new repository | $(bench_wall new) | $(ratio new)× faster | $(bench_rss new) |
| \`migrate run --in-place\` | $(bench_wall runip) | $(ratio runip)× faster | $(bench_rss runip) |
| \`migrate run --to\` ($packs_runto pack, no alternate) | $(bench_wall runto) | $(ratio runto)× faster | $(bench_rss runto) |

Every result passes \`git lfs fsck\` and lists the same LFS paths as the peer.

Phases (\`migrate run --progress\`):

$(bench_phase_head)
$(bench_phase_runs "runip:run --in-place" "runto:run --to")
EOT
}
ratio() { calc "round($(cat "$WORK/peer.wall") / $(cat "$WORK/$1.wall"), 1)"; }

for kind in ${BENCH_LFS_CORPORA:-assets bigbin}; do
	case "$kind" in
	assets)
		bench_corpus corpus assets
		one_corpus assets "full-scale assets corpus" ;;
	bigbin)
		# shellcheck disable=SC2086 # the options are words
		bench_corpus bigbin assets $BIGBIN_OPTIONS
		one_corpus bigbin "history of large binaries (1 to 60 MB)" ;;
	*) echo "BENCH_LFS_CORPORA: assets or bigbin, not $kind" >&2; exit 2 ;;
	esac
done
