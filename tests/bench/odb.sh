#!/usr/bin/env bash
# tests/bench/odb.sh - issue 13: migrate's own object reader and its second
# thread on the LFS conversion in place, side by side in one run on the
# full-scale assets corpus. A measurement, not a test.
#
#   peer:        git lfs migrate import --everything --include=GLOBS
#   git, 1 thr:  fast-export --no-data | migrate --object-reader=git --threads=1 | fast-import --force
#   native, 1:   ... migrate --object-reader=native --threads=1 ...
#   native, 2:   ... migrate (defaults: native reader, threads = CPU count) ...
#   run:         migrate run --in-place (the one command; defaults)
#   bare limit:  the converted blobs' bytes read once from the packs (git
#                cat-file --batch), SHA-256'd and written to files (python3's
#                hashlib, OpenSSL's SHA-256): what any conversion must do
#
# Each migrate run is in a fresh mirror clone; its wall time is the
# pipeline's, its CPU (user+sys) migrate's own process (/usr/bin/time;
# for run, migrate's and its children's), and
# CPU / wall says how much more than one core it kept busy. The converted
# paths are checked against the peer's, and every store passes git lfs fsck.
#
# Environment: BENCH_DIR, MIGRATE, BENCH_HISTORY_OPTIONS (tests/bench/lib.sh);
# BENCH_PEER=0 skips the peer (its time then shows as "-").
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup odb
load0=$(cut -d' ' -f1-3 /proc/loadavg)
bench_git_lfs

bench_corpus corpus assets
GLOBS='*.bin,*.psd,*.zip,*.mp4'
tr ',' '\n' <<<"$GLOBS" | sed 's/$/ lfs/' >"$WORK/rules"
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=rewrite)


t_peer=-
if [ "${BENCH_PEER:-1}" != 0 ]; then
	say "peer: git lfs migrate import --everything"
	bench_mirror "$WORK/peer"
	sync
	t0=$(now)
	(cd "$WORK/peer" && git lfs migrate import --everything --yes --include="$GLOBS" >/dev/null 2>&1)
	t_peer=$(calc "$(now) - $t0")
	git -C "$WORK/peer" lfs ls-files --all --name-only | sort -u >"$WORK/peer.names"
fi

# inplace NAME MIGRATE-OPTIONS...: sets t_NAME, cpu_NAME
inplace() {
	local name="$1" t0
	shift
	say "migrate in place ($name): $*"
	bench_mirror "$WORK/$name"
	sync
	t0=$(now)
	(cd "$WORK/$name" &&
		git fast-export --no-data "${FLAGS[@]}" |
		/usr/bin/time -f '%U %S' -o "$WORK/$name.cpu" "$MIGRATE" --rules "$WORK/rules" "$@" |
		GLIBC_TUNABLES=$IMPORT_TUNABLES git fast-import --quiet --force)
	printf -v "t_$name" %s "$(calc "$(now) - $t0")"
	printf -v "cpu_$name" %s "$(calc "$(tr ' ' '+' <"$WORK/$name.cpu")")"
	(cd "$WORK/$name" && git lfs fsck >/dev/null) || { echo "git lfs fsck failed in $name" >&2; exit 1; }
	git -C "$WORK/$name" lfs ls-files --all --name-only | sort -u >"$WORK/$name.names"
	if [ -f "$WORK/peer.names" ]; then
		cmp -s "$WORK/peer.names" "$WORK/$name.names" ||
			{ echo "$name: the converted paths differ from the peer's" >&2; exit 1; }
	fi
	rm -rf "$WORK/$name"	# its store: the page cache is for the next run
}
# git fast-import with glibc's heap top kept, as migrate run starts it
# (rewrite/run/pipeline.c import_env)
IMPORT_TUNABLES=glibc.malloc.trim_threshold=134217728
inplace git --object-reader=git --threads=1
inplace native1 --object-reader=native --threads=1
inplace native2

say "migrate run --in-place (a bare mirror)"
git clone -q --mirror "$SRC" "$WORK/run"
sync
t0=$(now)
/usr/bin/time -f '%U %S' -o "$WORK/run.cpu" "$MIGRATE" run --rules "$WORK/rules" \
	--repo "$WORK/run" --in-place -q
t_run=$(calc "$(now) - $t0")
cpu_run=$(calc "$(tr ' ' '+' <"$WORK/run.cpu")")
(cd "$WORK/run" && git lfs fsck >/dev/null) || { echo "git lfs fsck failed in run" >&2; exit 1; }
git -C "$WORK/run" lfs ls-files --all --name-only | sort -u >"$WORK/run.names"
if [ -f "$WORK/peer.names" ]; then
	cmp -s "$WORK/peer.names" "$WORK/run.names" ||
		{ echo "run: the converted paths differ from the peer's" >&2; exit 1; }
fi
rm -rf "$WORK/run"

say "bare limit: read the converted blobs once, SHA-256, write files"
git -C "$SRC" rev-list --objects --all |
	grep -E '\.(bin|psd|zip|mp4)$' | cut -d' ' -f1 | sort -u |
	git -C "$SRC" cat-file --batch-check='%(objectname) %(objecttype) %(objectsize)' |
	awk '$2 == "blob" && $3 > 0 { print $1 }' >"$WORK/bare.ids"
mkdir -p "$WORK/bare"
sync
t0=$(now)
git -C "$SRC" cat-file --batch <"$WORK/bare.ids" | python3 -c '
import hashlib, os, sys
out, inp = sys.argv[1], sys.stdin.buffer
while True:
    head = inp.readline()
    if not head:
        break
    size = int(head.split()[2])
    h = hashlib.sha256()
    tmp = os.path.join(out, "tmp")
    with open(tmp, "wb") as f:
        left = size
        while left:
            chunk = inp.read(min(left, 1 << 20))
            h.update(chunk)
            f.write(chunk)
            left -= len(chunk)
    inp.read(1)
    os.rename(tmp, os.path.join(out, h.hexdigest()))
' "$WORK/bare"
t_bare=$(calc "$(now) - $t0")
nbare=$(wc -l <"$WORK/bare.ids")
bytes=$(du -sb "$WORK/bare" | cut -f1)

ratio() { [ "$1" = - ] && echo - || calc "round($1 / $2, 1)"; }
cat <<EOT

LFS conversion in place, full-scale assets corpus ($(git -C "$SRC" rev-list --all | wc -l) commits,
$nbare converted blobs, $(calc "round($bytes / 1e6)") MB), globs $GLOBS, $(nproc) CPUs,
load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end:

| pipeline | wall s | git lfs migrate / it | it / bare limit | migrate CPU s (user+sys) | CPU / wall |
|---|---|---|---|---|---|
| git lfs migrate import --everything | $( [ "$t_peer" = - ] && echo - || printf %.1f "$t_peer") | 1.0× | | | |
| migrate, git cat-file, 1 thread | $(printf %.1f "$t_git") | $(ratio "$t_peer" "$t_git")× | $(calc "round($t_git / $t_bare, 2)")× | $(printf %.2f "$cpu_git") | $(calc "round(100 * $cpu_git / $t_git)") % |
| migrate, native reader, 1 thread | $(printf %.1f "$t_native1") | $(ratio "$t_peer" "$t_native1")× | $(calc "round($t_native1 / $t_bare, 2)")× | $(printf %.2f "$cpu_native1") | $(calc "round(100 * $cpu_native1 / $t_native1)") % |
| migrate, native reader, 2 threads (default) | $(printf %.1f "$t_native2") | $(ratio "$t_peer" "$t_native2")× | $(calc "round($t_native2 / $t_bare, 2)")× | $(printf %.2f "$cpu_native2") | $(calc "round(100 * $cpu_native2 / $t_native2)") % |
| \`migrate run --in-place\` (defaults) | $(printf %.1f "$t_run") | $(ratio "$t_peer" "$t_run")× | $(calc "round($t_run / $t_bare, 2)")× | $(printf %.2f "$cpu_run") (with children) | $(calc "round(100 * $cpu_run / $t_run)") % |
| bare limit (cat-file, SHA-256, write) | $(printf %.1f "$t_bare") | | 1.00× | | |

Targets (issue 13): git lfs migrate / migrate >= 10x, migrate / bare limit <= 2x,
migrate's CPU / wall > 100 %. Every store passes git lfs fsck, same paths as the peer.
EOT
