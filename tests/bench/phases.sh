#!/usr/bin/env bash
# tests/bench/phases.sh - does every phase of `migrate run` keep a core's
# worth of CPU busy (issue 29: "no phase of a run leaves a core idle for
# more than half its wall time")? The phases after the stream last a few
# milliseconds, and one run of them says little: each job runs
# BENCH_REPEAT times (default 3), each from a fresh mirror clone and the
# same page cache (bench_warm), its phases timed by tests/bench/peak_rss.py
# --phases. With MIGRATE_BEFORE (another build), the two builds run one
# after the other, run by run, so that both see the same machine.
# A measurement, not a test.
#
# Jobs (arguments; default all eight), each in place and with --to:
#   drop-in drop-to        gitk dropped from git's history to v1.6.0
#                          (../shared/corpus/git-history-2008.bundle;
#                          skipped when it is not there)
#   lfs-in lfs-to          the assets corpus into Git LFS (lfs.sh's globs)
#   split-in split-to      the tracker's record file split per year (split.sh)
#   replace-in replace-to  the tracker's text replaced (replace.sh)
#
# Prints a table: per job and phase, the wall milliseconds of the runs, the
# cores each kept busy (its CPU over its wall), and in brackets the cores
# of all its runs together; one pair of columns per build. Each job's
# runs need their own clone and about as long as the job takes in its own
# script (seconds; the drop's clone of git's history, the longest).
#
# Environment: BENCH_DIR, MIGRATE, BENCH_HISTORY_OPTIONS (tests/bench/lib.sh),
# BENCH_REPEAT, MIGRATE_BEFORE, MIGRATE_SHARED (the shared folder, default
# ../shared next to the repository).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPEAT="${BENCH_REPEAT:-3}"
JOBS=("$@")
[ ${#JOBS[@]} -gt 0 ] || JOBS=(drop-in drop-to lfs-in lfs-to split-in split-to replace-in replace-to)
BUILDS=("$MIGRATE")
[ -z "${MIGRATE_BEFORE:-}" ] || BUILDS=("$MIGRATE_BEFORE" "$MIGRATE")
for b in "${BUILDS[@]}"; do
	[ -x "$b" ] || { echo "phases.sh: $b is not an executable" >&2; exit 2; }
done

bench_setup phases
bench_git_lfs
BUNDLE="${MIGRATE_SHARED:-$ROOT/../shared}/corpus/git-history-2008.bundle"

# source JOB: SRC and RULES for the job's history and rules (each made once)
source_of() {
	case "$1" in
	drop-*)
		SRC="$WORK/git2008.git"
		[ -d "$SRC" ] || git clone -q --mirror "$BUNDLE" "$SRC"
		RULES="$WORK/drop.rules"
		printf '/gitk  drop\n' >"$RULES" ;;
	lfs-*)
		bench_corpus corpus assets
		RULES="$WORK/lfs.rules"
		bench_rules_lfs "$RULES" ;;
	split-*)
		bench_corpus tcorpus tracker --tracker-initial-mb 0.5 --tracker-final-mb 4.5
		RULES="$WORK/split.rules"
		bench_rules_split "$RULES" ;;
	replace-*)
		bench_corpus tcorpus tracker --tracker-initial-mb 0.5 --tracker-final-mb 4.5
		RULES="$WORK/replace.rules"
		bench_rules_replace "$RULES" "$WORK/exprs.txt" ;;
	*)
		echo "phases.sh: no job $1 (drop-in drop-to lfs-in lfs-to split-in split-to replace-in replace-to)" >&2
		exit 2 ;;
	esac
}

# one JOB BUILD-INDEX RUN: the job once with that build; its phases as
# "job build run phase wall cpu" lines in WORK/all.tsv
one() {
	local job="$1" b="$2" k="$3" r="$WORK/run"
	local -a where
	rm -rf "$r" "$WORK/new"
	git clone -q --mirror "$SRC" "$r"
	where=(--in-place)
	[ "${job##*-}" = in ] || where=(--to "$WORK/new")
	bench_timed_phases one "${BUILDS[$b]}" run --progress --rules "$RULES" --repo "$r" "${where[@]}" \
		>/dev/null 2>"$WORK/one.err" ||
		{ cat "$WORK/one.err" >&2; exit 1; }
	awk -v job="$job" -v b="$b" -v k="$k" 'NR > 1 { printf "%s\t%s\t%s\t%s\t%.6f\t%.6f\n", job, b, k, n, $1 - t, $2 - u }
		{ t = $1; u = $2; $1 = ""; $2 = ""; n = substr($0, 3) }' "$WORK/one.phases" >>"$WORK/all.tsv"
}

: >"$WORK/all.tsv"
load0=$(bench_load)
for job in "${JOBS[@]}"; do
	if [ "${job%%-*}" = drop ] && [ ! -e "$BUNDLE" ]; then
		say "$job: SKIPPED, $BUNDLE is not there"
		continue
	fi
	source_of "$job"
	for ((k = 1; k <= REPEAT; k++)); do
		for b in "${!BUILDS[@]}"; do
			say "$job, run $k of $REPEAT, ${BUILDS[$b]}"
			one "$job" "$b" "$k"
		done
	done
done

echo
echo "Phases of \`migrate run\`, $REPEAT run(s) of each job and build one after the"
echo "other, measured $(date +%F) on $(nproc) cores, load average $load0 before,"
echo "$(bench_load) after; builds: $(for b in "${BUILDS[@]}"; do printf '%s (%s) ' "$b" "$("$b" --version)"; done)"
# a kernel that packs tasks onto few virtual cores (this project's machine:
# sched_vcpu_pack) starts a new thread or process on its parent's core,
# the other idle until the next balance, a tick later: a phase of a few
# milliseconds may run on one core whatever it starts
if [ -r /proc/sys/kernel/sched_vcpu_pack ]; then
	echo "(the kernel packs tasks onto few cores: sched_vcpu_pack $(cat /proc/sys/kernel/sched_vcpu_pack))"
fi
echo
"$BENCH_PYTHON" - "$WORK/all.tsv" "${#BUILDS[@]}" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
nb = int(sys.argv[2])
table = {}
for job, b, k, phase, wall, cpu in rows:
    if phase == "start":
        phase = "the stream"
    table.setdefault((job, phase), [[] for _ in range(nb)])[int(b)].append((float(wall), float(cpu)))
heads = ["build before", "this build"] if nb == 2 else ["this build"]
print("| job | phase | " + " | ".join("%s: ms | %s: cores (all runs)" % (h, h) for h in heads) + " |")
print("|---|---|" + "---|---|" * nb)
def span(lo, hi, fmt):
    a, b = fmt % lo, fmt % hi
    return a if a == b else a + "-" + b
low = [0] * nb
for (job, phase), per in table.items():
    cells = []
    for i, runs in enumerate(per):
        if not runs:
            cells += ["", ""]
            continue
        ms = [w * 1000 for w, c in runs]
        cores = [c / w if w > 0 else 0 for w, c in runs]
        if phase != "the stream":
            low[i] += sum(1 for x in cores if x < 1)
        together = sum(c for w, c in runs) / sum(w for w, c in runs)
        cells += [span(min(ms), max(ms), "%.0f"), "%s (%.2f)" % (span(min(cores), max(cores), "%.2f"), together)]
    print("| %s | %s | %s |" % (job, phase, " | ".join(cells)))
print()
for i, h in enumerate(heads):
    n = sum(len(per[i]) for (job, phase), per in table.items() if phase != "the stream")
    print("%s: %d of %d phases after the stream under 1.00 core." % (h.capitalize(), low[i], n))
EOF
