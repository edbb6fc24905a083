#!/usr/bin/env bash
# tests/bench/analyze.sh - migrate analyze against git filter-repo
# --analyze (issue 15, item 1). A measurement, not a test: scripts/test
# never runs it; it asserts nothing about speed. Prints a markdown table
# for the README.
#
# On the full-scale assets corpus (tests/gen/make-history --full --only
# assets, cached in $BENCH_DIR) and, when ../shared holds it, git's own
# 2005-2008 history (corpus/git-history-2008.bundle, cloned once), side
# by side and alternating: `migrate analyze --top 0 --json FILE` and
# `git filter-repo --analyze --force`; the best wall time of each and the
# ratio. Both read the whole history and write every blob with its paths.
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate, built if missing), BENCH_REPEAT (default 3),
# BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BENCH_REPEAT="${BENCH_REPEAT:-3}"

bench_setup analyze
: >"$WORK/gitconfig"
export GIT_CONFIG_GLOBAL="$WORK/gitconfig"	# never /dev/null (README: hazards)

# best_of REPO: "migrate-seconds filter-repo-seconds", the best of each
best_of() {
	local repo="$1" i t0 m=999999 f=999999 d
	for ((i = 0; i < BENCH_REPEAT; i++)); do
		t0="$(now)"
		(cd "$repo" && "$MIGRATE" analyze --top 0 --json "$WORK/a.json" >/dev/null)
		d="$(calc "$(now) - $t0")"
		m="$(calc "min($m, $d)")"
		t0="$(now)"
		(cd "$repo" && git filter-repo --analyze --force --report-dir "$WORK/fr" >/dev/null)
		d="$(calc "$(now) - $t0")"
		f="$(calc "min($f, $d)")"
	done
	echo "$m $f"
}

row() {
	local name="$1" repo="$2" m f commits
	read -r m f < <(best_of "$repo")
	commits="$(git -C "$repo" rev-list --all | wc -l)"
	printf '| %s (%s commits) | %.2f s | %.2f s | %.1fx |\n' "$name" "$commits" \
		"$m" "$f" "$(calc "$f / $m")"
}

echo "| repository | migrate analyze | git filter-repo --analyze | ratio |"
echo "|---|---|---|---|"
bench_corpus corpus assets
row "assets, full scale" "$SRC"
BUNDLE="${MIGRATE_SHARED:-$ROOT/../shared}/corpus/git-history-2008.bundle"
if [ -f "$BUNDLE" ]; then
	if [ ! -d "$BENCH_DIR/git2008.git" ]; then
		say "cloning $BUNDLE into $BENCH_DIR/git2008.git (once)"
		git clone -q --mirror "$BUNDLE" "$BENCH_DIR/git2008.git"
	fi
	row "git 2005-2008" "$BENCH_DIR/git2008.git"
fi
