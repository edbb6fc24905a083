# tests/bench/lib.sh - what the benchmark scripts share: the project's
# paths and build, a scratch folder under BENCH_DIR, the cached full-scale
# corpora, and small timing helpers. Sourced, never run.
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate, built if missing), BENCH_HISTORY_OPTIONS (extra options of
# tests/gen/make-history, e.g. "--assets-commits 1000"; default: --full).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
BENCH_DIR="${BENCH_DIR:-/tmp/migrate-bench}"
MIGRATE="${MIGRATE:-$ROOT/build/migrate}"

now() { date +%s.%N; }
calc() { python3 -c "print($1)"; }
say() { printf '==> %s\n' "$*" >&2; }

# bench_setup NAME: packages, the binary, git's environment, and WORK, a
# scratch folder BENCH_DIR/NAME.XXXXXX removed on exit.
bench_setup() {
	install_packages
	[ -x "$MIGRATE" ] || build_release
	export GIT_CONFIG_NOSYSTEM=1 LC_ALL=C
	mkdir -p "$BENCH_DIR"
	WORK="$(mktemp -d "$BENCH_DIR/$1.XXXXXX")"
	trap 'rm -rf "$WORK"' EXIT
}

# bench_corpus DIR KIND: the full-scale KIND (assets or tracker) history of
# tests/gen/make-history --full (with BENCH_HISTORY_OPTIONS after it),
# generated once into BENCH_DIR/DIR; sets SRC to its repository. The
# options it was made with are kept in DIR/options: other options make it
# again.
bench_corpus() {
	local corpus="$BENCH_DIR/$1" opts
	opts="--full ${BENCH_HISTORY_OPTIONS:-}"
	if [ ! -d "$corpus/$2" ] || [ "$(cat "$corpus/options" 2>/dev/null)" != "$opts" ]; then
		say "generating the $2 history ($opts) in $corpus (once; minutes)"
		rm -rf "$corpus"
		# shellcheck disable=SC2086 # the options are words
		"$ROOT/tests/gen/make-history" $opts --only "$2" "$corpus"
		printf '%s\n' "$opts" >"$corpus/options"
	fi
	SRC="$corpus/$2"
}

# bench_git_lfs: git-lfs set up in a HOME of WORK's own.
bench_git_lfs() {
	export HOME="$WORK/home"
	mkdir -p "$HOME"
	git lfs install --skip-repo >/dev/null
}

# bench_mirror DIR: a mirror clone of SRC with a work tree at DIR (what
# git lfs migrate and an in-place conversion rewrite).
bench_mirror() {
	git clone -q --mirror "$SRC" "$1/.git" && git -C "$1" config core.bare false
}
