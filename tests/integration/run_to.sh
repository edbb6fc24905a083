#!/usr/bin/env bash
# run_to.sh - `migrate run --to NEWDIR` equals the manual pipeline.
#
# The small assets corpus, with rules that change ids (LFS for the
# binaries, one file dropped): `migrate run --to` must give NEWDIR exactly
# the refs and commit map of `fast-export | migrate | fast-import` with the
# same rules, never write to the source, leave a clean checkout, and state
# files and RESET.md under NEWDIR/.git/migrate/. Then the refusals: an
# existing non-empty directory, and a failing fast-export (an unknown
# revision), which must leave NEWDIR's refs as they were.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/lfs_lib.sh
. "$HERE/lfs_lib.sh"

make_history --only assets "$SCRATCH/corpus"
SRC="$SCRATCH/corpus/assets"
cat >"$SCRATCH/rules" <<'RULES'
/data/strings.json    drop
*.bin                 lfs
*.psd                 lfs
RULES
refs_of "$SRC" >"$SCRATCH/src.refs.before"

test_case "the manual pipeline" <<'EOF'
mkdir -p "$SCRATCH/manual"
git init -q "$SCRATCH/manual"
export_stream "$SRC" >"$SCRATCH/manual.fe"
run_migrate --rules "$SCRATCH/rules" --store "$SCRATCH/manual/.git/lfs/objects" \
	--commit-map "$SCRATCH/manual.map" --source-repo "$SRC" \
	<"$SCRATCH/manual.fe" >"$SCRATCH/manual.fi" || die "manual pipeline: migrate failed"
import_stream "$SCRATCH/manual" "$SCRATCH/manual.marks" <"$SCRATCH/manual.fi" ||
	die "manual pipeline: fast-import failed"
EOF

NEW="$SCRATCH/new"
test_case "migrate run --to" <<'EOF'
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$NEW" -q ||
	die "migrate run --to failed"
refs_of "$SCRATCH/manual" >"$SCRATCH/manual.refs"
refs_of "$NEW" >"$SCRATCH/new.refs"
diff -u "$SCRATCH/manual.refs" "$SCRATCH/new.refs" ||
	die "migrate run --to gave other refs than the manual pipeline"
diff -u <(sort "$SCRATCH/manual.map") <(sort "$NEW/.git/migrate/commit-map") ||
	die "migrate run --to gave another commit map than the manual pipeline"
cmp -s "$SCRATCH/src.refs.before" <(refs_of "$SRC") || die "the source's refs changed"
[ -z "$(git -C "$SRC" status --porcelain)" ] || die "the source's work tree changed"
[ ! -e "$SRC/.git/migrate" ] || die "state was written into the source"
git -C "$NEW" fsck --no-progress --strict 2>&1 | grep -v '^dangling' && die "fsck complains" || true
[ "$(grep -c . "$SCRATCH/new.refs")" = "$(grep -c . "$SCRATCH/src.refs.before")" ] ||
	die "NEWDIR does not have every ref of the source"
[ "$(git -C "$NEW" symbolic-ref HEAD)" = "$(git -C "$SRC" symbolic-ref HEAD)" ] ||
	die "NEWDIR's HEAD names another branch than the source's"
[ -z "$(git -C "$NEW" status --porcelain)" ] || die "NEWDIR's work tree is not clean"
for f in commit-map ref-map marks import-marks tips last-run source RESET.md; do
	[ -s "$NEW/.git/migrate/$f" ] || die "state file $f missing or empty"
done
ls "$NEW/.git/migrate/"*.new 2>/dev/null && die "working copies of the state left behind"
git -C "$NEW" show HEAD:assets/textures/hero.psd | grep -q '^version https://git-lfs' ||
	die "hero.psd is not an LFS pointer in NEWDIR"
output_has . -- git -C "$NEW" log --all --format=%H -- data/strings.json &&
	die "data/strings.json (dropped) is still in NEWDIR's history"
(cd "$NEW" && git lfs fsck >/dev/null) || die "git lfs fsck fails in NEWDIR"
while read -r _ ref; do
	grep -qF "\`$ref\`" "$NEW/.git/migrate/RESET.md" || die "RESET.md does not name $ref"
done <"$SCRATCH/new.refs"
grep -q 'git lfs pull' "$NEW/.git/migrate/RESET.md" || die "RESET.md lacks git lfs pull"
grep -q "needs no" "$NEW/.git/migrate/RESET.md" ||
	die "RESET.md does not say the new repository is packed"
grep -q 'git reset --hard origin/main' "$NEW/.git/migrate/RESET.md" ||
	die "RESET.md lacks the reset of main"
grep -q 'migrate remap --commit-map' "$NEW/.git/migrate/RESET.md" ||
	die "RESET.md lacks migrate remap"
# the checkout made by run was smudged by git-lfs: the content is back
cmp "$SRC/assets/textures/hero.psd" "$NEW/assets/textures/hero.psd" ||
	die "NEWDIR's checkout of hero.psd differs from the source's"
# the target is self-contained: the alternate it borrowed the source's
# objects through is gone, and it works with the source moved away
[ ! -e "$NEW/.git/objects/info/alternates" ] ||
	die "NEWDIR still borrows objects: $(cat "$NEW/.git/objects/info/alternates")"
mv "$SRC" "$SCRATCH/src-away"
git -C "$NEW" fsck --no-progress --full --strict >"$SCRATCH/fsck.out" 2>&1 ||
	{ cat "$SCRATCH/fsck.out" >&2; die "git fsck fails in NEWDIR without the source"; }
[ -z "$(git -C "$NEW" rev-list --objects --all --missing=print | grep '^?')" ] ||
	die "NEWDIR misses objects without the source"
git -C "$NEW" archive --format=tar HEAD >/dev/null || die "NEWDIR's HEAD does not read without the source"
[ "$(git -C "$NEW" count-objects -v | sed -n 's/^packs: //p')" = 1 ] ||
	die "NEWDIR is not in one pack: $(git -C "$NEW" count-objects -v | tr '\n' ' ')"
mv "$SCRATCH/src-away" "$SRC"
info "run --to: NEWDIR in one pack, no alternate, fsck clean with the source moved away"
info "run --to: $(wc -l <"$SCRATCH/new.refs") refs and $(($(wc -l <"$SCRATCH/manual.map") - 1)) map entries equal the manual pipeline's"
EOF

test_case "refusals" <<'EOF'
mkdir -p "$SCRATCH/busy" && echo x >"$SCRATCH/busy/file"
rc=0
"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/busy" -q 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || die "a non-empty --to directory gave exit $rc, not 1"
grep -q 'not empty' "$SCRATCH/err" || die "no message for a non-empty --to directory"
rc=0
"$MIGRATE" run --repo "$SRC" -q 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || die "run without --to or --in-place gave exit $rc, not 1"

FAIL="$SCRATCH/fail"
rc=0
"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SRC" --to "$FAIL" -q -- no-such-revision 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] || die "a failing fast-export gave exit $rc, not 3"
grep -q 'fast-export' "$SCRATCH/err" || die "the message does not name fast-export: $(cat "$SCRATCH/err")"
[ ! -e "$FAIL" ] || die "a failed run left its new target behind: $(ls -A "$FAIL")"
cmp -s "$SCRATCH/src.refs.before" <(refs_of "$SRC") || die "the source's refs changed"
# a typo in the rules, into an empty directory: it stays, empty
EMPTY="$SCRATCH/empty"
mkdir -m 0750 "$EMPTY"
printf '*.bin lfz\n' >"$SCRATCH/typo.rules"
rc=0
"$MIGRATE" run --rules "$SCRATCH/typo.rules" --repo "$SRC" --to "$EMPTY" -q 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || die "a rule typo gave exit $rc, not 1: $(cat "$SCRATCH/err")"
[ -d "$EMPTY" ] && [ -z "$(ls -A "$EMPTY")" ] ||
	die "a failed run left the empty target not empty: $(ls -A "$EMPTY")"
[ "$(stat -c %a "$EMPTY")" = 750 ] || die "the empty target's mode changed"
# a failed first run can be retried, from another checkout of the source too
git clone -q "$SRC" "$SCRATCH/other-checkout"
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/other-checkout" --to "$EMPTY" -q ||
	die "a retry from another checkout after a failed first run failed"
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$FAIL" -q ||
	die "a retry after a failed first run failed"
diff -u "$SCRATCH/manual.refs" <(refs_of "$FAIL") || die "the retry gave other refs"
info "refusals: non-empty directory (1), no mode (1), failing fast-export (3, target gone again), rule typo (1, empty target empty again), retries work"
EOF
test_done
