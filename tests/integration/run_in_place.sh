#!/usr/bin/env bash
# run_in_place.sh - `migrate run --in-place` on a clone of the assets corpus.
#
# A dirty work tree is refused. Then: every ref before the run is kept
# under refs/migrate/original/, the rewritten refs equal those of a run
# --to a new directory from the same source, the work tree is clean and
# holds the new HEAD (LFS content smudged back), and the state is in the
# repository's own git dir. A failing run (a rule file that does not
# parse, and a failing fast-import) leaves every ref as it was. RESET.md's
# commands to reclaim the space, run as written, drop the backups and
# shrink the pack, and the state still verifies. A run with other rules
# is refused, pointing to RESET.md, whose commands for a copy of the
# original history give one that converts as the source does; --restart
# converts in place from refs/migrate/original/ with the other rules (the
# refs then equal a conversion of the source), and refuses to drop local
# work.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/lfs_lib.sh
. "$HERE/lfs_lib.sh"

make_history --only assets "$SCRATCH/corpus"
SRC="$SCRATCH/corpus/assets"
printf '*.bin lfs\n*.psd lfs\n' >"$SCRATCH/rules"
REPO="$SCRATCH/repo"
clone_refs "$SRC" "$REPO"
refs_of "$REPO" >"$SCRATCH/before.refs"

test_case "refusal: a dirty work tree" <<'EOF'
# the other files' times no longer those the index holds: the check only
# looks (a `git status` that writes the refreshed index back takes
# index.lock, which a run killed there leaves to block the next one)
git -C "$REPO" ls-files -z | (cd "$REPO" && xargs -0 touch -h -d '2020-01-01 00:00')
echo "local edit" >>"$REPO/README.md"
cp "$REPO/.git/index" "$SCRATCH/index.before"
expect_refusal --what "a dirty work tree" --says 'uncommitted' \
	-- "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$REPO" --in-place -q
cmp -s "$SCRATCH/index.before" "$REPO/.git/index" || die "the work tree check wrote the index"
cmp -s "$SCRATCH/before.refs" <(refs_of "$REPO") || die "refused run changed refs"
git -C "$REPO" checkout -q -- README.md
EOF

test_case "refusal: failures leave the refs as they were" <<'EOF'
printf '*.bin lfs size>>3\n' >"$SCRATCH/bad.rules"
expect_refusal --what "a bad rule file" \
	-- "$MIGRATE" run --rules "$SCRATCH/bad.rules" --repo "$REPO" --in-place -q
diff -u "$SCRATCH/before.refs" <(refs_of "$REPO" | grep -v ' refs/migrate/') ||
	die "a failed run (rules) changed refs"
# the ref transaction fails at the end: a ref it must move is locked (by
# someone else: no journal, so the lock is not ours to remove)
ls "$REPO/.git/objects/pack" >"$SCRATCH/packs.before"
: >"$REPO/.git/refs/heads/main.lock"
expect_refusal --what "a failing ref transaction" --status 3 --says 'main.lock' --says 'update-ref' \
	-- "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$REPO" --in-place -q
[ -e "$REPO/.git/refs/heads/main.lock" ] || die "someone else's main.lock was removed"
rm -f "$REPO/.git/refs/heads/main.lock"
diff -u "$SCRATCH/before.refs" <(refs_of "$REPO") ||
	die "a failed run (ref transaction) moved refs (or wrote backups)"
[ -z "$(git -C "$REPO" status --porcelain)" ] || die "a failed run changed the work tree"
[ ! -e "$REPO/.git/migrate/journal" ] || die "a failed transaction left its journal"
[ ! -e "$REPO/.git/migrate/commit-map" ] || die "a failed run wrote the commit map"
info "refused: dirty work tree (1), bad rules (1), locked ref (3, no ref moved)"
EOF

test_case "the run (over the keep file a killed fast-import leaves)" <<'EOF'
# fast-import marks its pack with pack-<hash>.keep holding "fast-import" and
# removes it at its end; killed before, it leaves it, and the next run's
# fast-import, writing a pack of the same name from the same stream, dies on
# it ("cannot create keep file"). The failed run above wrote that pack.
pack=$(ls "$REPO/.git/objects/pack" | comm -13 "$SCRATCH/packs.before" - | grep '\.pack$' | head -1 || true)
if [ -z "$pack" ]; then
	# the run writes the commits itself: fast-import wrote a few tags,
	# loose; a pack of one commit stands for the one it would have left
	pack="pack-$(git -C "$REPO" rev-parse HEAD |
		git -C "$REPO" pack-objects -q .git/objects/pack/pack).pack"
fi
[ -e "$REPO/.git/objects/pack/$pack" ] || die "no pack $pack for fast-import's keep file"
printf 'fast-import' >"$REPO/.git/objects/pack/${pack%.pack}.keep"
printf 'kept by hand\n' >"$SCRATCH/own.keep"
own=$(ls "$REPO/.git/objects/pack" | grep '\.pack$' | grep -v "$pack" | head -1)
[ -n "$own" ] || die "no other pack in $REPO"
cp "$SCRATCH/own.keep" "$REPO/.git/objects/pack/${own%.pack}.keep"

run_migrate run --rules "$SCRATCH/rules" --repo "$REPO" --to "$SCRATCH/reference" -q ||
	die "the reference run --to failed"
run_migrate run --rules "$SCRATCH/rules" --repo "$REPO" --in-place -q ||
	die "migrate run --in-place failed"
[ ! -e "$REPO/.git/objects/pack/${pack%.pack}.keep" ] ||
	die "the keep file a killed fast-import left is still there"
cmp -s "$SCRATCH/own.keep" "$REPO/.git/objects/pack/${own%.pack}.keep" ||
	die "a keep file that is not fast-import's was touched"
rm -f "$REPO/.git/objects/pack/${own%.pack}.keep"
info "a killed fast-import's keep file removed at the next start, another kept"
# the backups: every ref as it was
git -C "$REPO" for-each-ref --format='%(objectname) %(refname)' refs/migrate/original/ |
	sed 's# refs/migrate/original/# #' | sort >"$SCRATCH/backup.refs"
diff -u "$SCRATCH/before.refs" "$SCRATCH/backup.refs" ||
	die "refs/migrate/original/ does not hold every ref as it was"
# the rewritten refs: as a run into a new repository gives them
diff -u <(refs_of "$SCRATCH/reference") <(refs_of "$REPO" | grep -v ' refs/migrate/') ||
	die "the refs rewritten in place differ from a run --to"
[ -z "$(git -C "$REPO" status --porcelain --untracked-files=no)" ] ||
	die "the work tree is not clean after the run: $(git -C "$REPO" status --porcelain | head -3)"
[ "$(git -C "$REPO" rev-parse HEAD)" = "$(git -C "$SCRATCH/reference" rev-parse HEAD)" ] ||
	die "HEAD is not the new HEAD"
git -C "$REPO" cat-file -p HEAD:assets/textures/hero.psd | grep -q '^version https://git-lfs' ||
	die "hero.psd is not an LFS pointer after the run"
cmp "$SRC/assets/textures/hero.psd" "$REPO/assets/textures/hero.psd" ||
	die "the checked-out hero.psd is not the original content"
for f in commit-map ref-map marks import-marks tips RESET.md report.txt report.json; do
	[ -e "$REPO/.git/migrate/$f" ] || die "state file $f missing"
done
grep -q '^    migrate push ' "$REPO/.git/migrate/RESET.md" || die "RESET.md lacks migrate push"
[ -d "$REPO/.git/lfs/objects" ] || die "no LFS store in the repository's git dir"
run_migrate run --repo "$REPO" --in-place --verify-only -q || die "--verify-only fails after the run"
info "in place: $(wc -l <"$SCRATCH/before.refs") refs backed up and rewritten as --to does, clean work tree"
EOF

test_case "other rules after an in-place run: refused; the message's commands work" <<'EOF'
printf '*.bin lfs\n' >"$SCRATCH/rules.other"
expect_refusal --what "other rules in place" --says 'not those of the last run' \
	--says "RESET.md gives the commands" \
	-- "$MIGRATE" run --rules "$SCRATCH/rules.other" --repo "$REPO" --in-place
# the commands RESET.md gives, as written (ORIG filled in), but the run
cmds=$(sed -n '/^## Converting again with other rules/,/^## /{/^    git /s/^    //p}' "$REPO/.git/migrate/RESET.md")
[ "$(wc -l <<<"$cmds")" = 3 ] || die "RESET.md gives no commands for the original history: $cmds"
(cd "$SCRATCH" && eval "${cmds//ORIG/orig.git}") || die "RESET.md's commands failed: $cmds"
run_migrate run --rules "$SCRATCH/rules.other" --repo "$SCRATCH/orig.git" --to "$SCRATCH/again" -q ||
	die "a run --to from the original history failed"
run_migrate run --rules "$SCRATCH/rules.other" --repo "$SRC" --to "$SCRATCH/again-ref" -q ||
	die "the reference run with the other rules failed"
diff -u <(refs_of "$SCRATCH/again-ref" | grep -v ' refs/migrate/') \
	<(refs_of "$SCRATCH/again" | grep -v ' refs/migrate/') >&2 ||
	die "from the original history the message points to: other refs than from the source"
info "other rules in place: refused (1); the commands RESET.md gives copy the original history, which converts as the source does"
EOF

test_case "--restart: the other rules in place, from refs/migrate/original/" <<'EOF'
R2="$SCRATCH/restart"
cp -a "$REPO" "$R2"
refs_of "$R2" | grep ' refs/migrate/original/' >"$SCRATCH/orig.before"
cp "$R2/.git/migrate/commit-map" "$SCRATCH/map.before-restart"
restart() { "$MIGRATE" run --rules "$SCRATCH/rules.other" --repo "$R2" --in-place --restart -q "$@"; }
refused() {	# refused WHAT PATTERN: --restart exits 1 saying PATTERN, no ref moves
	expect_refusal --what "--restart over $1" --says "$2" --refs-unchanged "$R2" -- restart
}
# a branch with a commit the run did not write (local work), then the same
# converted by a later run: either would be dropped from the branch
b=$(git -C "$R2" for-each-ref --format='%(refname)' refs/heads/ | grep -v '/main$' | head -1)
was=$(git -C "$R2" rev-parse "$b")
git -C "$R2" update-ref "$b" "$(git -C "$R2" commit-tree -p "$was" -m "local work" "$was^{tree}")"
refused "local work" "$b is not the conversion of its backup"
run_migrate run --rules "$SCRATCH/rules" --repo "$R2" --in-place -q || die "the run of the local work failed"
refused "converted local work" "$b is not the conversion of its backup"
git -C "$R2" update-ref "$b" "$was"
# a branch grown on the rewritten history, backed up by a later run
git -C "$R2" update-ref refs/heads/grown "$(git -C "$R2" commit-tree -p main -m grown 'main^{tree}')"
run_migrate run --rules "$SCRATCH/rules" --repo "$R2" --in-place -q || die "the run of grown failed"
refused "a backup of rewritten history" "holds $(git -C "$R2" rev-parse main)"
git -C "$R2" update-ref -d refs/heads/grown
git -C "$R2" update-ref -d refs/migrate/original/refs/heads/grown
# a preview changes nothing
refs_of "$R2" >"$SCRATCH/r2.refs"
ls "$R2/.git/migrate" >"$SCRATCH/r2.state"
restart --dry-run 2>/dev/null || die "--restart --dry-run failed"
diff -u "$SCRATCH/r2.refs" <(refs_of "$R2") >&2 || die "--restart --dry-run moved refs"
ls "$R2/.git/migrate" | diff -u "$SCRATCH/r2.state" - >&2 || die "--restart --dry-run wrote state"
# a branch deleted since the run is not made again
gone=$(git -C "$R2" for-each-ref --format='%(refname)' refs/heads/ | grep -v '/main$' | tail -1)
git -C "$R2" update-ref -d "$gone"
old_main=$(git -C "$R2" rev-parse main)
restart || die "--restart failed"
! git -C "$R2" rev-parse -q --verify "$gone" >/dev/null || die "--restart made $gone again"
git -C "$SCRATCH/again-ref" update-ref -d "$gone"	# as the comparison below expects
diff -u <(refs_of "$SCRATCH/again-ref" | grep -v ' refs/migrate/') \
	<(refs_of "$R2" | grep -v ' refs/migrate/') >&2 ||
	die "--restart: other refs than a conversion of the source with those rules"
diff -u "$SCRATCH/orig.before" <(refs_of "$R2" | grep ' refs/migrate/original/') >&2 ||
	die "--restart changed the backups of the original refs"
grep -q "^$old_main $(git -C "$R2" rev-parse main)$" "$R2/.git/migrate/commit-map.from-previous" ||
	die "--restart: commit-map.from-previous does not map the old main to the new"
grep -q "commit-map.from-previous" "$R2/.git/migrate/RESET.md" || die "RESET.md does not name the map for the old clones"
[ -s "$R2/.git/migrate/before-restart/commit-map" ] || die "--restart did not keep the old commit map"
[ -z "$(git -C "$R2" status --porcelain)" ] || die "--restart: the work tree is not clean"
[ "$(git -C "$R2" rev-parse 'HEAD^{tree}')" = "$(git -C "$SCRATCH/again-ref" rev-parse 'HEAD^{tree}')" ] ||
	die "--restart: the work tree's HEAD is not the new one"
run_migrate run --repo "$R2" --in-place --verify-only -q || die "--verify-only fails after --restart"
run_migrate run --rules "$SCRATCH/rules.other" --repo "$R2" --in-place 2>"$SCRATCH/err" ||
	die "a run after --restart failed: $(cat "$SCRATCH/err")"
grep -q "^migrate run: 0 new commit(s) mapped" "$SCRATCH/err" || die "a run after --restart: $(cat "$SCRATCH/err")"
rc=0
"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$R2" --in-place -q 2>/dev/null || rc=$?
[ "$rc" = 1 ] || die "after --restart, the old rules gave exit $rc, not 1"
# a second restart keeps the first one's copy
restart || die "a second --restart failed"
[ -s "$R2/.git/migrate/before-restart.2/commit-map" ] && [ -s "$R2/.git/migrate/before-restart/commit-map" ] ||
	die "a second --restart did not keep both copies"
expect_refusal --what "--restart with --to" --says "--restart goes with --in-place" --absent "$SCRATCH/nowhere" \
	-- "$MIGRATE" run --rules "$SCRATCH/rules.other" --repo "$SRC" --to "$SCRATCH/nowhere" --restart
info "--restart: refused over local work (converted or not), a backup of rewritten history, and with --to (1); then the refs of a conversion of the source with the other rules, backups kept, the old map kept and composed for old clones"
EOF

test_case "RESET.md's commands to reclaim the space, run as written" <<'EOF'
pack_kib() { git -C "$1" count-objects -v | awk '/^size-pack:/ { print $2 }'; }
git -C "$REPO" gc -q --prune=now	# the same repacking without the drop, to compare
before_kib=$(pack_kib "$REPO")
sed -n '/^## Reclaiming the space/,/^## /p' "$REPO/.git/migrate/RESET.md" |
	sed -n 's/^    //p' >"$SCRATCH/reclaim.sh"
[ "$(wc -l <"$SCRATCH/reclaim.sh")" -ge 3 ] || die "RESET.md has no commands to reclaim the space"
(cd "$REPO" && sh -e "$SCRATCH/reclaim.sh") || die "RESET.md's commands to reclaim the space failed"
[ -z "$(git -C "$REPO" for-each-ref refs/migrate/original/)" ] || die "the backups are still there"
git -C "$REPO" fsck --no-progress --no-dangling >/dev/null 2>&1 || die "git fsck fails after reclaiming"
after_kib=$(pack_kib "$REPO")
[ "$after_kib" -lt "$before_kib" ] || die "reclaiming left the pack at $after_kib KiB (was $before_kib)"
diff -u <(refs_of "$SCRATCH/reference") <(refs_of "$REPO") || die "reclaiming changed the refs"
run_migrate run --repo "$REPO" --in-place --verify-only -q || die "--verify-only fails after reclaiming"
info "reclaimed as RESET.md says: pack $before_kib KiB -> $after_kib KiB, refs and --verify-only unchanged"
EOF
test_done
