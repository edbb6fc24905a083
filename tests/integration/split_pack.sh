#!/usr/bin/env bash
# split_pack.sh - the repository a split run delivers is as small as git
# can make it (issue 29, item 4): fast-import stores each new part as a
# delta forward against whatever blob came before it in the stream, so
# `migrate run` packs the parts again with their paths as hints. Judged by
# git: the pack of `run --to` is within 1.3x of `git repack -a -d -f` of
# the same history (it was 1.9x on this one; 1.0-1.1x as a rule, but git's
# threads split the delta search where they like, and on a history this
# small each split costs a whole version), `git fsck` and `git
# verify-pack` are clean, the same commits as without the repacking (the
# plain pipeline into fast-import), and in place the new objects are
# packed the same way, nothing of the run's left behind. The preview
# (run --dry-run) estimates the parts' packed size within 3x of what the
# run reports (as deltas against each part's last version; estimated
# whole, the preview said the split history would take more than the
# unsplit one).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

make_history --only tracker --tracker-commits 300 --tracker-initial-mb 0.3 \
	--tracker-final-mb 1.2 "$SCRATCH/corpus"
SRC="$SCRATCH/corpus/tracker"
cat >"$SCRATCH/year.rules" <<'RULES'
data/CVE/list  split  record='^CVE-(\d{4})-'  into='data/CVE/list.{1}'  head='data/CVE/list.head'
RULES

pack_bytes() { find "$1" -path '*/objects/pack/*.pack' -printf '%s\n' | awk '{ s += $1 } END { print s }'; }

test_case "run --to: the pack is within 1.3x of git repack -a -d -f" <<'CASE'
run_migrate run -q --rules "$SCRATCH/year.rules" --repo "$SRC" --to "$SCRATCH/new" ||
	die "the split run failed"
git -C "$SCRATCH/new" fsck --strict >/dev/null 2>&1 || die "git fsck: $(git -C "$SCRATCH/new" fsck 2>&1 | head -3)"
for idx in "$SCRATCH"/new/.git/objects/pack/*.idx; do
	git verify-pack "$idx" || die "git verify-pack $idx"
done
[ "$(find "$SCRATCH/new/.git/objects" -type f -path '*/pack/*.pack' | wc -l)" -eq 1 ] ||
	die "not one pack: $(ls "$SCRATCH/new/.git/objects/pack")"
git clone -q --bare --no-local "$SCRATCH/new" "$SCRATCH/adf.git"
git -C "$SCRATCH/adf.git" repack -a -d -f -q
ours=$(pack_bytes "$SCRATCH/new/.git") git=$(pack_bytes "$SCRATCH/adf.git")
echo "$git" >"$SCRATCH/adf.bytes"	# the in-place case's measure too
python3 -c "import sys; sys.exit(not ($ours <= 1.3 * $git))" ||
	die "the pack is $ours bytes, git repack -a -d -f makes it $git"
[ ! -e "$SCRATCH/new/.git/migrate/new-blobs" ] || die "the list of parts is left"
info "run --to: $ours bytes, git repack -a -d -f: $git ($(python3 -c "print('%.2fx' % ($ours / $git))"))"
CASE

test_case "the same commits as the plain pipeline into fast-import" <<'CASE'
git init -q --bare "$SCRATCH/plain.git"
export_stream "$SRC" | (cd "$SRC" && "$MIGRATE" --rules "$SCRATCH/year.rules" -q) |
	git -C "$SCRATCH/plain.git" fast-import --quiet || die "the plain pipeline failed"
diff <(refs_of "$SCRATCH/plain.git") <(refs_of "$SCRATCH/new") >/dev/null ||
	die "the refs differ: $(diff <(refs_of "$SCRATCH/plain.git") <(refs_of "$SCRATCH/new") | head -4)"
info "run --to and the plain pipeline: the same refs and commits"
CASE

test_case "in place: the new objects packed with their deltas, nothing left" <<'CASE'
cp -a "$SRC" "$SCRATCH/inplace"
before=$(pack_bytes "$SCRATCH/inplace/.git")
run_migrate run -q --rules "$SCRATCH/year.rules" --repo "$SCRATCH/inplace" --in-place ||
	die "the in-place run failed"
git -C "$SCRATCH/inplace" fsck --strict >/dev/null 2>&1 || die "git fsck after the in-place run"
[ "$(git -C "$SCRATCH/inplace" rev-parse HEAD)" = "$(git -C "$SCRATCH/new" rev-parse HEAD)" ] ||
	die "in place and --to differ"
added=$(( $(pack_bytes "$SCRATCH/inplace/.git") - before ))
[ -s "$SCRATCH/adf.bytes" ] || die "the first case's measure of git's pack is not there"
git=$(cat "$SCRATCH/adf.bytes")
# what the run added is part of the new history: within 1.3x of what
# git repack -a -d -f makes of all of it
python3 -c "import sys; sys.exit(not ($added <= 1.3 * $git))" ||
	die "the run added $added bytes of packs; git packs the whole new history into $git"
[ -z "$(find "$SCRATCH/inplace/.git/objects/pack" -name 'tmp_*')" ] || die "a temp pack is left"
[ ! -e "$SCRATCH/inplace/.git/migrate/new-blobs" ] || die "the list of parts is left"
info "in place: $added bytes of packs added (git repack -a -d -f of the whole new history: $git)"
CASE

test_case "the preview's packed estimate is within 3x of the run's" <<'CASE'
run_migrate run -q --dry-run --rules "$SCRATCH/year.rules" --repo "$SRC" --to "$SCRATCH/dry" \
	--report-json "$SCRATCH/dry.json" || die "the preview failed"
[ -e "$SCRATCH/new/.git/migrate/report.json" ] || die "no run to compare with (the first case failed)"
estimate_near "$SCRATCH/dry.json" "$SCRATCH/new/.git/migrate/report.json"
CASE

test_done
