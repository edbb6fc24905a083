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
. "$(dirname "$0")/lib/lib.sh"
. "$HERE/lfs_lib.sh"

make_history --only assets "$SCRATCH/corpus"
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

test_case "migrate's marks, commit map and ref map are the ids fast-import gives" <<'EOF'
(cd "$ORIG" && run_migrate --rules "$SCRATCH/rules" \
	--store "$NEW/.git/lfs/objects" --commit-map "$SCRATCH/M" \
	--ref-map "$SCRATCH/R" --export-marks "$SCRATCH/MM") \
	<"$SCRATCH/in.fe" >"$SCRATCH/out.fi" || die "migrate failed"
import_stream "$NEW" "$SCRATCH/X" <"$SCRATCH/out.fi" || die "fast-import failed"
check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" "$NEW"
EOF

# the cases below judge NEW, the repository the case above made
test_case "git lfs fsck passes, there are LFS files, and the history shrank" <<'EOF'
git -C "$NEW" symbolic-ref HEAD refs/heads/main
(cd "$NEW" && git lfs install --local >/dev/null && git lfs fsck >/dev/null) ||
	die "git lfs fsck failed"
nlfs=$(git -C "$NEW" lfs ls-files --all --name-only | sort -u | wc -l)
[ "$nlfs" -gt 0 ] || die "no LFS files at all"
info "git lfs fsck ok; $nlfs distinct LFS paths in all history"
[ "$(du -sk "$NEW/.git/objects" | cut -f1)" -lt "$(du -sk "$ORIG/.git/objects" | cut -f1)" ] ||
	die "history did not shrink"
EOF

test_case "every branch and tag checks out (smudged) as the original, byte for byte, status clean, check-attr exact" <<'EOF'
[ -n "$(git -C "$NEW" lfs ls-files --all --name-only)" ] ||
	die "the new repository has no LFS file (the first case failed): nothing to judge"
check_ref_checkouts "$ORIG" "$NEW"
EOF

# the peer: git lfs migrate import with the same globs must give the same
# converted (commit, path) pairs, the same pointer blobs and the same root
# .gitattributes per commit. The one documented difference: migrate adds
# "!filter" lines for files a glob names that are not LFS files (here a
# symlink named *.psd), so that check-attr is exact; they are removed
# before comparing.
LM="$SCRATCH/lfs-migrate"
git clone -q --mirror "$ORIG" "$LM/.git" && git -C "$LM" config core.bare false
(cd "$LM" && git lfs migrate import --everything --yes \
	--include='*.bin,*.psd,*.mp4' --object-map="$SCRATCH/lm.map" >/dev/null 2>&1) ||
	die "git lfs migrate import failed"

test_case "the same converted paths, pointers and .gitattributes per commit as git lfs migrate import" <<'EOF'
printf '*.bin lfs\n*.psd lfs\n*.mp4 lfs\n' >"$SCRATCH/globs"
NEW2="$SCRATCH/new2"
git init -q "$NEW2"
(cd "$ORIG" && run_migrate --rules "$SCRATCH/globs" --store "$NEW2/.git/lfs/objects" \
	--commit-map "$SCRATCH/M2") <"$SCRATCH/in.fe" |
	git -C "$NEW2" fast-import --quiet || die "glob run failed"
python3 - "$SCRATCH/M2" "$SCRATCH/lm.map" "$NEW2" "$LM" <<'PY' || die "migrate and git lfs migrate disagree"
import subprocess, sys
ours_map, lm_map, ours_repo, lm_repo = sys.argv[1:5]
ours = dict(l.split() for l in open(ours_map).read().splitlines()[1:])
theirs = dict(l.split(",") for l in open(lm_map).read().splitlines() if l)
def tree(repo, c):
    out = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--full-tree", c],
                         capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    return out.splitlines()
def attrs(repo, c):
    r = subprocess.run(["git", "-C", repo, "cat-file", "-p", c + ":.gitattributes"],
                       capture_output=True)
    return r.stdout.decode() if r.returncode == 0 else None
same_ids = pairs = 0
for old, new in ours.items():
    lm = theirs.get(old, old)
    a = [l for l in tree(ours_repo, new) if not l.endswith("\t.gitattributes")]
    b = [l for l in tree(lm_repo, lm) if not l.endswith("\t.gitattributes")]
    if a != b:
        print("commit %s: trees differ:\n  %s" % (old, "\n  ".join(sorted(set(a) ^ set(b))[:6])))
        sys.exit(1)
    pairs += sum(1 for l in a if " blob " in l)
    ga = attrs(ours_repo, new)
    ga = None if ga is None else "".join(l + "\n" for l in ga.splitlines() if "!filter" not in l)
    gb = attrs(lm_repo, lm)
    if ga != gb:
        print("commit %s: .gitattributes differ:\n%r\n%r" % (old, ga, gb))
        sys.exit(1)
    same_ids += new == lm
print("info: %d commits, %d (commit, path) pairs identical to git lfs migrate's; "
      "%d commit ids identical" % (len(ours), pairs, same_ids))
PY
git -C "$LM" lfs ls-files --all --name-only | sort -u >"$SCRATCH/lm.names"
git -C "$NEW2" lfs ls-files --all --name-only | sort -u >"$SCRATCH/ours.names"
diff -u "$SCRATCH/lm.names" "$SCRATCH/ours.names" ||
	die "the paths converted differ from git lfs migrate's"
info "same $(wc -l <"$SCRATCH/lm.names") LFS paths as git lfs migrate import"
EOF

test_case "a second run over the converted history changes nothing" <<'EOF'
# a second run over the converted history changes nothing
export_stream "$NEW" >"$SCRATCH/again.fe"
(cd "$NEW" && run_migrate --rules "$SCRATCH/rules" --store "$NEW/.git/lfs/objects" \
	--ref-map "$SCRATCH/R2") <"$SCRATCH/again.fe" >/dev/null || die "second run failed"
awk '$1 != $2' "$SCRATCH/R2" >"$SCRATCH/R2.changed"
[ ! -s "$SCRATCH/R2.changed" ] ||
	die "a second run changed refs: $(head -3 "$SCRATCH/R2.changed")"
info "a second run changes nothing"
EOF

test_done
