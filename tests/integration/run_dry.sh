#!/usr/bin/env bash
# run_dry.sh - `migrate run --dry-run` is the real thing without the writes
# (issue 12, item 3):
#  - a preview --to a directory that is not there, and in place, writes
#    nothing anywhere: no target, no state, no LFS store, no object, no ref,
#    the work tree as it was;
#  - its --report, --report-json, --commit-map and --ref-map are byte for
#    byte those of the real run that follows, --to and in place;
#  - a preview of a re-run (new commits in the source, an earlier target)
#    leaves the target as it was and equals the real re-run too;
#  - --report - prints the table on standard error.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

make_history --only assets "$SCRATCH/corpus"
SRC="$SCRATCH/corpus/assets"
cat >"$SCRATCH/rules" <<'RULES'
/data/strings.json    drop
*.bin                 lfs
*.psd                 lfs
RULES

# snapshot DIR: refs, objects, files of the git dir and of the work tree
snapshot() {
	{
		git -C "$1" for-each-ref --format='%(objectname) %(refname)'
		git -C "$1" rev-parse HEAD 2>/dev/null || true
		(cd "$1" && find . -path ./.git/index -prune -o -type f -print0 |
			sort -z | xargs -0 sha1sum)
	}
}

# outs PREFIX: the four outputs of a run, as options
outs() {
	echo --report "$1.txt" --report-json "$1.json" --commit-map "$1.map" --ref-map "$1.refs"
}

same() { # A B WHAT
	local f
	for f in txt json map refs; do
		[ -s "$1.$f" ] || die "$3: $1.$f missing or empty"
		cmp -s "$1.$f" "$2.$f" || {
			diff -u "$1.$f" "$2.$f" | head -20 >&2
			die "$3: the dry run and the real run differ in $f"
		}
	done
}

test_case "--to a directory that is not there" <<'EOF'
snapshot "$SRC" >"$SCRATCH/src.before"
# shellcheck disable=SC2046
mkdir "$SCRATCH/tmp"
TMPDIR="$SCRATCH/tmp" run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/new" \
	--dry-run $(outs "$SCRATCH/to-dry") 2>"$SCRATCH/to-dry.err" || die "run --to --dry-run failed"
[ ! -e "$SCRATCH/new" ] || die "the dry run created the target"
snapshot "$SRC" | cmp -s "$SCRATCH/src.before" - || die "the dry run changed the source"
grep -q 'dry run' "$SCRATCH/to-dry.err" || die "the dry run does not say it was one: $(cat "$SCRATCH/to-dry.err")"
grep -q 'commit(s) would be rewritten' "$SCRATCH/to-dry.err" || die "the dry run does not say what would change"
[ -z "$(ls -A "$SCRATCH/tmp")" ] || die "the dry run left its temp dir: $(ls -A "$SCRATCH/tmp")"
# shellcheck disable=SC2046
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/new" -q \
	$(outs "$SCRATCH/to-real") || die "run --to failed"
same "$SCRATCH/to-dry" "$SCRATCH/to-real" "--to"
cmp -s "$SCRATCH/to-real.json" "$SCRATCH/new/.git/migrate/report.json" ||
	die "--report-json is not the state's report.json"
grep -q '"commits_rewritten":[1-9]' "$SCRATCH/to-real.json" || die "the report says nothing was rewritten"
info "--to: dry run wrote nothing; its report, JSON, commit map and ref map equal the real run's"
EOF

test_case "a re-run: new commits, an earlier target" <<'EOF'
git -C "$SRC" checkout -q main
head -c 3000 /dev/urandom >"$SRC/extra.bin"
echo more >>"$SRC/README.md" 2>/dev/null || echo more >"$SRC/README.md"
git -C "$SRC" add -A && git -C "$SRC" commit -q -m "more after the first run"
snapshot "$SCRATCH/new" >"$SCRATCH/new.before"
# shellcheck disable=SC2046
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/new" --dry-run -q \
	$(outs "$SCRATCH/re-dry") || die "re-run --dry-run failed"
snapshot "$SCRATCH/new" | cmp -s "$SCRATCH/new.before" - || die "the dry re-run changed the target"
# shellcheck disable=SC2046
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/new" -q \
	$(outs "$SCRATCH/re-real") || die "re-run failed"
same "$SCRATCH/re-dry" "$SCRATCH/re-real" "re-run --to"
[ "$(($(wc -l <"$SCRATCH/re-real.map")))" -gt "$(($(wc -l <"$SCRATCH/to-real.map")))" ] ||
	die "the re-run's map did not grow"
info "re-run --to: the dry run left the target alone and equals the real re-run"
EOF

test_case "in place" <<'EOF'
clone_refs "$SRC" "$SCRATCH/inplace"
# the files' times no longer those the index holds: a `git status` that may
# write the index would refresh it (and take index.lock to do so)
git -C "$SCRATCH/inplace" ls-files -z | (cd "$SCRATCH/inplace" && xargs -0 touch -h -d '2020-01-01 00:00')
cp "$SCRATCH/inplace/.git/index" "$SCRATCH/inplace.index"
snapshot "$SCRATCH/inplace" >"$SCRATCH/inplace.before"
count_before="$(git -C "$SCRATCH/inplace" count-objects -v)"
# shellcheck disable=SC2046
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/inplace" --in-place --dry-run -q \
	$(outs "$SCRATCH/ip-dry") --report - 2>"$SCRATCH/ip-dry.err" || die "run --in-place --dry-run failed"
snapshot "$SCRATCH/inplace" | cmp -s "$SCRATCH/inplace.before" - || die "the in-place dry run changed the repository"
cmp -s "$SCRATCH/inplace.index" "$SCRATCH/inplace/.git/index" || die "the in-place dry run wrote the index"
[ "$count_before" = "$(git -C "$SCRATCH/inplace" count-objects -v)" ] || die "the in-place dry run wrote objects"
[ ! -e "$SCRATCH/inplace/.git/migrate" ] || die "the in-place dry run wrote state"
[ ! -e "$SCRATCH/inplace/.git/lfs" ] || die "the in-place dry run wrote to the LFS store"
grep -q '^commits rewritten: ' "$SCRATCH/ip-dry.err" || die "--report - printed no table: $(cat "$SCRATCH/ip-dry.err")"
# --report - came last: the file is not asked for; compare the txt from a second preview
# shellcheck disable=SC2046
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/inplace" --in-place --dry-run -q \
	$(outs "$SCRATCH/ip-dry") || die "run --in-place --dry-run failed"
# shellcheck disable=SC2046
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/inplace" --in-place --progress \
	$(outs "$SCRATCH/ip-real") 2>"$SCRATCH/ip-real.err" || die "run --in-place failed"
same "$SCRATCH/ip-dry" "$SCRATCH/ip-real" "in place"
# the ending says what changed, as the report counts it, and where things are
n="$(sed -n 's/.*"commits_rewritten":\([0-9]*\).*/\1/p' "$SCRATCH/ip-real.json")"
c="$(sed -n 's/.*"refs_changed":\([0-9]*\).*/\1/p' "$SCRATCH/ip-real.json")"
grep -Eq "^migrate run: $n of [0-9]+ commit\(s\) rewritten( \([0-9]+ pruned\))?, $c of [0-9]+ ref\(s\) changed, [1-9][0-9]* object\(s\) converted$" \
	"$SCRATCH/ip-real.err" || die "no honest ending ($n commits, $c refs): $(tail -5 "$SCRATCH/ip-real.err")"
grep -q '^migrate run: history blobs .* -> .*; packed .* -> ' "$SCRATCH/ip-real.err" || die "the ending gives no sizes"
grep -qF "$SCRATCH/inplace/.git/migrate/RESET.md" "$SCRATCH/ip-real.err" || die "the ending does not say where RESET.md is"
grep -q '^migrate run: checking every computed id' "$SCRATCH/ip-real.err" || die "no progress through the check"
cmp -s "$SCRATCH/ip-real.txt" "$SCRATCH/ip-dry.err" ||
	die "--report - printed another table than --report FILE: $(diff "$SCRATCH/ip-real.txt" "$SCRATCH/ip-dry.err" | head -5)"
info "in place: dry run wrote nothing; equal outputs; --report - on stderr"
EOF

test_case "refusals: a dry run says what the real run would refuse of its rules" <<'EOF'
printf '*.bin lfz\n' >"$SCRATCH/bad.rules"
rc=0
run_migrate run --rules "$SCRATCH/bad.rules" --repo "$SRC" --to "$SCRATCH/never" --dry-run \
	2>"$SCRATCH/bad.err" || rc=$?
[ "$rc" = 1 ] || die "a dry run with a bad rule file: exit $rc"
[ ! -e "$SCRATCH/never" ] || die "a failed dry run created the target"
EOF
test_done
