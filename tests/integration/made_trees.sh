#!/usr/bin/env bash
# made_trees.sh - in `migrate run`, the trees the rules make are stored by
# the filter's writer thread (as deltas against the version of the same
# directory they were made from), and the commits too (whole): git
# fast-import never hears of them, and writes tags and the stream's other
# objects only (issue 29, item 3). git fast-import stays the oracle: fed
# the plain filter's stream (the commits' changes), it builds every tree
# and commit itself, and the run must give the very same refs and commit
# map. On the tricky repository (merges, an octopus, a notes ref, a
# gitlink, a symlink, tree-order corner cases, directories replaced by
# files), with rules that drop a file at the root and one two directories
# down:
#  - run --to and run --in-place give the manual pipeline's refs and map,
#    and `git fsck --strict` is clean;
#  - fast-import wrote no tree and no commit outside the notes;
#  - every new commit is in the run's packs; the trees the run stored are
#    new ones (none the source had), and most of them are deltas
#    (`git verify-pack -v`);
#  - the writer's packs are joined into one when there are two, and a
#    drop of many trees leaves one pack of the run's and nothing of
#    fast-import's.
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

# objects_of IDXLIST: "id type delta|whole" for each object of the packs
# whose .idx files IDXLIST lists
objects_of() {
	local idx
	while read -r idx; do
		git verify-pack -v "$idx" |
			awk 'NF >= 5 && $2 != "chain" { print $1, $2, (NF >= 7 ? "delta" : "whole") }'
	done <"$1"
}

# check_objects REPO BEFORE: what fast-import wrote and what the run
# wrote itself. fast-import's: the objects of a new pack that holds one
# of its marks (migrate/import-marks), and the loose ones (it loosens a
# pack of fewer than 100 objects; the source had none loose); the run's:
# the other new packs.
check_objects() {
	local repo="$1" before="$2" idx
	local od="$repo/objects"
	cut -d' ' -f2 "$repo/migrate/import-marks" | sort >"$SCRATCH/fi.marked"
	: >"$SCRATCH/fi.idx"
	: >"$SCRATCH/ours.idx"
	for idx in "$od"/pack/*.idx; do
		grep -qxF "$idx" "$before" && continue
		# into a file: a `| grep -q` here could end the pipeline by
		# SIGPIPE (pipefail) and call fast-import's pack the run's
		git verify-pack -v "$idx" | awk 'NF >= 5 { print $1 }' | sort |
			comm -12 - "$SCRATCH/fi.marked" >"$SCRATCH/fi.in"
		if [ -s "$SCRATCH/fi.in" ]; then
			echo "$idx" >>"$SCRATCH/fi.idx"
		else
			echo "$idx" >>"$SCRATCH/ours.idx"
		fi
	done
	[ -s "$SCRATCH/ours.idx" ] || die "no pack of the run's"
	{
		objects_of "$SCRATCH/fi.idx" | cut -d' ' -f1
		find "$od" -path "$od/pack" -prune -o -path "$od/info" -prune -o -type f -print |
			sed 's|.*/objects/\(..\)/|\1|'
	} >"$SCRATCH/fi.objects"
	git -C "$repo" cat-file --batch-check='%(objecttype) %(objectname)' <"$SCRATCH/fi.objects" |
		sort -u >"$SCRATCH/fi.typed"
	git -C "$repo" rev-list --objects refs/notes/commits | awk '{ print $1 }' | sort >"$SCRATCH/notes.objects"
	for type in tree commit; do
		awk -v t=$type '$1 == t { print $2 }' "$SCRATCH/fi.typed" | sort >"$SCRATCH/fi.$type"
		[ -z "$(comm -23 "$SCRATCH/fi.$type" "$SCRATCH/notes.objects")" ] ||
			die "fast-import wrote ${type}s outside the notes: $(comm -23 "$SCRATCH/fi.$type" "$SCRATCH/notes.objects" | head -3)"
	done
	objects_of "$SCRATCH/ours.idx" | sort -u >"$SCRATCH/ours"
	# every new commit of the branches and tags is one the run wrote
	git -C "$repo" rev-list --branches --tags | sort >"$SCRATCH/commits"
	git -C "$SRC" rev-list --all | sort >"$SCRATCH/src.commits"
	awk '$2 == "commit" { print $1 }' "$SCRATCH/ours" | sort >"$SCRATCH/ours.commits"
	comm -23 "$SCRATCH/commits" "$SCRATCH/src.commits" >"$SCRATCH/new.commits"
	[ -s "$SCRATCH/new.commits" ] || die "the run made no new commit"
	[ -z "$(comm -23 "$SCRATCH/new.commits" "$SCRATCH/ours.commits")" ] ||
		die "new commits not in the run's packs: $(comm -23 "$SCRATCH/new.commits" "$SCRATCH/ours.commits" | head -3)"
	awk '$2 == "tree" { print $1, $3 }' "$SCRATCH/ours" >"$SCRATCH/ours.trees"
	n=$(wc -l <"$SCRATCH/ours.trees")
	[ "$n" -ge 20 ] || die "only $n trees in the run's own packs"
	# (git takes the empty tree for granted, stored or not)
	while read -r id how; do
		[ "$id" = 4b825dc642cb6eb9a060e54bf8d69288fbee4904 ] && continue
		! git -C "$SRC" cat-file -e "$id" 2>/dev/null || die "tree $id, which the source has, was stored again"
	done <"$SCRATCH/ours.trees"
	deltas=$(grep -c ' delta$' "$SCRATCH/ours.trees" || true)
	[ "$deltas" -ge $((n / 2)) ] || die "only $deltas of $n trees are deltas"
	info "the run stored $n trees ($deltas as deltas) and $(wc -l <"$SCRATCH/ours.commits") commits; fast-import wrote $(wc -l <"$SCRATCH/fi.tree") trees and $(wc -l <"$SCRATCH/fi.commit") commits (notes only)"
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

test_case "run --in-place: the same; fast-import writes no tree, no commit but the notes'" <<'EOF'
git clone -q --mirror --no-local "$SRC" "$SCRATCH/ip.git"	# packed, none loose
ls "$SCRATCH/ip.git/objects/pack/"*.idx >"$SCRATCH/before" 2>/dev/null || : >"$SCRATCH/before"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$SCRATCH/ip.git" --in-place ||
	die "the in-place run failed"
diff -u "$SCRATCH/manual.refs" <(refs_of "$SCRATCH/ip.git" | grep -v ' refs/migrate/original/') ||
	die "in place: other refs than the manual pipeline"
git -C "$SCRATCH/ip.git" fsck --no-progress --strict 2>&1 | grep -v -e '^dangling' -e '^warning in tag' &&
	die "git fsck complains" || true
check_objects "$SCRATCH/ip.git" "$SCRATCH/before"
EOF

test_case "an lfs run: the .gitattributes it writes go to the writer too" <<'EOF'
# no commit carries inline data: fast-import writes tags only, not a
# commit, not a tree, not a blob
git clone -q --mirror --no-local "$SRC" "$SCRATCH/lfs.git"
ls "$SCRATCH/lfs.git/objects/pack/"*.idx >"$SCRATCH/lfs.before"
printf '*.bin lfs\n*.txt lfs\n' >"$SCRATCH/lfs.rules"
run_migrate run -q --rules "$SCRATCH/lfs.rules" --repo "$SCRATCH/lfs.git" --in-place ||
	die "the lfs run failed"
git -C "$SCRATCH/lfs.git" fsck --no-progress --strict 2>&1 | grep -v -e '^dangling' -e '^warning in tag' &&
	die "git fsck complains" || true
git -C "$SCRATCH/lfs.git" show main:.gitattributes | grep -q 'filter=lfs' || die "no .gitattributes on main"
check_objects "$SCRATCH/lfs.git" "$SCRATCH/lfs.before"
git -C "$SCRATCH/lfs.git" cat-file --batch-check='%(objecttype) %(objectname)' <"$SCRATCH/fi.objects" |
	awk '$1 == "blob" { print $2 }' >"$SCRATCH/fi.blobs"
[ ! -s "$SCRATCH/fi.blobs" ] || die "fast-import wrote blobs: $(head -3 "$SCRATCH/fi.blobs")"
EOF

test_case "in place, a blob the run stored read back: two packs of the writer's, joined into one" <<'EOF'
# replace-text turns a.txt's "foo" into "bar": the writer stores that
# blob; the next commit adds b.txt with the very same bytes, which the
# rules read (from the source) while the writer still holds its id: its
# pack gets its name first (made_settle), and what follows goes into a
# second pack. Once the stream ended, git pack-objects joins the two.
git init -q "$SCRATCH/rb"
(
	cd "$SCRATCH/rb"
	echo foo >a.txt && echo x >c.txt && git add -A && git commit -q -m one
	echo bar >b.txt && git add b.txt && git commit -q -m two
	for i in 1 2 3; do echo "y$i" >c.txt && git commit -q -a -m "three $i"; done
)
git clone -q --mirror --no-local "$SCRATCH/rb" "$SCRATCH/rb.git"
printf 'foo==>bar\n' >"$SCRATCH/rb.exprs"
printf '* replace-text=%s\n' "$SCRATCH/rb.exprs" >"$SCRATCH/rb.rules"
plain_pipeline "$SCRATCH/rb" "$SCRATCH/rb.rules" rb.manual
ls "$SCRATCH/rb.git/objects/pack/"*.pack >"$SCRATCH/rb.before"
GIT_TRACE="$SCRATCH/rb.trace" run_migrate run -q --rules "$SCRATCH/rb.rules" \
	--repo "$SCRATCH/rb.git" --in-place || die "the in-place run failed"
grep -q 'pack-objects.*tmp_migrate_join' "$SCRATCH/rb.trace" ||
	die "no git pack-objects joined the writer's packs"
ls "$SCRATCH/rb.git/objects/pack/"*.pack >"$SCRATCH/rb.after"
new=$(comm -13 "$SCRATCH/rb.before" "$SCRATCH/rb.after" | wc -l)
[ "$new" -eq 1 ] || die "the run left $new packs of its own, not 1 (the joined one)"
[ -z "$(find "$SCRATCH/rb.git/objects/pack" -name 'tmp_*')" ] ||
	die "left: $(find "$SCRATCH/rb.git/objects/pack" -name 'tmp_*' | head -3)"
git -C "$SCRATCH/rb.git" fsck --no-progress --strict 2>&1 | grep -v '^dangling' &&
	die "git fsck complains" || true
diff -u "$SCRATCH/rb.manual.refs" <(refs_of "$SCRATCH/rb.git" | grep -v ' refs/migrate/original/') ||
	die "other refs than the manual pipeline"
[ "$(git -C "$SCRATCH/rb.git" show main:a.txt)" = bar ] || die "a.txt was not replaced"
EOF

test_case "a drop of many trees, nothing for fast-import to do: one pack of the run's, nothing to join" <<'EOF'
# a root of 2,000 files changed at each of 200 commits: about 15 MB of
# trees and 200 commits, all written by the run into one pack; fast-import
# writes nothing (no tag), and the manual pipeline gives the same refs
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
plain_pipeline "$SCRATCH/wide" "$SCRATCH/wide.rules" wide.manual
ls "$SCRATCH/wide.git/objects/pack/"*.pack >"$SCRATCH/wide.before"
GIT_TRACE="$SCRATCH/wide.trace" run_migrate run -q --rules "$SCRATCH/wide.rules" \
	--repo "$SCRATCH/wide.git" --in-place || die "the in-place run failed"
! grep -q 'pack-objects.*tmp_migrate_join' "$SCRATCH/wide.trace" || die "a join ran"
ls "$SCRATCH/wide.git/objects/pack/"*.pack >"$SCRATCH/wide.after"
new=$(comm -13 "$SCRATCH/wide.before" "$SCRATCH/wide.after" | wc -l)
[ "$new" -eq 1 ] || die "the run left $new packs of its own, not 1"
[ ! -s "$SCRATCH/wide.git/migrate/import-marks" ] ||
	die "fast-import marked objects: $(head -3 "$SCRATCH/wide.git/migrate/import-marks")"
git -C "$SCRATCH/wide.git" fsck --no-progress --strict 2>&1 | grep -v '^dangling' &&
	die "git fsck complains" || true
diff -u "$SCRATCH/wide.manual.refs" <(refs_of "$SCRATCH/wide.git" | grep -v ' refs/migrate/original/') ||
	die "other refs than the manual pipeline"
n=$(git -C "$SCRATCH/wide.git" verify-pack -v "$(comm -13 "$SCRATCH/wide.before" "$SCRATCH/wide.after" | sed 's/\.pack$/.idx/')" |
	awk '$2 == "commit"' | wc -l)
[ "$n" -eq 200 ] || die "the run's pack holds $n commits, not 200"
info "200 commits of 2,000 files: one pack of the run's, with the 200 commits; fast-import wrote nothing"
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
