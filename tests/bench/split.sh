#!/usr/bin/env bash
# tests/bench/split.sh - splitting the tracker's data/CVE/list across all
# history (issues 4 and 12), on the tracker corpus (2,000 commits; the list
# grows from 0.5 to 4.5 MB, a quarter of the full scale, so the script
# stays near ten minutes on two cores: a 5 GB export stream;
# BENCH_HISTORY_OPTIONS="--tracker-initial-mb 2 --tracker-final-mb 18"
# gives the full 20 GB one).
# A measurement, not a test: it prints markdown tables for the README.
#
# (a) side by side, each into a fresh repository:
#       git fast-export --all | cat                      | git fast-import
#       git fast-export --all | migrate --rules per-year  | git fast-import
#       the same with fast-export --no-data (what migrate run exports),
#       without and with --report and --report-json (what run writes)
#       git fast-export --all | migrate --rules per-record| git fast-import
#       migrate run --to NEWDIR --rules per-year   (--no-data export, the
#                                     check, git repack -a -d at the end)
#     wall time of each, migrate's own CPU time against fast-export's, the
#     size of the pack run --to delivers against git repack -adf's, the
#     peak RSS of every process (tests/bench/peak_rss.py --tree); the
#     per-year results must have the same commit ids.
# (b) before and after the per-year split: pack size after git repack -adf,
#     git blame of the newest part against the original file, git log --
#     <path>, git log -p of the last 100 changes, git clone --no-local; and
#     the floors no rewrite of this history can beat (the newest tree alone,
#     packed; git log without a path).
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate), BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup split
bench_corpus tcorpus tracker --tracker-initial-mb 0.5 --tracker-final-mb 4.5
BR=$(git -C "$SRC" symbolic-ref --short HEAD)
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=rewrite) # as migrate run
bench_rules_split "$WORK/year.rules"
cat >"$WORK/record.rules" <<'EOF'
data/CVE/list  split  record='^CVE-(\d{4})-(\d+)'  into='data/CVE/{1}/{2}'  head='data/CVE/list.head'
EOF

cpu() { awk '{ print $1 + $2 }' "$1"; } # "user sys" from /usr/bin/time -f '%U %S'

# pipeline NAME FILTER...: fast-export | FILTER | fast-import into $WORK/NAME
# (with NODATA=1: fast-export --no-data, as migrate run exports, and NAME
# borrowing SRC's objects, as a run --to target does during the import)
export SRC WORK FLAGS_WORDS="${FLAGS[*]}"
pipeline() {
	local name="$1"
	shift
	git init -q --bare "$WORK/$name"
	[ -z "${NODATA:-}" ] ||
		git -C "$SRC" rev-parse --path-format=absolute --git-path objects \
			>"$WORK/$name/objects/info/alternates"
	# shellcheck disable=SC2016 # expanded by the inner bash
	bench_timed "$name" bash -c 'name=$1 && shift && cd "$SRC" &&
		/usr/bin/time -f "%U %S" -o "$WORK/$name.fe-cpu" git fast-export $FLAGS_WORDS ${NODATA:+--no-data} |
		/usr/bin/time -f "%U %S" -o "$WORK/$name.cpu" "$@" |
		git -C "$WORK/$name" fast-import --quiet' - "$name" "$@"
}
load0=$(bench_load)

say "plain round trip: fast-export | cat | fast-import"
pipeline plain cat
say "per-year split"
pipeline year "$MIGRATE" --rules "$WORK/year.rules"
say "per-year split, --no-data"
NODATA=1 pipeline yearnd "$MIGRATE" --rules "$WORK/year.rules" --source-repo "$SRC"
say "per-year split, --no-data, with --report and --report-json"
NODATA=1 pipeline yearrep "$MIGRATE" --rules "$WORK/year.rules" --source-repo "$SRC" \
	--report "$WORK/year.txt" --report-json "$WORK/year.json"
say "per-record split"
pipeline record "$MIGRATE" --rules "$WORK/record.rules"
say "migrate run --to, per-year split"
bench_timed_phases runto "$MIGRATE" run --progress --rules "$WORK/year.rules" --repo "$SRC" \
	--to "$WORK/runto"
load1=$(bench_load)
refs() { git -C "$1" for-each-ref --format='%(objectname) %(refname)' refs/heads refs/tags; }
for r in yearnd yearrep runto; do
	cmp -s <(refs "$WORK/year") <(refs "$WORK/$r") ||
		{ echo "the per-year split of $r has other ids than the hand pipeline's" >&2; exit 1; }
done
# what run --to delivers, as it is (issue 29: against repack -adf below)
du -sb "$WORK/runto/.git/objects/pack" | cut -f1 >"$WORK/runto.pack"

# (b) before and after, on the plain round trip and the per-year result
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1; calc "round($(now) - $t0, 2)"; }
newest=$(git -C "$WORK/year" ls-tree --name-only "$BR" data/CVE/ | grep -E 'list\.[0-9]+$' | sort | tail -1)
say "repack -adf, blame, log, clone"
for r in plain year; do
	timed git -C "$WORK/$r" repack -adf -q >/dev/null
	du -sb "$WORK/$r/objects/pack" | cut -f1 >"$WORK/$r.pack"
done
blame_before=$(timed git -C "$WORK/plain" blame "$BR" -- data/CVE/list)
blame_after=$(timed git -C "$WORK/year" blame "$BR" -- "$newest")
log_before=$(timed git -C "$WORK/plain" log --oneline "$BR" -- data/CVE/list)
log_after=$(timed git -C "$WORK/year" log --oneline "$BR" -- "$newest")
# the diff and render of recent history (what the seed's web front-ends did)
logp_before=$(timed git -C "$WORK/plain" log -p -100 "$BR" -- data/CVE/list)
logp_after=$(timed git -C "$WORK/year" log -p -100 "$BR" -- "$newest")
# Floors no history can go below: the newest tree alone, packed; walking
# the commits without a path.
floor_pack() { git -C "$1" rev-list --objects "$BR^{tree}" | git -C "$1" pack-objects --stdout -q | wc -c; }
pack_floor_before=$(floor_pack "$WORK/plain")
pack_floor_after=$(floor_pack "$WORK/year")
log_floor=$(timed git -C "$WORK/plain" log --oneline "$BR")
clone_before=$(timed git clone -q --no-local --bare "$WORK/plain" "$WORK/c1")
clone_after=$(timed git clone -q --no-local --bare "$WORK/year" "$WORK/c2")

w_plain=$(cat "$WORK/plain.wall")
mb() { calc "round($1 / 1048576, 1)"; }
ratio() { calc "round($1 / max($2, 0.01), 1)"; }
# row NAME TITLE: a row of the first table
row() {
	local w c=
	w=$(cat "$WORK/$1.wall")
	# (a --no-data export costs fast-export next to nothing: no ratio)
	[ ! -e "$WORK/$1.fe-cpu" ] || c="$(cpu "$WORK/$1.cpu") | $(calc "'%d %% of' % round(100 * $(cpu "$WORK/$1.cpu") / $(cpu "$WORK/$1.fe-cpu")) if $(cpu "$WORK/$1.fe-cpu") >= 1 else 'export:'") $(cpu "$WORK/$1.fe-cpu") s"
	printf '| %s | %.1f | %s× faster | %s | %s |\n' "$2" "$w" "$(ratio "$w_plain" "$w")" \
		"${c:- | }" "$(bench_rss "$1")"
}
cat <<EOF

Split of data/CVE/list, tracker corpus ($(git -C "$SRC" rev-list --all | wc -l) commits,
final file $(mb "$(git -C "$SRC" cat-file -s "$BR:data/CVE/list")") MiB), measured $(date +%F) on $(nproc) cores,
load average $load0 before, $load1 after:

| pipeline | wall s | vs plain round trip | migrate CPU s | vs fast-export CPU | peak RSS of each process, MiB |
|---|---|---|---|---|---|
| fast-export \\| cat \\| fast-import | $(printf %.1f "$w_plain") | 1.00× | | | $(bench_rss plain) |
$(row year "per-year split")
$(row yearnd "per-year split, \`--no-data\` export (as \`run\`)")
$(row yearrep "the same, \`--report\` and \`--report-json\` (as \`run\`)")
$(row record "per-record split")
$(row runto "\`migrate run --to\`, per-year split")

Reports: $(calc "round($(cat "$WORK/yearrep.wall") / $(cat "$WORK/yearnd.wall"), 2)")× the same pipeline without them.
\`migrate run --to\`: $(calc "round($(cat "$WORK/runto.wall") / $(cat "$WORK/year.wall"), 2)")× the hand pipeline with the same rules (same commit ids), $(calc "round($(cat "$WORK/runto.wall") / $w_plain, 2)")× the plain round trip; it delivers $(mb "$(cat "$WORK/runto.pack")") MiB of pack as it is, $(calc "round($(cat "$WORK/runto.pack") / $(cat "$WORK/year.pack"), 2)")× what \`git repack -adf\` makes of the same history.

Phases (\`migrate run --progress\`):

$(bench_phase_head)
$(bench_phase_runs "runto:run --to")

| marker | before (one file) | after (per year) | improvement | floor |
|---|---|---|---|---|
| pack after \`git repack -adf\` | $(mb "$(cat "$WORK/plain.pack")") MiB | $(mb "$(cat "$WORK/year.pack")") MiB | $(ratio "$(cat "$WORK/plain.pack")" "$(cat "$WORK/year.pack")")× | newest tree alone: $(mb "$pack_floor_before") / $(mb "$pack_floor_after") MiB |
| \`git blame\` (newest part: $newest) | ${blame_before} s | ${blame_after} s | $(ratio "$blame_before" "$blame_after")× | |
| \`git log -- <path>\` | ${log_before} s | ${log_after} s | $(ratio "$log_before" "$log_after")× | \`git log\` without a path: ${log_floor} s |
| \`git log -p -100 -- <path>\` | ${logp_before} s | ${logp_after} s | $(ratio "$logp_before" "$logp_after")× | |
| \`git clone --no-local\` | ${clone_before} s | ${clone_after} s | $(ratio "$clone_before" "$clone_after")× | |
EOF
