#!/usr/bin/env bash
# tests/bench/split.sh - splitting the tracker's data/CVE/list across all
# history (issue 4), on the full-scale tracker corpus. A measurement, not a
# test: it prints a markdown table for the README.
#
# (a) side by side, each into a fresh repository:
#       git fast-export --all | cat                      | git fast-import
#       git fast-export --all | migrate --rules per-year  | git fast-import
#       git fast-export --all | migrate --rules per-record| git fast-import
#     wall time of each, and migrate's own CPU time against fast-export's.
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
bench_corpus tcorpus tracker
BR=$(git -C "$SRC" symbolic-ref --short HEAD)
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=rewrite) # as migrate run
cat >"$WORK/year.rules" <<'EOF'
data/CVE/list  split  record='^CVE-(\d{4})-'  into='data/CVE/list.{1}'  head='data/CVE/list.head'
EOF
cat >"$WORK/record.rules" <<'EOF'
data/CVE/list  split  record='^CVE-(\d{4})-(\d+)'  into='data/CVE/{1}/{2}'  head='data/CVE/list.head'
EOF

cpu() { awk '{ print $1 + $2 }' "$1"; } # "user sys" from /usr/bin/time -f '%U %S'

# pipeline NAME FILTER...: fast-export | FILTER | fast-import into $WORK/NAME
pipeline() {
	local name="$1" t0
	shift
	git init -q --bare "$WORK/$name"
	sync
	t0=$(now)
	(cd "$SRC" && /usr/bin/time -f '%U %S' -o "$WORK/$name.fe-cpu" \
		git fast-export "${FLAGS[@]}" |
		/usr/bin/time -f '%U %S' -o "$WORK/$name.cpu" "$@" |
		git -C "$WORK/$name" fast-import --quiet)
	calc "$(now) - $t0" >"$WORK/$name.wall"
}

say "plain round trip: fast-export | cat | fast-import"
pipeline plain cat
say "per-year split"
pipeline year "$MIGRATE" --rules "$WORK/year.rules"
say "per-record split"
pipeline record "$MIGRATE" --rules "$WORK/record.rules"

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

w_plain=$(cat "$WORK/plain.wall") w_year=$(cat "$WORK/year.wall") w_rec=$(cat "$WORK/record.wall")
fe=$(cpu "$WORK/year.fe-cpu")
mb() { calc "round($1 / 1048576, 1)"; }
ratio() { calc "round($1 / max($2, 0.01), 1)"; }
cat <<EOF

Split of data/CVE/list, full-scale tracker corpus ($(git -C "$SRC" rev-list --all | wc -l) commits,
final file $(mb "$(git -C "$SRC" cat-file -s "$BR:data/CVE/list")") MiB), measured $(date +%F) on $(nproc) cores:

| pipeline | wall s | vs plain round trip | migrate CPU s | vs fast-export CPU |
|---|---|---|---|---|
| fast-export \\| cat \\| fast-import | $(printf %.1f "$w_plain") | 1.00× | | |
| per-year split | $(printf %.1f "$w_year") | $(ratio "$w_plain" "$w_year")× faster | $(cpu "$WORK/year.cpu") | $(calc "round(100 * $(cpu "$WORK/year.cpu") / $fe)") % of $fe s |
| per-record split | $(printf %.1f "$w_rec") | $(ratio "$w_plain" "$w_rec")× faster | $(cpu "$WORK/record.cpu") | $(calc "round(100 * $(cpu "$WORK/record.cpu") / $(cpu "$WORK/record.fe-cpu"))") % of $(cpu "$WORK/record.fe-cpu") s |

| marker | before (one file) | after (per year) | improvement | floor |
|---|---|---|---|---|
| pack after \`git repack -adf\` | $(mb "$(cat "$WORK/plain.pack")") MiB | $(mb "$(cat "$WORK/year.pack")") MiB | $(ratio "$(cat "$WORK/plain.pack")" "$(cat "$WORK/year.pack")")× | newest tree alone: $(mb "$pack_floor_before") / $(mb "$pack_floor_after") MiB |
| \`git blame\` (newest part: $newest) | ${blame_before} s | ${blame_after} s | $(ratio "$blame_before" "$blame_after")× | |
| \`git log -- <path>\` | ${log_before} s | ${log_after} s | $(ratio "$log_before" "$log_after")× | \`git log\` without a path: ${log_floor} s |
| \`git log -p -100 -- <path>\` | ${logp_before} s | ${logp_after} s | $(ratio "$logp_before" "$logp_after")× | |
| \`git clone --no-local\` | ${clone_before} s | ${clone_after} s | $(ratio "$clone_before" "$clone_after")× | |
EOF
