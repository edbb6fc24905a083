#!/usr/bin/env bash
# strip_blobs.sh - blobs dropped by id (issue 15, item 4):
#  - --strip-blobs-with-ids FILE gives the very commits git filter-repo
#    --strip-blobs-with-ids gives with the same file (every ref's commit id,
#    --prune-empty never), and the ids are gone from the history;
#  - the same as rules (`blob:<id> drop`), and through migrate run --to;
#  - the report has a row per id (paths, blobs, bytes) and lists, with a
#    warning, an id the history never had; analyze says the same numbers;
#  - a word that is no id, and a blob: rule that does not drop: exit 1.
. "$(dirname "$0")/lib/lib.sh"

command -v git-filter-repo >/dev/null || die "git-filter-repo is not installed (scripts/lib.sh installs it)"

make_history --only assets "$SCRATCH/corpus"
ASSETS="$SCRATCH/corpus/assets"

# the ids: a blob with two paths, two deleted ones, the largest; one
# the history never had; a comment and upper case, which both tools read
(cd "$ASSETS" && run_migrate analyze --top 0 --json "$SCRATCH/a.json" >/dev/null) ||
	die "analyze failed"
python3 - "$SCRATCH/a.json" >"$SCRATCH/picked" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))['blobs']
multi = [b for b in d if len(b['paths']) > 1][:1]
gone = [b for b in d if not b['present']][:2]
assert multi and len(gone) == 2
for b in multi + gone + d[:1]:
    print(b['blob'])
PY
{
	head -n 3 "$SCRATCH/picked"
	tail -n 1 "$SCRATCH/picked" | tr a-f A-F
	echo 0123456789abcdef0123456789abcdef01234567
} >"$SCRATCH/ids"
tr A-F a-f <"$SCRATCH/ids" >"$SCRATCH/ids-fr"	# filter-repo compares as written
UNKNOWN=0123456789abcdef0123456789abcdef01234567

# refs with the commit each names (tags peeled: filter-repo strips
# signatures from signed tags, migrate keeps them)
refs() {
	git -C "$1" for-each-ref --format='%(refname) %(if)%(*objectname)%(then)%(*objectname)%(else)%(objectname)%(end)' |
		grep -v '^refs/replace/' | LC_ALL=C sort
}

git clone -q --mirror "$ASSETS" "$SCRATCH/fr.git"
(cd "$SCRATCH/fr.git" && git filter-repo --strip-blobs-with-ids "$SCRATCH/ids-fr" \
	--prune-empty never --prune-degenerate never --force) >"$SCRATCH/fr.log" 2>&1 ||
	{ cat "$SCRATCH/fr.log" >&2; die "git filter-repo failed"; }
refs "$SCRATCH/fr.git" >"$SCRATCH/fr.refs"

export_stream "$ASSETS" >"$SCRATCH/in.fe"

test_case "--strip-blobs-with-ids gives git filter-repo's commits, the ids gone from the history, the unknown one warned about" <<'EOF'
git init -q "$SCRATCH/new"
(cd "$ASSETS" && run_migrate --strip-blobs-with-ids "$SCRATCH/ids" \
	--report-json "$SCRATCH/report.json" --report "$SCRATCH/report.txt") \
	<"$SCRATCH/in.fe" 2>"$SCRATCH/err" | git -C "$SCRATCH/new" fast-import --quiet ||
	die "migrate --strip-blobs-with-ids failed: $(cat "$SCRATCH/err")"
refs "$SCRATCH/new" >"$SCRATCH/new.refs"
diff "$SCRATCH/fr.refs" "$SCRATCH/new.refs" >&2 ||
	die "the commits differ from git filter-repo --strip-blobs-with-ids's"
[ "$(wc -l <"$SCRATCH/new.refs")" -gt 10 ] || die "too few refs: the test is blind"
git -C "$SCRATCH/new" rev-list --objects --all | cut -d' ' -f1 >"$SCRATCH/objects"
while read -r id; do
	! grep -qx "$id" "$SCRATCH/objects" || die "blob $id is still in the history"
done <"$SCRATCH/picked"
grep -q "blob:$UNKNOWN (line 5 of $SCRATCH/ids): the history has no such blob" "$SCRATCH/err" ||
	die "no warning for the unknown id: $(cat "$SCRATCH/err")"
info "filter: the same commits as git filter-repo --strip-blobs-with-ids ($(wc -l <"$SCRATCH/new.refs") refs); the ids are gone; the unknown one is said"
EOF

# the report: a row per id, the unknown one unmatched; analyze agrees
test_case "the report has a row per id (paths, blobs, bytes), the unknown id unmatched, and analyze says the same" <<'EOF'
# report.json and report.txt: the filter's, in the first case
(cd "$ASSETS" && run_migrate analyze --strip-blobs-with-ids "$SCRATCH/ids" --json - \
	>"$SCRATCH/an.json") || die "analyze --strip-blobs-with-ids failed"
python3 - "$SCRATCH/report.json" "$SCRATCH/an.json" "$UNKNOWN" <<'PY' || die "the report is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
rows = r['rules']
assert len(rows) == 5, rows
assert all(x['action'] == 'drop' and x['pattern'].startswith('blob:') for x in rows)
assert [x['blobs'] for x in rows] == [1, 1, 1, 1, 0], rows
assert rows[0]['paths'] == 2, rows[0]
assert [x['pattern'] for x in r['unmatched_rules']] == ['blob:' + sys.argv[3]]
for x, y in zip(rows, a['rules']):
    for k in ('line', 'pattern', 'paths', 'blobs', 'bytes'):
        assert x[k] == y[k], (k, x, y)
print('info: report: a row per id (paths, blobs, bytes), the unknown id unmatched; analyze agrees')
PY
grep -q "rules that matched nothing" "$SCRATCH/report.txt" || die "the table does not list the unknown id"
EOF

test_case "with a rule file too, the unknown id is listed under the ids file, line 5 (table and JSON)" <<'EOF'
# with a rule file too, the unknown id is the ids file's, line 5 (the
# table and the JSON name that file, not the rule file)
printf '*.psd keep\n' >"$SCRATCH/keep.rules"
(cd "$ASSETS" && run_migrate --rules "$SCRATCH/keep.rules" --strip-blobs-with-ids "$SCRATCH/ids" \
	--dry-run -q --report "$SCRATCH/both.txt" --report-json "$SCRATCH/both.json") <"$SCRATCH/in.fe" ||
	die "--rules with --strip-blobs-with-ids failed"
grep -qF "  $SCRATCH/ids:5 blob:$UNKNOWN" "$SCRATCH/both.txt" ||
	die "the unknown id is not listed under the ids file: $(grep -A3 'matched nothing' "$SCRATCH/both.txt")"
python3 -c 'import json,sys; u=json.load(open(sys.argv[1]))["unmatched_rules"]; assert [(x["file"],x["line"]) for x in u] == [(sys.argv[2],5)], u' \
	"$SCRATCH/both.json" "$SCRATCH/ids" || die "the JSON does not name the ids file"
EOF

test_case "blob:<id> drop rules give the commits the option gives" <<'EOF'
# the same as rules, and through migrate run
sed 's/^/blob:/; s/$/ drop/' "$SCRATCH/ids" >"$SCRATCH/ids.rules"
git init -q "$SCRATCH/new2"
(cd "$ASSETS" && run_migrate --rules "$SCRATCH/ids.rules" -q) <"$SCRATCH/in.fe" |
	git -C "$SCRATCH/new2" fast-import --quiet || die "blob: rules failed"
refs "$SCRATCH/new2" | diff "$SCRATCH/fr.refs" - >&2 || die "blob: rules differ from the option"
EOF

test_case "migrate run --to gives the same commits, keeps the ids in its state, runs again with them and refuses others" <<'EOF'
run_migrate run --repo "$ASSETS" --strip-blobs-with-ids "$SCRATCH/ids" -q --to "$SCRATCH/run" \
	>"$SCRATCH/run.log" 2>&1 || die "migrate run failed: $(cat "$SCRATCH/run.log")"
refs "$SCRATCH/run" | grep -v '^refs/migrate/' | diff "$SCRATCH/fr.refs" - >&2 ||
	die "migrate run --strip-blobs-with-ids differs"
grep -q "$UNKNOWN" "$SCRATCH/run/.git/migrate/rules" || die "run's state does not keep the ids"
run_migrate run --repo "$ASSETS" --strip-blobs-with-ids "$SCRATCH/ids" -q --to "$SCRATCH/run" \
	>"$SCRATCH/run.log" 2>&1 || die "a second run with the same ids failed: $(cat "$SCRATCH/run.log")"
printf '%s\n' "$UNKNOWN" >"$SCRATCH/other-ids"
rc=0
"$MIGRATE" run --repo "$ASSETS" --strip-blobs-with-ids "$SCRATCH/other-ids" -q --to "$SCRATCH/run" \
	>/dev/null 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] && grep -q "not those of the last run" "$SCRATCH/err" ||
	die "a run with other ids: exit $rc: $(cat "$SCRATCH/err")"
info "blob:<id> drop rules and migrate run give the same commits; run keeps the ids in its state and refuses others"
EOF

# refusals
test_case "a word that is no id is refused with file:line:column, exit 1" <<'EOF'
printf 'not-an-id\n' >"$SCRATCH/bad-ids"
rc=0
"$MIGRATE" --strip-blobs-with-ids "$SCRATCH/bad-ids" <"$SCRATCH/in.fe" >/dev/null 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || die "a bad id file: exit $rc"
grep -q "$SCRATCH/bad-ids:1:1: expected a blob id" "$SCRATCH/err" || die "bad id: $(cat "$SCRATCH/err")"
EOF

test_case "a blob: rule whose action is not drop is refused, exit 1" <<'EOF'
printf 'blob:%s lfs\n' "$UNKNOWN" >"$SCRATCH/bad.rules"
rc=0
"$MIGRATE" check-rules --rules "$SCRATCH/bad.rules" a >/dev/null 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] && grep -q "its action is drop" "$SCRATCH/err" || die "blob: lfs: exit $rc: $(cat "$SCRATCH/err")"
info "refusals: a word that is no id (file:line:column), a blob: rule that does not drop"
EOF

test_done
