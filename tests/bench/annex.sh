#!/usr/bin/env bash
# tests/bench/annex.sh - large files into git-annex (issue 14) against the
# same files into Git LFS, side by side in one run on the full-scale assets
# corpus. A measurement, not a test. Target: annex within 1.2x of LFS.
#
#   lfs:    git fast-export | migrate --rules '<globs> lfs'   | git fast-import
#   annex:  git fast-export | migrate --rules '<globs> annex' | git fast-import
#
# both into a fresh repository, BENCH_REPEAT times each (default 2),
# alternating. Every result is checked: git lfs fsck, git annex fsck --fast
# --all, and the same contents stored (the SHA-256 of every LFS object is
# the one of a git-annex key).
#
# Environment: BENCH_DIR (default /tmp/migrate-bench), MIGRATE (default
# build/migrate), BENCH_REPEAT, BENCH_HISTORY_OPTIONS (tests/bench/lib.sh).
set -euo pipefail

# shellcheck source=tests/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bench_setup annex
export HOME="$WORK/home"
mkdir -p "$HOME"
git lfs install --skip-repo >/dev/null
git config --global user.name bench
git config --global user.email bench@example.org

bench_corpus corpus assets
GLOBS='*.bin *.psd *.zip *.mp4'
for g in $GLOBS; do echo "$g lfs"; done >"$WORK/lfs.rules"
for g in $GLOBS; do echo "$g annex"; done >"$WORK/annex.rules"
FLAGS=(--all --show-original-ids --signed-tags=verbatim --reencode=no --mark-tags
	--tag-of-filtered-object=drop)
UUID=$(python3 -c 'import uuid; print(uuid.uuid4())')
REPEAT="${BENCH_REPEAT:-2}"

# one KIND I: a fresh repository WORK/KIND.I, its wall time in WORK/KIND.I.t
one() {
	local kind="$1" i="$2" repo="$WORK/$1.$2" t0
	git init -q "$repo"
	sync
	t0=$(now)
	(cd "$SRC" && git fast-export "${FLAGS[@]}" |
		"$MIGRATE" -q --rules "$WORK/$kind.rules" --store "$repo/.git/lfs/objects" \
			--annex-dir "$repo/.git/annex" --annex-uuid "$UUID" |
		git -C "$repo" fast-import --quiet)
	calc "$(now) - $t0" >"$repo.t"
	say "$kind run $i: $(cat "$repo.t") s"
}

for i in $(seq 1 "$REPEAT"); do
	say "run $i of $REPEAT: lfs"
	one lfs "$i"
	say "run $i of $REPEAT: annex"
	one annex "$i"
done

say "checking the results"
L="$WORK/lfs.1" A="$WORK/annex.1"
git -C "$L" symbolic-ref HEAD refs/heads/main
(cd "$L" && git lfs fsck >/dev/null) || { echo "git lfs fsck failed" >&2; exit 1; }
(cd "$A" && git config annex.uuid "$UUID" && git annex init -q >/dev/null 2>&1 &&
	git annex fsck --fast --all >"$WORK/fsck" 2>&1) || { echo "git annex fsck failed" >&2; exit 1; }
! grep -qi 'fixing location log' "$WORK/fsck" || { echo "git annex fsck fixed a location log" >&2; exit 1; }
find "$L/.git/lfs/objects" -type f ! -path "$L/.git/lfs/objects/tmp/*" -printf '%f\n' | sort -u >"$WORK/lfs.sha"
# git-annex stores the empty file too (an empty file is its own LFS pointer)
find "$A/.git/annex/objects" -type f -printf '%f\n' | sed 's/^SHA256E-s[0-9]*--//; s/\..*//' |
	grep -v '^e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855$' |
	sort -u >"$WORK/annex.sha"
diff "$WORK/lfs.sha" "$WORK/annex.sha" >&2 || { echo "the contents stored differ" >&2; exit 1; }
nkeys=$(find "$A/.git/annex/objects" -type f | wc -l)
bytes=$(du -sb "$L/.git/lfs/objects" | cut -f1)

row() { # KIND: the times of every run, and the best
	local kind="$1" all="" best="" t i
	for i in $(seq 1 "$REPEAT"); do
		t=$(cat "$WORK/$kind.$i.t")
		all="$all${all:+, }$(printf %.1f "$t")"
		best=$(calc "min(${best:-$t}, $t)")
	done
	printf '%s|%s\n' "$all" "$best"
}
lfs_row=$(row lfs) annex_row=$(row annex)
lfs_best=${lfs_row#*|} annex_best=${annex_row#*|}

cat <<EOF

git-annex against Git LFS, full-scale assets corpus ($(git -C "$SRC" rev-list --all | wc -l) commits,
$(wc -l <"$WORK/lfs.sha") contents, $(calc "round($bytes / 1e6)") MB; $nkeys git-annex keys), globs $GLOBS,
$REPEAT runs each, alternating:

| pipeline into a new repository | wall s (each run) | best | vs lfs |
|---|---|---|---|
| migrate, lfs rules | ${lfs_row%|*} | $(printf %.1f "$lfs_best") | 1.00× |
| migrate, annex rules | ${annex_row%|*} | $(printf %.1f "$annex_best") | $(calc "round($annex_best / $lfs_best, 2)")× |

Both pass their fsck (git annex fsck --fast --all: no location log fixed)
and store the same contents. Target: annex within 1.2× of lfs.
EOF
