#!/usr/bin/env bash
# tests/bench/passthrough.sh - what migrate costs in the pipeline (issue 2).
# A measurement, not a test: scripts/test never runs it; it asserts nothing
# about speed. Prints a markdown table for the README.
#
# 1. On the full-scale assets corpus (tests/gen/make-history --full --only
#    assets, generated once and cached in $BENCH_DIR), side by side:
#        git fast-export --all ... | cat          | git fast-import
#        git fast-export --all ... | build/migrate | git fast-import
#    each into a fresh repository: wall time of each, the ratio, and
#    migrate's own CPU time (user+sys) as a share of the pipeline's CPU.
# 2. migrate's peak RSS while passing a stream holding one 2 GiB blob
#    (random bytes, cached in $BENCH_DIR), and its computed id of that blob
#    against git's.
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate, built if missing), BENCH_REPEAT (default 1: runs of each
# pipeline, alternating; the table shows the best of each),
# BENCH_BIG_MIB (default 2048), BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BENCH_REPEAT="${BENCH_REPEAT:-1}"
BENCH_BIG_MIB="${BENCH_BIG_MIB:-2048}"
TIME=/usr/bin/time

bench_setup run
[ -x "$TIME" ] || { echo "no $TIME" >&2; exit 1; }
# an empty file, never /dev/null: a global config write renames over it
export GIT_CONFIG_GLOBAL="$WORK/gitconfig"
: >"$GIT_CONFIG_GLOBAL"

# --- the corpus (cached) -------------------------------------------------------
bench_corpus corpus assets
EXPORT=(git -C "$SRC" fast-export --all --show-original-ids --signed-tags=verbatim
	--reencode=no --mark-tags --tag-of-filtered-object=drop)

stream_bytes="$("${EXPORT[@]}" | wc -c)"
say "assets stream: $stream_bytes bytes"

# run_pipeline MIDDLE... : fast-export | MIDDLE | fast-import into a fresh
# repository. Sets WALL (s) and CPU (user+sys of the whole pipeline, all
# three processes, s).
run_pipeline() {
	local dst="$WORK/dst" t0 t1
	rm -rf "$dst"
	git init -q "$dst"
	t0="$(now)"
	# shellcheck disable=SC2016 # expanded by the inner bash
	"$TIME" -f '%U %S' -o "$WORK/pipeline.time" bash -c '
		set -euo pipefail
		src="$1" dst="$2"
		shift 2
		git -C "$src" fast-export --all --show-original-ids \
			--signed-tags=verbatim --reencode=no --mark-tags \
			--tag-of-filtered-object=drop |
			"$@" | git -C "$dst" fast-import --quiet
	' pipeline "$SRC" "$dst" "$@"
	t1="$(now)"
	WALL="$(calc "round($t1 - $t0, 2)")"
	CPU="$(awk '{ printf "%.2f", $1 + $2 }' "$WORK/pipeline.time")"
}

best_cat_wall="" best_mig_wall="" mig_cpu="" mig_pipe_cpu="" cat_cpu=""
for i in $(seq "$BENCH_REPEAT"); do
	say "run $i: fast-export | cat | fast-import"
	run_pipeline cat
	echo "    wall ${WALL}s, pipeline CPU ${CPU}s"
	if [ -z "$best_cat_wall" ] || [ "$(calc "$WALL < $best_cat_wall")" = True ]; then
		best_cat_wall="$WALL"
		cat_cpu="$CPU"
	fi

	say "run $i: fast-export | migrate | fast-import"
	run_pipeline "$TIME" -f '%U %S %M' -o "$WORK/migrate.time" "$MIGRATE" \
		--source-repo "$SRC" --commit-map "$WORK/commit-map"
	m_cpu="$(awk '{ printf "%.2f", $1 + $2 }' "$WORK/migrate.time")"
	echo "    wall ${WALL}s, pipeline CPU ${CPU}s, migrate CPU ${m_cpu}s," \
		"migrate peak RSS $(awk '{ print $3 }' "$WORK/migrate.time") KiB"
	if [ -z "$best_mig_wall" ] || [ "$(calc "$WALL < $best_mig_wall")" = True ]; then
		best_mig_wall="$WALL"
		mig_cpu="$m_cpu"
		mig_pipe_cpu="$CPU"
		mig_rss_assets="$(awk '{ print $3 }' "$WORK/migrate.time")"
	fi
done

# --- one 2 GiB blob ------------------------------------------------------------
BIG="$BENCH_DIR/big-${BENCH_BIG_MIB}MiB.bin"
big_bytes=$((BENCH_BIG_MIB * 1024 * 1024))
if [ ! -f "$BIG" ] || [ "$(stat -c %s "$BIG")" -ne "$big_bytes" ]; then
	say "writing $BIG (random, once)"
	head -c "$big_bytes" /dev/urandom >"$BIG.tmp"
	mv "$BIG.tmp" "$BIG"
fi
say "git hash-object of the big blob"
expect_id="$(git hash-object --no-filters "$BIG")"
big_stream() {
	printf 'blob\nmark :1\ndata %d\n' "$big_bytes"
	cat "$BIG"
	printf '\ncommit refs/heads/big\nmark :2\n'
	printf 'committer Bench <bench@example.org> 1700000000 +0000\ndata 4\nbig\n'
	printf 'M 644 :1 big.bin\n\n'
}
say "migrate passing one $BENCH_BIG_MIB MiB blob"
t0="$(now)"
big_stream | "$TIME" -f '%U %S %M' -o "$WORK/big.time" "$MIGRATE" \
	--export-marks "$WORK/big.marks" >/dev/null
t1="$(now)"
big_wall="$(calc "round($t1 - $t0, 1)")"
big_rss_kib="$(awk '{ print $3 }' "$WORK/big.time")"
got_id="$(awk '$1 == ":1" { print $2 }' "$WORK/big.marks")"
if [ "$got_id" = "$expect_id" ]; then
	big_id_ok="equal to git hash-object"
else
	big_id_ok="DIFFERS from git hash-object ($got_id vs $expect_id)"
fi

# --- the table ---------------------------------------------------------------
ratio="$(calc "round($best_mig_wall / $best_cat_wall, 3)")"
share="$(calc "round(100.0 * $mig_cpu / $mig_pipe_cpu, 1)")"
mib() { calc "round($1 / 1024.0, 1)"; }
cat <<EOF

Measured $(date -u +%Y-%m-%d) on $(nproc) cores ($(uname -m)), git $(git --version | cut -d' ' -f3),
assets corpus ($(dirname "$SRC")): $(calc "round($stream_bytes / 1e9, 2)") GB export stream,
best of $BENCH_REPEAT run(s) each.

| measurement | result | target |
|---|---|---|
| \`fast-export \| cat \| fast-import\` wall time | ${best_cat_wall} s (pipeline CPU ${cat_cpu} s) | |
| \`fast-export \| migrate \| fast-import\` wall time | ${best_mig_wall} s (pipeline CPU ${mig_pipe_cpu} s) | |
| wall-time ratio migrate / cat | ${ratio}x | <= 1.05x |
| migrate's own CPU (user+sys) | ${mig_cpu} s = ${share} % of the pipeline's | <= 15 % |
| migrate peak RSS, assets stream | $(mib "$mig_rss_assets") MiB | |
| migrate peak RSS, one ${BENCH_BIG_MIB} MiB blob | $(mib "$big_rss_kib") MiB (${big_wall} s; blob id ${big_id_ok}) | <= 64 MiB |
EOF
