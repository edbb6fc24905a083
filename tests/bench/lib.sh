# tests/bench/lib.sh - what the benchmark scripts share: the project's
# paths and build, a scratch folder under BENCH_DIR, the cached full-scale
# corpora, and small timing helpers. Sourced, never run.
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate, built if missing), MIGRATE_SHARED (the shared/ folder).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
SHARED="${MIGRATE_SHARED:-$ROOT/../shared}"
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

# bench_corpus DIR KIND: the full-scale KIND (assets or tracker) corpus of
# make-corpus, generated once into BENCH_DIR/DIR; sets SRC to its repository.
bench_corpus() {
	local corpus="$BENCH_DIR/$1"

	if [ ! -d "$corpus/$2" ]; then
		say "generating the full-scale $2 corpus in $corpus (once; minutes)"
		rm -rf "$corpus"
		"$SHARED/corpus/make-corpus" --only "$2" "$corpus"
	fi
	SRC="$corpus/$2"
}
