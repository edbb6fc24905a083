#!/usr/bin/env bash
# run_incremental.sh - a second `migrate run` continues the first, and the
# check against fast-import's marks fails on a corrupted marks file.
#
# Run 1 migrates the assets corpus --to NEW (LFS rules, so ids change); a
# clone of NEW is made. Then the source gets new commits (on main, on a new
# branch forked from an old commit, a new tag). Run 2 must export only
# those commits (counted: the map grows by exactly that many entries and
# fast-import's marks hold that many commits), keep every id of run 1, give
# the refs of one full run of the final source into a fresh repository,
# and the clone must fetch fast-forward. Last, --verify-only re-checks the
# state, then fails loudly once a marks file or the map is corrupted.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

make_history --only assets "$SCRATCH/corpus"
SRC="$SCRATCH/corpus/assets"
printf '*.bin lfs\n*.psd lfs\n' >"$SCRATCH/rules"
NEW="$SCRATCH/new"
ST="$NEW/.git/migrate"

run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$NEW" -q || die "run 1 failed"
cp "$ST/commit-map" "$SCRATCH/map1"
git clone -q "$NEW" "$SCRATCH/clone"
git -C "$SCRATCH/clone" for-each-ref --format='%(objectname) %(refname:strip=3)' \
	refs/remotes/origin | grep -v ' HEAD$' | sort >"$SCRATCH/clone.before"

test_case "new commits in the source" <<'EOF'
git -C "$SRC" checkout -q main
echo "new binary" >"$SRC/new.bin"
git -C "$SRC" add new.bin
git -C "$SRC" commit -q -m "add new.bin"
echo "more" >>"$SRC/README.md"
git -C "$SRC" commit -q -a -m "README: more (mentions $(git -C "$SRC" rev-parse --short HEAD~5))"
git -C "$SRC" tag -a -m "release 2" v2.0.0
git -C "$SRC" checkout -q -b hotfix HEAD~7
echo "fix" >"$SRC/fix.psd"
git -C "$SRC" add fix.psd
git -C "$SRC" commit -q -m "hotfix on an old commit"
git -C "$SRC" checkout -q main
expected="$(git -C "$SRC" rev-list --count --all --not $(cut -d' ' -f1 "$ST/tips"))"
[ "$expected" = 3 ] || die "test setup: expected 3 new commits, rev-list says $expected"

run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$NEW" 2>"$SCRATCH/run2.err" ||
	die "run 2 failed: $(cat "$SCRATCH/run2.err")"
grep -q "^migrate run: 3 new commit(s) mapped" "$SCRATCH/run2.err" ||
	die "run 2 did not report 3 new commits: $(cat "$SCRATCH/run2.err")"
# and the whole map's entries: its lines but the header
in_map=$(($(wc -l <"$ST/commit-map") - 1))
grep -q "^migrate run: 3 new commit(s) mapped ($in_map in the map)" "$SCRATCH/run2.err" ||
	die "run 2 did not report the map's $in_map entries: $(cat "$SCRATCH/run2.err")"
# only the new commits went through: the map grew by 3, the run wrote 3
# commits (fast-import none: it never heard of them)
[ "$(wc -l <"$ST/commit-map")" = $(($(wc -l <"$SCRATCH/map1") + 3)) ] ||
	die "the map grew by $(($(wc -l <"$ST/commit-map") - $(wc -l <"$SCRATCH/map1"))), not 3"
commits_in() {	# commits_in MARKS: how many of its objects are commits
	local n=0 id
	while read -r _ id; do
		[ "$(git -C "$NEW" cat-file -t "$id")" = commit ] && n=$((n + 1))
	done <"$1"
	echo "$n"
}
[ "$(commits_in "$ST/marks")" = 3 ] || die "the run made $(commits_in "$ST/marks") commits in run 2, not 3"
[ "$(commits_in "$ST/import-marks")" = 0 ] ||
	die "fast-import wrote $(commits_in "$ST/import-marks") commits in run 2, not 0"
# the ids of run 1 are unchanged
head -n "$(wc -l <"$SCRATCH/map1")" "$ST/commit-map" | cmp -s - "$SCRATCH/map1" ||
	die "run 2 changed entries of run 1's map"
# the same refs as one full run of the final source
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$SCRATCH/full" -q ||
	die "the full run failed"
diff -u <(refs_of "$SCRATCH/full") <(refs_of "$NEW") ||
	die "two runs gave other refs than one full run"
[ -z "$(git -C "$NEW" status --porcelain)" ] || die "NEW's work tree is not clean after run 2"
[ "$(git -C "$NEW" rev-parse HEAD)" = "$(git -C "$NEW" rev-parse main)" ] || die "NEW's HEAD"
EOF

test_case "the clone of run 1 fetches fast-forward" <<'EOF'
git -C "$SCRATCH/clone" fetch -q origin 2>"$SCRATCH/fetch.err" || die "fetch failed"
grep -q 'forced update' "$SCRATCH/fetch.err" && die "fetch needed a forced update"
while read -r old b; do
	new="$(git -C "$SCRATCH/clone" rev-parse "refs/remotes/origin/$b")"
	git -C "$SCRATCH/clone" merge-base --is-ancestor "$old" "$new" ||
		die "origin/$b moved from $old to $new: not a fast-forward"
done <"$SCRATCH/clone.before"
git -C "$SCRATCH/clone" pull -q --ff-only || die "git pull --ff-only fails in the clone"
git -C "$SCRATCH/clone" rev-parse -q --verify refs/remotes/origin/hotfix >/dev/null ||
	die "the clone did not get the new branch"
info "run 2 exported 3 new commits, kept $(($(wc -l <"$SCRATCH/map1") - 1)) ids, refs equal a full run, clone fast-forwards"
EOF

test_case "the check fails loudly on corrupted state" <<'EOF'
run_migrate run --repo "$SRC" --to "$NEW" --verify-only -q || die "--verify-only fails on a good state"
cp "$ST/import-marks" "$SCRATCH/imarks.good"
cp "$ST/commit-map" "$SCRATCH/map.good"
# corrupt one id of fast-import's marks (last hex digit changed)
awk 'NR == 1 { c = substr($0, length($0)); $0 = substr($0, 1, length($0) - 1) (c == "0" ? "1" : "0") } { print }' \
	"$SCRATCH/imarks.good" >"$ST/import-marks"
cmp -s "$SCRATCH/imarks.good" "$ST/import-marks" && die "test setup: marks not corrupted"
rc=0
"$MIGRATE" run --repo "$SRC" --to "$NEW" --verify-only 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] || die "a corrupted import-marks gave exit $rc, not 3"
grep -q 'verification failed: mark :' "$SCRATCH/err" || die "message: $(cat "$SCRATCH/err")"
cp "$SCRATCH/imarks.good" "$ST/import-marks"
# a mark fast-import wrote that migrate did not compute
echo ":999999 $(git -C "$NEW" rev-parse HEAD)" >>"$ST/import-marks"
rc=0
"$MIGRATE" run --repo "$SRC" --to "$NEW" --verify-only 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] && grep -q 'not in migrate' "$SCRATCH/err" || die "an extra mark passed: $(cat "$SCRATCH/err")"
cp "$SCRATCH/imarks.good" "$ST/import-marks"
# the last entry of the map pointed at a commit of run 1
last="$(tail -n 1 "$ST/commit-map")"
sed -i '$d' "$ST/commit-map"
echo "${last%% *} $(git -C "$NEW" rev-parse 'main~2')" >>"$ST/commit-map"
rc=0
"$MIGRATE" run --repo "$SRC" --to "$NEW" --verify-only 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] && grep -q 'did not write' "$SCRATCH/err" || die "a wrong map entry passed: $(cat "$SCRATCH/err")"
cp "$SCRATCH/map.good" "$ST/commit-map"
run_migrate run --repo "$SRC" --to "$NEW" --verify-only -q || die "--verify-only fails on the restored state"
info "--verify-only: good state passes; a changed mark, an extra mark and a wrong map entry fail (exit 3)"
EOF
test_case "a third run with nothing new changes nothing" <<'EOF'
refs_of "$NEW" >"$SCRATCH/refs2"
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$NEW" 2>"$SCRATCH/run3.err" || die "run 3 failed"
grep -q "^migrate run: 0 new commit(s) mapped" "$SCRATCH/run3.err" || die "run 3: $(cat "$SCRATCH/run3.err")"
diff -u "$SCRATCH/refs2" <(refs_of "$NEW") || die "run 3 changed refs"
EOF

test_case "other rules: refused, saying what to do; nothing moves" <<'EOF'
head -c "$(stat -c %s "$SCRATCH/rules")" "$ST/rules" | cmp -s "$SCRATCH/rules" - ||
	die "the state does not keep the rules of the last run"
cp "$ST/rules" "$SCRATCH/kept-rules"
{ cat "$SCRATCH/rules"; printf '*.txt drop\n'; } >"$SCRATCH/rules.other"
rc=0
"$MIGRATE" run --rules "$SCRATCH/rules.other" --repo "$SRC" --to "$NEW" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || die "other rules gave exit $rc, not 1: $(cat "$SCRATCH/err")"
grep -q 'not those of the last run' "$SCRATCH/err" && grep -q 'fresh --to' "$SCRATCH/err" ||
	die "the refusal does not say what happened and what to do: $(cat "$SCRATCH/err")"
diff -u "$SCRATCH/refs2" <(refs_of "$NEW") || die "a refused run changed refs"
cmp -s "$SCRATCH/kept-rules" "$ST/rules" || die "a refused run changed the kept rules"
# the same rules with expressions the last run did not have
printf 'secret\n' >"$SCRATCH/msg-expr"
rc=0
"$MIGRATE" run --rules "$SCRATCH/rules" --replace-message "$SCRATCH/msg-expr" --repo "$SRC" \
	--to "$NEW" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'not those of the last run' "$SCRATCH/err" ||
	die "a run adding --replace-message: exit $rc: $(cat "$SCRATCH/err")"
run_migrate run --rules "$SCRATCH/rules" --repo "$SRC" --to "$NEW" -q || die "the same rules again were refused"
info "other rules than the last run's: refused (exit 1, naming a fresh --to), nothing moved; the same rules go on"
EOF

test_case "the rule file edited while a run converts: the state keeps the rules it started with" <<'EOF'
cp "$SCRATCH/rules" "$SCRATCH/rules.edited"
# once fast-import has written the side repository's refs: the stream is over
mid_run_hook "printf '*.txt drop\n' >>'$SCRATCH/rules.edited'"
run_migrate run --rules "$SCRATCH/rules.edited" --repo "$SRC" --to "$SCRATCH/edited" -q ||
	die "the run failed"
no_hook
[ -e "$SCRATCH/hook.done" ] || die "test setup: the hook did not run"
output_has -F '*.txt drop' -- cat "$SCRATCH/rules.edited" || die "test setup: the rule file was not edited"
head -c "$(stat -c %s "$SCRATCH/rules")" "$SCRATCH/edited/.git/migrate/rules" | cmp -s "$SCRATCH/rules" - ||
	die "the state does not start with the rules the run was started with"
output_lacks -F '*.txt drop' -- cat "$SCRATCH/edited/.git/migrate/rules" ||
	die "the state keeps the edited rules, which converted nothing"
# so the next run with the edited rules is refused, as other rules are
rc=0
"$MIGRATE" run --rules "$SCRATCH/rules.edited" --repo "$SRC" --to "$SCRATCH/edited" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'not those of the last run' "$SCRATCH/err" ||
	die "the edited rules after the run: exit $rc: $(cat "$SCRATCH/err")"
info "the rule file edited mid-run: the state keeps the rules read at the start; the edited ones are refused next"
EOF

test_done
