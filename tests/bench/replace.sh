#!/usr/bin/env bash
# tests/bench/replace.sh - text replaced in every blob of all history
# (issue 29: "replace-text `run --to` >= 5x faster than git filter-repo
# --replace-text, same commit ids"), on the tracker corpus (2,000 commits,
# data/CVE/list growing from 0.5 to 4.5 MB: every version of it is a blob
# to rewrite; the corpus split.sh uses). A measurement, not a test.
#
# The expressions are git filter-repo's --replace-text format, one literal
# and one regex (both change every version of data/CVE/list); migrate's
# rule file is `* replace-text=EXPRS`. Side by side, each on its own fresh
# mirror clone of the corpus:
#
#   peer:           git filter-repo --replace-text EXPRS --force (it ends
#                   with git reflog expire --expire=now --all and git gc
#                   --prune=now: the repository it leaves is packed)
#   run --to:       migrate run --to NEWDIR --repo MIRROR (ends with git
#                   repack -a -d)
#   run --in-place: migrate run --in-place (the originals stay under
#                   refs/migrate/original/; no repacking)
#   hand pipeline:  git fast-export --all --no-data ... | migrate --rules R
#                   --source-repo . | git fast-import (into a new bare
#                   repository borrowing the mirror's objects, as run --to
#                   does during its import)
#
# Wall time of each, the ratio to the peer's, the CPU time of all its
# processes over the wall time (how many of the cores it kept busy), the
# CPU time of each kind of process, the size of `objects` after, as it is
# and after `git repack -a -d -f`, the peak RSS of every process; and the
# phases of the peer and of both runs (migrate run --progress;
# filter-repo's own lines), wall and CPU / wall each. Every branch must
# have filter-repo's commit id: the script fails otherwise.
#
# Environment: BENCH_DIR, MIGRATE, BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup replace
bench_corpus tcorpus tracker --tracker-initial-mb 0.5 --tracker-final-mb 4.5
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=rewrite) # as migrate run
bench_rules_replace "$WORK/rules" "$WORK/exprs.txt"
load0=$(bench_load)

say "peer: git filter-repo --replace-text (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/peer"
# filter-repo's own lines mark its phases: the rewrite, then the
# repacking (reflog expire, gc --prune=now)
# shellcheck disable=SC2016 # expanded by the inner bash
BENCH_PHASE_RE='(now repacking/cleaning)' \
	bench_timed_phases peer bash -c 'cd "$1" && git filter-repo --replace-text "$2" --force 1>&2' \
	- "$WORK/peer" "$WORK/exprs.txt"

say "migrate run --to NEWDIR (from a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/mto"
bench_timed_phases runto "$MIGRATE" run --progress --rules "$WORK/rules" --repo "$WORK/mto" \
	--to "$WORK/runto"

say "migrate run --in-place (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/runip"
bench_timed_phases runip "$MIGRATE" run --progress --rules "$WORK/rules" --repo "$WORK/runip" \
	--in-place

say "hand pipeline: fast-export --no-data | migrate | fast-import"
git clone -q --mirror "$SRC" "$WORK/mpipe"
git init -q --bare "$WORK/pipe"
echo "$WORK/mpipe/objects" >"$WORK/pipe/objects/info/alternates"
export WORK FLAGS_WORDS="${FLAGS[*]}"
# shellcheck disable=SC2016 # expanded by the inner bash
bench_timed_phases pipe bash -c 'cd "$WORK/mpipe" && git fast-export $FLAGS_WORDS --no-data |
	"$1" --rules "$WORK/rules" --source-repo . |
	git -C "$WORK/pipe" fast-import --quiet' - "$MIGRATE"
load1=$(bench_load)

say "checking the results"
heads() { git -C "$1" for-each-ref --format='%(objectname) %(refname)' refs/heads; }
heads "$WORK/peer" >"$WORK/peer.refs"
for r in runto runip pipe; do
	heads "$WORK/$r" >"$WORK/$r.refs"
	diff "$WORK/peer.refs" "$WORK/$r.refs" >&2 ||
		{ echo "FAILED: $r has other commit ids than git filter-repo's (above)" >&2; exit 1; }
	git -C "$WORK/$r" fsck --no-progress --connectivity-only >&2 ||
		{ echo "FAILED: git fsck in $r" >&2; exit 1; }
done
BR=$(git -C "$SRC" symbolic-ref --short HEAD)
changed=$(git -C "$SRC" log --format=%H "$BR" | wc -l)
after=$(git -C "$WORK/peer" rev-parse "$BR")
git -C "$WORK/peer" grep -q 'bugs.example.org' "$BR" &&
	{ echo "FAILED: filter-repo left bugs.example.org in $BR" >&2; exit 1; }

say "sizes, as left and after git repack -a -d -f"
bench_sizes peer runto runip pipe
cat <<EOF

Replace-text, tracker corpus ($(git -C "$SRC" rev-list --all | wc -l) commits, final data/CVE/list
$(calc "round($(git -C "$SRC" cat-file -s "$BR:data/CVE/list") / 1048576, 1)") MiB; the expressions change it in all $changed commits of $BR),
measured $(date +%F) with $("$MIGRATE" --version 2>/dev/null | head -1 || echo migrate) on $(nproc) cores,
load average $load0 before, $load1 after:

| pipeline | wall s | speed-up over filter-repo | CPU s | CPU / wall (cores busy, of $(nproc)) | CPU s of each process | objects after | after \`git repack -a -d -f\` (its time) | peak RSS of each process, MiB |
|---|---|---|---|---|---|---|---|---|
$(bench_peer_row peer "\`git filter-repo --replace-text\` (ends with gc)")
$(bench_peer_row runto "\`migrate run --to\` (packed: git repack -a -d)")
$(bench_peer_row runip "\`migrate run --in-place\` (originals kept, not repacked)")
$(bench_peer_row pipe "hand pipeline, \`--no-data\` (fast-import's pack; borrows the mirror's objects)")

Every branch has filter-repo's commit id ($BR: $after); git fsck
--connectivity-only passes in each.

$(bench_phase_table "runto:run --to" "runip:run --in-place")
EOF
