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

# bench_warm: every pipeline starts from the same page cache: a sync, the
# cache dropped where we may (root: /proc/sys/vm/drop_caches), then SRC's
# packs read into it. Without it, a pipeline that follows one writing
# several GB pays for the reclaim of that cache: writing the LFS store of
# the assets corpus then took 3.5 s of CPU in copy_folio_from_iter (perf)
# where it takes under 1 s.
bench_warm() {
	local d
	sync
	if [ -w /proc/sys/vm/drop_caches ]; then
		echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
	fi
	[ -n "${SRC:-}" ] || return 0
	for d in "$SRC/.git/objects/pack" "$SRC/objects/pack"; do
		[ -d "$d" ] && cat "$d"/* >/dev/null 2>&1 || true
	done
}

# bench_timed NAME CMD...: runs CMD (a pipeline: bash -c '...') after
# bench_warm; its wall time goes to WORK/NAME.wall, the peak RSS of each of its
# processes to WORK/NAME.rss (tests/bench/peak_rss.py --tree; the
# looking costs ~0.1 s of CPU a second).
bench_timed() {
	local name="$1"
	shift
	bench_warm
	"$BENCH_PYTHON" "$ROOT/tests/bench/peak_rss.py" --tree "$WORK/$name.rss" \
		--wall "$WORK/$name.wall" "$@"
}

# bench_timed_phases NAME CMD...: bench_timed, and also the CPU time of
# CMD's whole process tree (WORK/NAME.cpu, "user sys") and its phases
# (WORK/NAME.phases: peak_rss.py --phases; CMD's stderr goes through it).
bench_timed_phases() {
	local name="$1"
	shift
	bench_warm
	"$BENCH_PYTHON" "$ROOT/tests/bench/peak_rss.py" --tree "$WORK/$name.rss" \
		--wall "$WORK/$name.wall" --cpu "$WORK/$name.cpu" --phases "$WORK/$name.phases" "$@"
}

# bench_cores NAME: the CPU time of NAME's processes over its wall time
# (bench_timed_phases), two decimals: how many cores it kept busy.
bench_cores() {
	awk -v w="$(cat "$WORK/$1.wall")" '{ printf "%.2f", ($1 + $2) / w }' "$WORK/$1.cpu"
}

# bench_cpu_each NAME: "migrate 120.3, git fast-import 30.1, ..." (CPU
# seconds, largest first, those of 0.5 s and more) of NAME's processes
# (bench_timed_phases).
bench_cpu_each() {
	awk '$1 >= 0.5 { c = $1; $1 = ""; printf "%s%s %.1f", (n++ ? ", " : ""), substr($0, 2), c }' \
		"$WORK/$1.cpu.each"
}

# bench_phase_rows NAME [FIRST]: a markdown row per phase of NAME
# (bench_timed_phases): its name (FIRST for the one before the first
# phase line, default "start"), wall seconds, share of the run, CPU
# seconds and CPU / wall.
bench_phase_rows() {
	awk -v first="${2:-start}" 'NR == 1 { $3 = first } NR > 1 { d = $1 - t; c = $2 - u
			printf "| %s | %.3f | %d %% | %.3f | %.2f |\n", n, d, (T > 0 ? 100 * d / T : 0), c, (d > 0 ? c / d : 0) }
		{ t = $1; u = $2; $1 = ""; $2 = ""; n = substr($0, 3) }' T="$(tail -1 "$WORK/$1.phases" | cut -d' ' -f1)" \
		"$WORK/$1.phases"
}

# bench_phase_runs RUN:LABEL...: each RUN's rows of a phases table,
# labelled LABEL, its stream first
bench_phase_runs() {
	local run
	for run in "$@"; do
		bench_phase_rows "${run%%:*}" "the stream (fast-export, migrate, fast-import)" |
			sed "s/^/| ${run#*:} /"
	done
}

# bench_phase_head: the phases table's head
bench_phase_head() {
	echo '| run | phase | wall s | share | CPU s | CPU / wall |'
	echo '|---|---|---|---|---|---|'
}

# bench_phase_table RUN:LABEL...: the phases table of a run against git
# filter-repo (named peer, its rewrite before "now repacking/cleaning"),
# then each RUN's rows (bench_phase_runs)
bench_phase_table() {
	echo 'Phases (`migrate run --progress`; filter-repo'"'"'s "now repacking/cleaning" line):'
	echo
	bench_phase_head
	bench_phase_rows peer "the rewrite (fast-export, filter-repo, fast-import)" | sed 's/^/| filter-repo /'
	bench_phase_runs "$@"
}

# The globs of the LFS benches (lfs.sh's peer takes them as its
# --include), and bench_rules_lfs FILE: the rule file converting them.
BENCH_LFS_GLOBS='*.bin,*.psd,*.zip,*.mp4'
bench_rules_lfs() {
	tr ',' '\n' <<<"$BENCH_LFS_GLOBS" | sed 's/$/ lfs/' >"$1"
}

# bench_rules_split FILE: the per-year split of the tracker's record
# file (split.sh, phases.sh).
bench_rules_split() {
	cat >"$1" <<'EOF'
data/CVE/list  split  record='^CVE-(\d{4})-'  into='data/CVE/list.{1}'  head='data/CVE/list.head'
EOF
}

# bench_rules_replace RULES EXPRS: filter-repo's expressions (one literal,
# one regex, both changing every version of the tracker's record file)
# into EXPRS, and the rule file that applies them to every path into
# RULES (replace.sh, phases.sh).
bench_rules_replace() {
	cat >"$2" <<'EOF'
bugs.example.org==>bugs.example.net
regex:NOTE: https://([a-z.]+)/(\d+)==>NOTE: <https://\1/\2>
EOF
	printf '*  replace-text=%s\n' "$2" >"$1"
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

# bench_sizes NAME...: for each pipeline NAME (its repository WORK/NAME,
# or WORK/NAME/.git when it has a work tree), the KiB of its objects as
# left (obj[NAME]), then after git repack -a -d -f (rp[NAME]) and that
# repack's seconds (rpt[NAME]).
declare -A obj rp rpt
bench_kib() { du -sk "$1" | cut -f1; }
bench_mib() { calc "round($1 / 1024, 1)"; }
bench_sizes() {
	local r o t0
	for r in "$@"; do
		o="$WORK/$r/objects"
		[ -d "$o" ] || o="$WORK/$r/.git/objects"
		obj[$r]=$(bench_kib "$o")
		t0=$(now)
		git -C "$WORK/$r" repack -a -d -f -q
		rpt[$r]=$(calc "round($(now) - $t0)")
		rp[$r]=$(bench_kib "$o")
	done
}

# bench_peer_row NAME LABEL: a table row of pipeline NAME against the
# peer's (WORK/peer.wall): wall, speed-up, CPU, cores busy, CPU of each
# process, objects as left and after git repack -a -d -f (bench_sizes),
# peak RSS.
bench_peer_row() {
	printf '| %s | %s | %s× | %s | %s | %s | %s MiB | %s MiB (%s s) | %s |\n' "$2" "$(bench_wall "$1")" \
		"$(calc "round($(cat "$WORK/peer.wall") / $(cat "$WORK/$1.wall"), 2)")" \
		"$(awk '{ printf "%.1f", $1 + $2 }' "$WORK/$1.cpu")" "$(bench_cores "$1")" \
		"$(bench_cpu_each "$1")" "$(bench_mib "${obj[$1]}")" "$(bench_mib "${rp[$1]}")" "${rpt[$1]}" \
		"$(bench_rss "$1")"
}
