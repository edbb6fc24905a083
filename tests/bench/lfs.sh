#!/usr/bin/env bash
# tests/bench/lfs.sh - large files into Git LFS (issue 3): migrate against
# `git lfs migrate import --everything` with the same globs, side by side in
# one run on the full-scale assets corpus. A measurement, not a test.
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
# Wall time of each, the ratio to the peer, and peak RSS: the peer's whole
# process; migrate's own process (tests/bench/peak_rss.py, not counting the
# git cat-file child, which maps whole packs). Every result is checked:
# the same LFS paths as the peer, git lfs fsck passes.
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate), BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PEAK="$ROOT/tests/bench/peak_rss.py"

bench_setup lfs
bench_git_lfs

bench_corpus corpus assets
GLOBS='*.bin,*.psd,*.zip,*.mp4'
tr ',' '\n' <<<"$GLOBS" | sed 's/$/ lfs/' >"$WORK/rules"
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=rewrite) # as migrate run: a tag of a blob survives --no-data


say "peer: git lfs migrate import --everything --include=$GLOBS"
bench_mirror "$WORK/peer"
sync
t0=$(now)
(cd "$WORK/peer" && /usr/bin/time -f %M -o "$WORK/peer.rss" \
	git lfs migrate import --everything --yes --include="$GLOBS" >/dev/null 2>&1)
t_peer=$(calc "$(now) - $t0")

say "migrate in place: fast-export --no-data | migrate | fast-import --force"
bench_mirror "$WORK/inplace"
sync
t0=$(now)
(cd "$WORK/inplace" &&
	git fast-export --no-data "${FLAGS[@]}" |
	"$PEAK" "$WORK/inplace.rss" "$MIGRATE" --rules "$WORK/rules" \
		--commit-map "$WORK/inplace.map" |
	git fast-import --quiet --force)
t_inplace=$(calc "$(now) - $t0")

say "migrate into a new repository: fast-export | migrate | fast-import"
git init -q "$WORK/new"
sync
t0=$(now)
(cd "$SRC" && git fast-export "${FLAGS[@]}" |
	"$PEAK" "$WORK/new.rss" "$MIGRATE" --rules "$WORK/rules" \
		--store "$WORK/new/.git/lfs/objects" |
	git -C "$WORK/new" fast-import --quiet)
t_new=$(calc "$(now) - $t0")

say "migrate run --in-place (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/runip"
sync
t0=$(now)
/usr/bin/time -f %M -o "$WORK/runip.rss" \
	"$MIGRATE" run --rules "$WORK/rules" --repo "$WORK/runip" --in-place -q
t_runip=$(calc "$(now) - $t0")

say "migrate run --to NEWDIR"
sync
t0=$(now)
/usr/bin/time -f %M -o "$WORK/runto.rss" \
	"$MIGRATE" run --rules "$WORK/rules" --repo "$SRC" --to "$WORK/runto" -q
t_runto=$(calc "$(now) - $t0")
[ ! -e "$WORK/runto/.git/objects/info/alternates" ] || { echo "run --to left its alternate" >&2; exit 1; }
packs_runto=$(git -C "$WORK/runto" count-objects -v | sed -n 's/^packs: //p')

say "checking the results"
for r in peer inplace new runip runto; do
	git -C "$WORK/$r" lfs ls-files --all --name-only | sort -u >"$WORK/$r.names"
	git -C "$WORK/$r" symbolic-ref HEAD refs/heads/main
	(cd "$WORK/$r" && git lfs fsck >/dev/null) || { echo "git lfs fsck failed in $r" >&2; exit 1; }
	cmp -s "$WORK/peer.names" "$WORK/$r.names" ||
		{ echo "the converted paths of $r differ from the peer's" >&2; exit 1; }
done
nfiles=$(wc -l <"$WORK/peer.names")
bytes=$(du -sb "$WORK/peer/.git/lfs/objects" | cut -f1)

cat <<EOF

Git LFS conversion, full-scale assets corpus ($(git -C "$SRC" rev-list --all | wc -l) commits,
$nfiles LFS paths, $(calc "round($bytes / 1e6)") MB into the LFS store), globs $GLOBS:

| pipeline | wall s | vs git lfs migrate | peak RSS |
|---|---|---|---|
| git lfs migrate import --everything | $(printf %.1f "$t_peer") | 1.00× | $(calc "round($(cat "$WORK/peer.rss") / 1024)") MiB |
| migrate in place (--no-data) | $(printf %.1f "$t_inplace") | $(calc "round($t_peer / $t_inplace, 1)")× faster | $(calc "round($(cat "$WORK/inplace.rss") / 1024)") MiB (migrate) |
| migrate into a new repository | $(printf %.1f "$t_new") | $(calc "round($t_peer / $t_new, 1)")× faster | $(calc "round($(cat "$WORK/new.rss") / 1024)") MiB (migrate) |
| \`migrate run --in-place\` | $(printf %.1f "$t_runip") | $(calc "round($t_peer / $t_runip, 1)")× faster | $(calc "round($(cat "$WORK/runip.rss") / 1024)") MiB (largest process) |
| \`migrate run --to\` ($packs_runto pack, no alternate) | $(printf %.1f "$t_runto") | $(calc "round($t_peer / $t_runto, 1)")× faster | $(calc "round($(cat "$WORK/runto.rss") / 1024)") MiB (largest process) |

Every result passes \`git lfs fsck\` and lists the same LFS paths as the peer.
EOF
