#!/usr/bin/env bash
# made_trees.sh - in `migrate run`, the trees the rules make are stored by
# the filter's writer thread (as deltas against the version of the same
# directory they were made from), and each commit names its root tree by
# id: git fast-import writes the commits and no tree (issue 29, item 3).
# git fast-import stays the oracle: fed the plain filter's stream (the
# commits' changes), it builds every tree itself, and the run must give
# the very same refs and commit map. On the tricky repository (merges, an
# octopus, a notes ref, a gitlink, a symlink, tree-order corner cases,
# directories replaced by files), with rules that drop a file at the root
# and one two directories down:
#  - run --to and run --in-place give the manual pipeline's refs and map,
#    and `git fsck --strict` is clean;
#  - fast-import's pack holds no tree but those of the notes commits
#    (whose changes go as they are: fast-import counts notes for its
#    fanout);
#  - the trees the run stored are new ones (none the source had), and
#    most of them are deltas (`git verify-pack -v`).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

SRC="$SCRATCH/tricky"
bash "$HERE/make_tricky_repo.sh" "$SRC" >/dev/null 2>&1 || die "make_tricky_repo.sh failed"
# more versions of one deep directory, so that its trees make chains
(
	cd "$SRC"
	git checkout -q main
	for i in $(seq 1 12); do
		echo "v$i" >"deep/a/b/c.txt"
		echo "w$i" >"deep/a/w$i.txt"
		git add -A && git commit -q -m "deep $i"
	done
)
cat >"$SCRATCH/rules" <<'RULES'
/data.bin        drop
/deep/a/w3.txt   drop
RULES

test_case "the manual pipeline: fast-import builds every tree" <<'EOF'
plain_pipeline "$SRC" "$SCRATCH/rules" manual
! grep -q '^M 040000 ' "$SCRATCH/manual.fi" || die "the plain filter named a tree by id"
EOF

# trees_in PACKDIR EXCLUDE: "id delta|whole" for each tree in the packs of
# PACKDIR not listed in the file EXCLUDE (the packs there before)
trees_in() {
	local idx
	for idx in "$1"/*.idx; do
		grep -qxF "$idx" "$2" && continue
		git verify-pack -v "$idx" | awk '$2 == "tree" && NF >= 5 { print $1, (NF >= 7 ? "delta" : "whole") }'
	done
}

# check_trees REPO BEFORE: the trees the run stored, and fast-import's
# (the objects of a pack with commits in it, or loose: fast-import
# loosens a pack of fewer than 100 objects; the source had none loose)
check_trees() {
	local repo="$1" before="$2" idx
	local od="$repo/objects"
	: >"$SCRATCH/fi.objects"
	for idx in "$od"/pack/*.idx; do
		grep -qxF "$idx" "$before" && continue
		if git verify-pack -v "$idx" | awk '$2 == "commit" { f = 1 } END { exit !f }'; then
			git verify-pack -v "$idx" | awk 'NF >= 5 { print $1 }' >>"$SCRATCH/fi.objects"
			echo "$idx" >>"$before"
		fi
	done
	find "$od" -path "$od/pack" -prune -o -path "$od/info" -prune -o -type f -print |
		sed 's|.*/objects/\(..\)/|\1|' >>"$SCRATCH/fi.objects"
	[ -s "$SCRATCH/fi.objects" ] || die "no object of fast-import's"
	git -C "$repo" cat-file --batch-check='%(objecttype) %(objectname)' <"$SCRATCH/fi.objects" |
		awk '$1 == "tree" { print $2 }' | sort >"$SCRATCH/fi.trees"
	git -C "$repo" cat-file --batch-check='%(objecttype) %(objectname)' <"$SCRATCH/fi.objects" |
		awk '$1 == "commit" { f = 1 } END { exit !f }' || die "fast-import's objects hold no commit"
	git -C "$repo" rev-list --objects refs/notes/commits | awk '{ print $1 }' | sort >"$SCRATCH/notes.objects"
	[ -z "$(comm -23 "$SCRATCH/fi.trees" "$SCRATCH/notes.objects")" ] ||
		die "fast-import wrote trees outside the notes: $(comm -23 "$SCRATCH/fi.trees" "$SCRATCH/notes.objects" | head -3)"
	trees_in "$od/pack" "$before" | sort -u >"$SCRATCH/ours"
	n=$(wc -l <"$SCRATCH/ours")
	[ "$n" -ge 20 ] || die "only $n trees in the run's own packs"
	# (git takes the empty tree for granted, stored or not)
	while read -r id how; do
		[ "$id" = 4b825dc642cb6eb9a060e54bf8d69288fbee4904 ] && continue
		! git -C "$SRC" cat-file -e "$id" 2>/dev/null || die "tree $id, which the source has, was stored again"
	done <"$SCRATCH/ours"
	deltas=$(grep -c ' delta$' "$SCRATCH/ours" || true)
	[ "$deltas" -ge $((n / 2)) ] || die "only $deltas of $n trees are deltas"
	info "$n trees stored by the run, $deltas as deltas; fast-import wrote $(wc -l <"$SCRATCH/fi.trees") (notes)"
}

test_case "run --to: the manual pipeline's commits; trees by the run" <<'EOF'
run_migrate run -q --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/new" ||
	die "the run failed"
diff -u "$SCRATCH/manual.refs" <(refs_of "$SCRATCH/new") || die "other refs than the manual pipeline"
diff -u <(sort "$SCRATCH/manual.map") <(sort "$SCRATCH/new/.git/migrate/commit-map") ||
	die "another commit map than the manual pipeline"
git -C "$SCRATCH/new" fsck --no-progress --strict 2>&1 | grep -v -e '^dangling' -e '^warning in tag' &&
	die "git fsck complains" || true
# --to repacks the new repository: its trees were judged before, in a
# second run that keeps the packs as written (in place)
EOF

test_case "run --in-place: the same; fast-import writes no tree" <<'EOF'
git clone -q --mirror --no-local "$SRC" "$SCRATCH/ip.git"	# packed, none loose
ls "$SCRATCH/ip.git/objects/pack/"*.idx >"$SCRATCH/before" 2>/dev/null || : >"$SCRATCH/before"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$SCRATCH/ip.git" --in-place ||
	die "the in-place run failed"
diff -u "$SCRATCH/manual.refs" <(refs_of "$SCRATCH/ip.git" | grep -v ' refs/migrate/original/') ||
	die "in place: other refs than the manual pipeline"
git -C "$SCRATCH/ip.git" fsck --no-progress --strict 2>&1 | grep -v -e '^dangling' -e '^warning in tag' &&
	die "git fsck complains" || true
check_trees "$SCRATCH/ip.git" "$SCRATCH/before"
EOF

test_case "an lfs run: the .gitattributes it writes go to the writer too" <<'EOF'
# no commit carries inline data: fast-import writes commits (and tags)
# only, not a tree, not a blob
git clone -q --mirror --no-local "$SRC" "$SCRATCH/lfs.git"
ls "$SCRATCH/lfs.git/objects/pack/"*.idx >"$SCRATCH/lfs.before"
printf '*.bin lfs\n*.txt lfs\n' >"$SCRATCH/lfs.rules"
run_migrate run -q --rules "$SCRATCH/lfs.rules" --repo "$SCRATCH/lfs.git" --in-place ||
	die "the lfs run failed"
git -C "$SCRATCH/lfs.git" fsck --no-progress --strict 2>&1 | grep -v -e '^dangling' -e '^warning in tag' &&
	die "git fsck complains" || true
git -C "$SCRATCH/lfs.git" show main:.gitattributes | grep -q 'filter=lfs' || die "no .gitattributes on main"
check_trees "$SCRATCH/lfs.git" "$SCRATCH/lfs.before"
git -C "$SCRATCH/lfs.git" cat-file --batch-check='%(objecttype) %(objectname)' <"$SCRATCH/fi.objects" |
	awk '$1 == "blob" { print $2 }' >"$SCRATCH/fi.blobs"
[ ! -s "$SCRATCH/fi.blobs" ] || die "fast-import wrote blobs: $(head -3 "$SCRATCH/fi.blobs")"
EOF

test_case "in place, the writer's packs of many trees are joined into one, beside fast-import's end" <<'EOF'
# a root of 2,000 files changed at each of 200 commits: about 15 MB of
# trees, which the writer seals in several packs as they grow (so that
# fast-import takes the stream beside the run); joined once the stream
# ended, the run leaves two packs, fast-import's and the writer's, and
# the manual pipeline's refs
git init -q "$SCRATCH/wide"
python3 - <<'PY' | git -C "$SCRATCH/wide" fast-import --quiet
import sys
w = sys.stdout.buffer.write
def data(b):
    w(b'data %d\n' % len(b) + b + b'\n')
for c in range(200):
    w(b'commit refs/heads/main\ncommitter T <t@x> %d +0000\n' % (1500000000 + c))
    data(b'c%d' % c)
    files = range(2000) if c == 0 else [c * 7 % 2000]
    for f in files:
        w(b'M 100644 inline f%04d\n' % f)
        data(b'file %d at %d\n' % (f, c))
PY
git clone -q --mirror --no-local "$SCRATCH/wide" "$SCRATCH/wide.git"
printf '/f0001 drop\n' >"$SCRATCH/wide.rules"
ls "$SCRATCH/wide.git/objects/pack/"*.pack >"$SCRATCH/wide.before"
run_migrate run -q --rules "$SCRATCH/wide.rules" --repo "$SCRATCH/wide.git" --in-place ||
	die "the in-place run failed"
ls "$SCRATCH/wide.git/objects/pack/"*.pack >"$SCRATCH/wide.after"
new=$(comm -13 "$SCRATCH/wide.before" "$SCRATCH/wide.after" | wc -l)
[ "$new" -eq 2 ] || die "the run left $new packs of its own, not 2 (fast-import's, the writer's)"
[ -z "$(find "$SCRATCH/wide.git/objects/pack" -name 'tmp_*')" ] ||
	die "left: $(find "$SCRATCH/wide.git/objects/pack" -name 'tmp_*' | head -3)"
git -C "$SCRATCH/wide.git" fsck --no-progress --strict 2>&1 | grep -v '^dangling' &&
	die "git fsck complains" || true
git init -q "$SCRATCH/wide.manual"
export_stream "$SCRATCH/wide" | run_migrate --rules "$SCRATCH/wide.rules" --source-repo "$SCRATCH/wide" |
	import_stream "$SCRATCH/wide.manual" "$SCRATCH/wide.marks" || die "manual pipeline failed"
diff -u <(refs_of "$SCRATCH/wide.manual") <(refs_of "$SCRATCH/wide.git" | grep -v ' refs/migrate/original/') ||
	die "other refs than the manual pipeline"
info "200 commits of 2,000 files: the run left 2 packs of its own"
EOF

test_case "a commit left with no file names the empty tree, stored" <<'EOF'
# git reads the empty tree without its object, git fsck does not
git init -q "$SCRATCH/e"
(
	cd "$SCRATCH/e"
	echo a >a && echo b >big.bin && git add -A && git commit -q -m one
	git rm -q a && git commit -q -m two
	echo c >c && git add c && git commit -q -m three
)
git clone -q --mirror --no-local "$SCRATCH/e" "$SCRATCH/e.git"
printf '*.bin drop\n/c drop\n' >"$SCRATCH/e.rules"
run_migrate run -q --no-prune-empty --rules "$SCRATCH/e.rules" --repo "$SCRATCH/e.git" --in-place ||
	die "the run failed"
[ "$(git -C "$SCRATCH/e.git" rev-parse 'main^{tree}')" = 4b825dc642cb6eb9a060e54bf8d69288fbee4904 ] ||
	die "main's tree is not the empty tree"
git -C "$SCRATCH/e.git" fsck --strict --no-dangling >"$SCRATCH/e.fsck" 2>&1 ||
	die "git fsck: $(head -3 "$SCRATCH/e.fsck")"
EOF

test_done
