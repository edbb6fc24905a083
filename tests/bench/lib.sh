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

# bench_corpus DIR KIND [OPTION...]: the full-scale KIND (assets or
# tracker) history of tests/gen/make-history --full OPTION... (with
# BENCH_HISTORY_OPTIONS after them), generated once into BENCH_DIR/DIR;
# sets SRC to its repository. The options it was made with are kept in
# DIR/options: other options make it again.
bench_corpus() {
	local corpus="$BENCH_DIR/$1" kind="$2" opts
	shift 2
	opts="--full${*:+ $*} ${BENCH_HISTORY_OPTIONS:-}"
	if [ ! -d "$corpus/$kind" ] || [ "$(cat "$corpus/options" 2>/dev/null)" != "$opts" ]; then
		say "generating the $kind history ($opts) in $corpus (once; minutes)"
		rm -rf "$corpus"
		# shellcheck disable=SC2086 # the options are words
		"$ROOT/tests/gen/make-history" $opts --only "$kind" "$corpus"
		printf '%s\n' "$opts" >"$corpus/options"
	fi
	SRC="$corpus/$kind"
}

# The history of large binaries issue 12 names (few commits, 1-60 MB
# files): the assets kind with 300 commits and binaries of 1 to 60 MB.
BIGBIN_OPTIONS="--assets-commits 300 --assets-bin-min-kb 1000 --assets-bin-max-mb 60"

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

# bench_timed NAME CMD...: runs CMD (a pipeline: bash -c '...') after a
# sync; its wall time goes to WORK/NAME.wall, the peak RSS of each of its
# processes to WORK/NAME.rss (tests/bench/peak_rss.py --tree; the
# looking costs ~0.1 s of CPU a second).
bench_timed() {
	local name="$1"
	shift
	sync
	"$BENCH_PYTHON" "$ROOT/tests/bench/peak_rss.py" --tree "$WORK/$name.rss" \
		--wall "$WORK/$name.wall" "$@"
}
# the system's python: a version manager's shim (pyenv) takes seconds
# to start on a loaded machine
BENCH_PYTHON=python3
[ ! -x /usr/bin/python3 ] || BENCH_PYTHON=/usr/bin/python3

# bench_wall NAME: the wall time bench_timed measured, one decimal.
bench_wall() { printf %.1f "$(cat "$WORK/$1.wall")"; }

# bench_rss NAME: "git fast-import 90, migrate 27, ..., 6 others <= 4"
# (MiB, largest first) of what bench_timed saw of NAME's processes: the
# small ones (git rev-parse, update-ref, ...) counted, not named.
bench_rss() {
	awk '{ mib = int(($1 + 512) / 1024); $1 = ""; sub(/^ /, "") }
		mib > 4 { printf "%s%s %d", (n++ ? ", " : ""), $0, mib; next }
		{ small++; top = mib > top ? mib : top }
		END { if (small) printf "%s%d other%s %s %d", (n ? ", " : ""), small, (small > 1 ? "s" : ""), (top ? "<=" : "<"), (top ? top : 1) }' \
		"$WORK/$1.rss"
}

# bench_load: the load average now (1, 5, 15 minutes).
bench_load() { cut -d' ' -f1-3 /proc/loadavg; }
