#!/usr/bin/env bash
# tests/bench/droppath.sh - a path dropped from all of git's history
# (issue 29: "dropping a path from git's history >= 5x faster than
# filter-repo"): gitk out of git's own history to v1.6.0
# (../shared/corpus/git-history-2008.bundle: 15,649 commits, 2 branches,
# 226 tags; gitk's own history, merged into git's, goes whole, as in
# tests/integration/prune_git2008.sh). A measurement, not a test.
#
# Side by side, each on its own fresh mirror clone of the bundle:
#
#   peer:           git filter-repo --path gitk --invert-paths --force (it
#                   ends with git reflog expire --expire=now --all and git
#                   gc --prune=now)
#   run --in-place: migrate run --in-place, rule `/gitk drop` (the
#                   originals stay under refs/migrate/original/)
#   run --to:       migrate run --to NEWDIR --repo MIRROR (ends with git
#                   repack -a -d)
#
# Wall time of each, the ratio to the peer's, the CPU time of all its
# processes over the wall time (how many cores it kept busy), the CPU time
# of each kind of process, the size of `objects` after (as left, and after
# git repack -a -d -f), the peak RSS of every process, and the phases of
# each (migrate run --progress; filter-repo's own "now repacking/cleaning"
# line). Every ref (peeled:
# filter-repo strips the signatures of signed tags) must name what it names
# after filter-repo: the script fails otherwise. Without the bundle it says
# so and exits 0.
#
# Environment: BENCH_DIR, MIGRATE (tests/bench/lib.sh), MIGRATE_SHARED (the
# shared folder, default ../shared next to the repository).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

BUNDLE="${MIGRATE_SHARED:-$ROOT/../shared}/corpus/git-history-2008.bundle"
if [ ! -e "$BUNDLE" ]; then
	echo "SKIP: $BUNDLE is not there (the optional ../shared folder; MIGRATE_SHARED names another)"
	exit 0
fi
bench_setup droppath
SRC="$WORK/src.git"
git clone -q --mirror "$BUNDLE" "$SRC"
printf '/gitk  drop\n' >"$WORK/rules"
load0=$(bench_load)

say "peer: git filter-repo --path gitk --invert-paths (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/peer"
# shellcheck disable=SC2016 # expanded by the inner bash
BENCH_PHASE_RE='(now repacking/cleaning)' \
	bench_timed_phases peer bash -c 'cd "$1" && git filter-repo --path gitk --invert-paths --force 1>&2' \
	- "$WORK/peer"

say "migrate run --in-place (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/runip"
bench_timed_phases runip "$MIGRATE" run --progress --rules "$WORK/rules" --repo "$WORK/runip" \
	--in-place

say "migrate run --to NEWDIR (from a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/mto"
bench_timed_phases runto "$MIGRATE" run --progress --rules "$WORK/rules" --repo "$WORK/mto" \
	--to "$WORK/runto"
load1=$(bench_load)

say "checking the results"
# every ref with what it names, tags peeled to the end
refs() {
	git -C "$1" for-each-ref --format='%(refname)' | grep -Ev '^refs/(replace|migrate)/' |
		LC_ALL=C sort | while read -r ref; do
		printf '%s %s\n' "$ref" "$(git -C "$1" rev-parse "$ref^{}")"
	done
}
refs "$WORK/peer" >"$WORK/peer.refs"
for r in runip runto; do
	refs "$WORK/$r" >"$WORK/$r.refs"
	diff "$WORK/peer.refs" "$WORK/$r.refs" >&2 ||
		{ echo "FAILED: $r's refs differ from git filter-repo's (above)" >&2; exit 1; }
	git -C "$WORK/$r" fsck --no-progress --connectivity-only >&2 ||
		{ echo "FAILED: git fsck in $r" >&2; exit 1; }
done
for r in peer runip runto; do
	left=$(git -C "$WORK/$r" rev-list --exclude='refs/migrate/*' --all -- gitk | wc -l)
	[ "$left" = 0 ] || { echo "FAILED: $left commits of $r still touch gitk" >&2; exit 1; }
done
commits() { git -C "$1" rev-list --exclude='refs/migrate/*' --all | wc -l; }

say "sizes, as left and after git repack -a -d -f"
bench_sizes peer runip runto
cat <<EOF

gitk dropped from git's history to v1.6.0 ($(commits "$SRC") commits, $(git -C "$SRC" for-each-ref | wc -l) refs;
$(commits "$WORK/peer") commits after), measured $(date +%F) with $("$MIGRATE" --version 2>/dev/null | head -1 || echo migrate) on $(nproc) cores,
load average $load0 before, $load1 after:

| pipeline | wall s | speed-up over filter-repo | CPU s | CPU / wall (cores busy, of $(nproc)) | CPU s of each process | objects after | after \`git repack -a -d -f\` (its time) | peak RSS of each process, MiB |
|---|---|---|---|---|---|---|---|---|
$(bench_peer_row peer "\`git filter-repo --path gitk --invert-paths\` (ends with gc)")
$(bench_peer_row runip "\`migrate run --in-place\` (originals kept, not repacked)")
$(bench_peer_row runto "\`migrate run --to\` (packed: git repack -a -d)")

Every ref names what it names after filter-repo ($(wc -l <"$WORK/peer.refs") refs, tags peeled;
master: $(git -C "$WORK/peer" rev-parse master)); git fsck --connectivity-only passes in each.

$(bench_phase_table "runip:run --in-place" "runto:run --to")
EOF
