#!/usr/bin/env bash
# tests/bench/unlfs.sh - back from Git LFS (issue 15, item 2): migrate's
# unlfs against `git lfs migrate export --everything` with the same globs,
# side by side in one run, on the full-scale assets corpus first moved to
# LFS by migrate (that part is set-up, not timed). A measurement, not a test.
#
#   peer:      git lfs migrate export --everything --include=GLOBS   (in a copy)
#   in place:  migrate run --rules R --repo COPY --in-place   (in a copy, as the
#              peer rewrites in place)
#   new repo:  migrate run --rules R --repo LFS --to NEW   (a fresh repository)
#
# Wall time of each, the ratio to the peer and the size of the result's
# .git/objects (the peer's loose objects as they are, the others as packed
# by the run). Every result is checked: the
# same files (blob ids) as the peer at every branch tip, .gitattributes
# aside (git-lfs adds !filter lines there, migrate takes its lines out).
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate), BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup unlfs
export HOME="$WORK/home"
mkdir -p "$HOME"
git lfs install --skip-repo >/dev/null

bench_corpus corpus assets
GLOBS='*.bin,*.psd,*.zip,*.mp4'
tr ',' '\n' <<<"$GLOBS" | sed 's/$/ lfs/' >"$WORK/to.rules"
tr ',' '\n' <<<"$GLOBS" | sed 's/$/ unlfs/' >"$WORK/back.rules"

say "set-up: the assets corpus into LFS (migrate run, not timed)"
"$MIGRATE" run -q --rules "$WORK/to.rules" --repo "$SRC" --to "$WORK/lfs"
LFS="$WORK/lfs"
# as a clone of it would be: without the state of the run that made it
rm -rf "$LFS/.git/migrate"
git -C "$LFS" for-each-ref --format='delete %(refname)' refs/migrate/ |
	git -C "$LFS" update-ref --stdin

say "peer: git lfs migrate export --everything --include=$GLOBS"
cp -a "$LFS" "$WORK/peer"
sync
t0=$(now)
(cd "$WORK/peer" && git lfs migrate export --everything --yes \
	--include="$GLOBS" >/dev/null 2>&1)
t_peer=$(calc "$(now) - $t0")

say "migrate run --in-place"
cp -a "$LFS" "$WORK/inplace"
sync
t0=$(now)
"$MIGRATE" run -q --rules "$WORK/back.rules" --repo "$WORK/inplace" --in-place
t_inplace=$(calc "$(now) - $t0")

say "migrate run --to a new repository"
sync
t0=$(now)
"$MIGRATE" run -q --rules "$WORK/back.rules" --repo "$LFS" --to "$WORK/new"
t_new=$(calc "$(now) - $t0")

say "checking the results"
tips() { # REPO: every branch tip's files but .gitattributes, with blob ids
	local ref
	for ref in $(git -C "$1" for-each-ref --format='%(refname)' refs/heads/); do
		echo "$ref"
		git -C "$1" ls-tree -r "$ref" | grep -v '	\(.*/\)\?\.gitattributes$'
	done
}
tips "$WORK/peer" >"$WORK/peer.tips"
for r in inplace new; do
	tips "$WORK/$r" >"$WORK/$r.tips"
	cmp -s "$WORK/peer.tips" "$WORK/$r.tips" ||
		{ echo "$r: the tips' files differ from the peer's" >&2; exit 1; }
done
[ "$(git -C "$WORK/new" rev-parse main)" = "$(git -C "$SRC" rev-parse main)" ] ||
	{ echo "new: main is not the original's commit again" >&2; exit 1; }
nptr=$(git -C "$LFS" lfs ls-files --all --name-only | sort -u | wc -l)
bytes=$(du -sb "$LFS/.git/lfs/objects" | cut -f1)
mb() { calc "round($(du -sb "$WORK/$1/.git/objects" | cut -f1) / 1e6)"; }

cat <<EOF

Back from Git LFS, full-scale assets corpus ($(git -C "$SRC" rev-list --all | wc -l) commits,
$nptr LFS paths, $(calc "round($bytes / 1e6)") MB in the LFS store), globs $GLOBS:

| pipeline | wall s | vs git lfs migrate export | .git/objects MB |
|---|---|---|---|
| git lfs migrate export --everything | $(printf %.1f "$t_peer") | 1.00× | $(mb peer) |
| migrate run --in-place | $(printf %.1f "$t_inplace") | $(calc "round($t_peer / $t_inplace, 2)")× | $(mb inplace) |
| migrate run --to a new repository | $(printf %.1f "$t_new") | $(calc "round($t_peer / $t_new, 2)")× | $(mb new) |

Every result has the peer's files at every branch tip; migrate run's main is
the original commit again (lfs then unlfs is the identity).
EOF
