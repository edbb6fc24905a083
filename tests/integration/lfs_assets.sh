#!/usr/bin/env bash
# lfs_assets.sh - large files out of history into Git LFS, judged by git-lfs.
#
# The small assets corpus goes through `migrate --rules` into a fresh
# repository. Then, with git-lfs as the judge:
#  - ids: migrate's marks, commit map and ref map equal fast-import's;
#  - `git lfs fsck` passes;
#  - every branch and tag, checked out with git-lfs smudging, equals the
#    original at that ref byte for byte, and `git status` is clean;
#  - `git check-attr filter` says lfs for exactly the LFS files of the ref
#    (plus empty files a rule names: an empty file is its own pointer);
#  - which paths become LFS files equals what `git lfs migrate import`
#    makes of the same patterns;
#  - a second run over the result changes nothing.
. "$(dirname "$0")/lib.sh"
. "$HERE/lfs_lib.sh"

"$SHARED/corpus/make-corpus" --small --only assets "$SCRATCH/corpus" >/dev/null
ORIG="$SCRATCH/corpus/assets"
export_stream "$ORIG" >"$SCRATCH/in.fe"

cat >"$SCRATCH/rules" <<'EOF'
# binaries by extension, archives only when big
/vendor/keep.bin    keep
*.bin               lfs
*.psd               lfs
*.mp4               lfs
*.zip  size>=1MB    lfs
EOF

NEW="$SCRATCH/new"
git init -q "$NEW"
(cd "$ORIG" && run_migrate --rules "$SCRATCH/rules" \
	--store "$NEW/.git/lfs/objects" --commit-map "$SCRATCH/M" \
	--ref-map "$SCRATCH/R" --export-marks "$SCRATCH/MM") \
	<"$SCRATCH/in.fe" >"$SCRATCH/out.fi" || die "migrate failed"
import_stream "$NEW" "$SCRATCH/X" <"$SCRATCH/out.fi" || die "fast-import failed"
check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" "$NEW"

git -C "$NEW" symbolic-ref HEAD refs/heads/main
(cd "$NEW" && git lfs install --local >/dev/null && git lfs fsck >/dev/null) ||
	die "git lfs fsck failed"
nlfs=$(git -C "$NEW" lfs ls-files --all --name-only | sort -u | wc -l)
[ "$nlfs" -gt 0 ] || die "no LFS files at all"
info "git lfs fsck ok; $nlfs distinct LFS paths in all history"
[ "$(du -sk "$NEW/.git/objects" | cut -f1)" -lt "$(du -sk "$ORIG/.git/objects" | cut -f1)" ] ||
	die "history did not shrink"

check_ref_checkouts "$ORIG" "$NEW"

# the oracle for which paths convert: git lfs migrate with the glob rules
LM="$SCRATCH/lfs-migrate"
git clone -q --mirror "$ORIG" "$LM/.git" && git -C "$LM" config core.bare false
(cd "$LM" && git lfs migrate import --everything --yes \
	--include='*.bin,*.psd,*.mp4' --exclude='/vendor/keep.bin' >/dev/null 2>&1) ||
	die "git lfs migrate import failed"
printf '*.bin lfs\n*.psd lfs\n*.mp4 lfs\n' >"$SCRATCH/globs"
NEW2="$SCRATCH/new2"
git init -q "$NEW2"
(cd "$ORIG" && run_migrate --rules "$SCRATCH/globs" --store "$NEW2/.git/lfs/objects") \
	<"$SCRATCH/in.fe" | git -C "$NEW2" fast-import --quiet || die "glob run failed"
git -C "$LM" lfs ls-files --all --name-only | sort -u >"$SCRATCH/lm.names"
git -C "$NEW2" lfs ls-files --all --name-only | sort -u >"$SCRATCH/ours.names"
diff -u "$SCRATCH/lm.names" "$SCRATCH/ours.names" ||
	die "the paths converted differ from git lfs migrate's"
info "same $(wc -l <"$SCRATCH/lm.names") LFS paths as git lfs migrate import"

# a second run over the converted history changes nothing
export_stream "$NEW" >"$SCRATCH/again.fe"
(cd "$NEW" && run_migrate --rules "$SCRATCH/rules" --store "$NEW/.git/lfs/objects" \
	--ref-map "$SCRATCH/R2") <"$SCRATCH/again.fe" >/dev/null || die "second run failed"
awk '$1 != $2' "$SCRATCH/R2" >"$SCRATCH/R2.changed"
[ ! -s "$SCRATCH/R2.changed" ] ||
	die "a second run changed refs: $(head -3 "$SCRATCH/R2.changed")"
info "a second run changes nothing"
echo "lfs_assets: ok"
