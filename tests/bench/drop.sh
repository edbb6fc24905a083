#!/usr/bin/env bash
# tests/bench/drop.sh - blobs over a size dropped from all history (issue
# 12): `migrate run` with a `* size>N drop` rule against `git filter-repo
# --strip-blobs-bigger-than N`, side by side in one run, on the history of
# large binaries (300 commits, binaries of 1 to 60 MB; tests/bench/lib.sh's
# BIGBIN_OPTIONS). A measurement, not a test.
#
#   peer:           git filter-repo --strip-blobs-bigger-than N   (in a bare
#                   mirror clone; it ends with git gc --prune=now)
#   run --in-place: migrate run --in-place   (in a bare mirror clone; the
#                   originals stay under refs/migrate/original/)
#   run --to:       migrate run --to NEWDIR   (ends with git repack -a -d)
#
# Wall time of each, the ratio to the peer, the peak RSS of every process,
# the pack size after. Every result is checked: the same commit id as the
# peer's at every branch (else the same tree), no blob over N left in the
# new history, git fsck passes.
#
# Environment: BENCH_DIR, MIGRATE, BENCH_HISTORY_OPTIONS (tests/bench/lib.sh),
# BENCH_DROP_MIB (N in MiB, default 16: 21 of the 906 blobs, 708 of the
# 1,243 MB).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup drop
# shellcheck disable=SC2086 # the options are words
bench_corpus bigbin assets $BIGBIN_OPTIONS
N="${BENCH_DROP_MIB:-16}"
printf '*  size>%sMiB  drop\n' "$N" >"$WORK/rules"
load0=$(bench_load)

say "peer: git filter-repo --strip-blobs-bigger-than ${N}M"
git clone -q --mirror "$SRC" "$WORK/peer"
# shellcheck disable=SC2016 # expanded by the inner bash
bench_timed peer bash -c 'cd "$1" && git filter-repo --quiet --strip-blobs-bigger-than "$2"M >/dev/null' \
	- "$WORK/peer" "$N"

say "migrate run --in-place (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/runip"
bench_timed runip "$MIGRATE" run -q --rules "$WORK/rules" --repo "$WORK/runip" --in-place

say "migrate run --to NEWDIR"
bench_timed runto "$MIGRATE" run -q --rules "$WORK/rules" --repo "$SRC" --to "$WORK/runto"
load1=$(bench_load)

say "checking the results"
heads() { git -C "$1" for-each-ref --format='%(objectname) %(refname)' refs/heads; }
heads "$WORK/peer" >"$WORK/peer.refs"
same_ids=yes
for r in runip runto; do
	git -C "$WORK/$r" fsck --no-progress --connectivity-only ||
		{ echo "git fsck failed in $r" >&2; exit 1; }
	heads "$WORK/$r" >"$WORK/$r.refs"
	if ! cmp -s "$WORK/peer.refs" "$WORK/$r.refs"; then
		same_ids=no
		for ref in $(git -C "$WORK/peer" for-each-ref --format='%(refname)' refs/heads); do
			[ "$(git -C "$WORK/peer" rev-parse "$ref^{tree}")" = \
				"$(git -C "$WORK/$r" rev-parse "$ref^{tree}")" ] ||
				{ echo "$r: $ref has another tree than the peer's" >&2; exit 1; }
		done
	fi
	big=$(git -C "$WORK/$r" rev-list --objects --exclude='refs/migrate/*' --all |
		cut -d' ' -f1 | git -C "$WORK/$r" cat-file --batch-check='%(objecttype) %(objectsize)' |
		awk -v n="$N" '$1 == "blob" && $2 > n * 1048576' | wc -l)
	[ "$big" = 0 ] || { echo "$r still has $big blobs over $N MiB" >&2; exit 1; }
done
dropped=$(git -C "$SRC" cat-file --batch-all-objects --batch-check='%(objecttype) %(objectsize)' |
	awk -v n="$N" '$1 == "blob" && $2 > n * 1048576 { c++; s += $2 } END { printf "%d blobs, %d MB", c, s / 1e6 }')
pack() { calc "round($(du -sb "$1" | cut -f1) / 1048576)"; }

cat <<EOF

Blobs over $N MiB dropped ($dropped), history of large binaries
($(git -C "$SRC" rev-list --all | wc -l) commits, $(git -C "$SRC" cat-file --batch-all-objects --batch-check='%(objecttype)' | grep -c blob) blobs, binaries of 1 to 60 MB),
load average $load0 before, $load1 after:

| pipeline | wall s | time / filter-repo's | repository after | peak RSS, MiB |
|---|---|---|---|---|
| \`git filter-repo --strip-blobs-bigger-than ${N}M\` (ends with gc) | $(bench_wall peer) | 1.00× | $(pack "$WORK/peer/objects") MiB | $(bench_rss peer) |
| \`migrate run --in-place\` (originals kept) | $(bench_wall runip) | $(calc "round($(cat "$WORK/runip.wall") / $(cat "$WORK/peer.wall"), 2)")× | $(pack "$WORK/runip/objects") MiB | $(bench_rss runip) |
| \`migrate run --to\` (packed, no alternate) | $(bench_wall runto) | $(calc "round($(cat "$WORK/runto.wall") / $(cat "$WORK/peer.wall"), 2)")× | $(pack "$WORK/runto/.git/objects") MiB | $(bench_rss runto) |

Same commit ids as filter-repo at every branch: $same_ids$([ "$same_ids" = yes ] || echo " (same trees)").
EOF
