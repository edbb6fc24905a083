#!/usr/bin/env bash
# run_numbers.sh - the ending of `migrate run` and of its preview says what
# each action took, and it is what the report says (issue 28, item 8): the
# "by action" line's counts equal the sums of the report's per-rule blob
# counts (report.json), for lfs, drop, split and replace-text rules at once,
# the preview's line equal the run's. The report names each rule with its
# size condition.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

R="$SCRATCH/repo"
git init -q "$R"
(
	cd "$R"
	for i in 1 2 3 4; do
		head -c $((2000 * i)) /dev/zero | tr '\0' "$i" >"art$i.bin"
		printf 'key=SECRET%s\n' "$i" >"conf$i.txt"
		printf 'A%s\nB%s\n' "$i" "$i" >>records.txt
		echo "junk $i" >junk.log
		git add -A && git commit -qm "commit $i"
	done
)
printf 'SECRET==>REDACTED\n' >"$SCRATCH/expr"
cat >"$SCRATCH/rules" <<RULES
*.bin lfs
*.log drop
records.txt split record='^(.)' into='records/{1}.txt'
conf*.txt replace-text=$SCRATCH/expr
RULES
test_case "the ending and the preview count by action as report.json does" <<'EOF'
run_migrate run --rules "$SCRATCH/rules" --repo "$R" --to "$SCRATCH/prev" --dry-run \
	--report-json "$SCRATCH/dry.json" 2>"$SCRATCH/dry.err" || die "the preview failed"
run_migrate run --rules "$SCRATCH/rules" --repo "$R" --to "$SCRATCH/new" 2>"$SCRATCH/run.err" ||
	die "the run failed"
want=$(python3 - "$SCRATCH/new/.git/migrate/report.json" <<'PY'
import json, sys
names = {'lfs': 'to LFS', 'annex': 'to git-annex', 'drop': 'dropped', 'split': 'split',
         'unlfs': 'back from LFS', 'replace-text': 'replaced'}
order = ['lfs', 'annex', 'drop', 'split', 'unlfs', 'replace-text']
sums = {}
for r in json.load(open(sys.argv[1]))['rules']:
    a = r['action'].split('=')[0]
    sums[a] = sums.get(a, 0) + r['blobs']
print(', '.join('%d %s' % (sums[a], names[a]) for a in order if sums.get(a)))
PY
)
[ -n "$want" ] || die "the report counts nothing"
grep -qF "migrate run: by action: $want (distinct blobs, as the report counts them)" "$SCRATCH/run.err" ||
	die "the ending's counts are not the report's ($want): $(grep 'by action' "$SCRATCH/run.err")"
grep -qF "migrate run: by action, what would be: $want (" "$SCRATCH/dry.err" ||
	die "the preview's counts are not the run's: $(grep 'by action' "$SCRATCH/dry.err")"
# the sizes: the ending says what the report's table says, in its units
# (it said 0.0 MB where the table said 31.8 kB)
sizes=$(sed -n 's/^history blobs: //p' "$SCRATCH/new/.git/migrate/report.txt")
[ -n "$sizes" ] || die "the report has no history line"
grep -qxF "migrate run: history blobs $sizes" "$SCRATCH/run.err" ||
	die "the ending's sizes are not the report's ($sizes): $(grep 'history blobs' "$SCRATCH/run.err")"
info "the ending and the preview: by action: $want, as report.json counts them; sizes as the report's"
EOF

test_case "the report shows each rule's size condition" <<'EOF'
# two rules of one pattern: the report tells them apart by their size
# conditions (table and JSON)
printf '*.bin size>5kB lfs\n*.bin drop\n' >"$SCRATCH/size.rules"
run_migrate run -q --rules "$SCRATCH/size.rules" --repo "$R" --to "$SCRATCH/sized" \
	--report "$SCRATCH/sized.txt" || die "the run with size rules failed"
grep -Eq '^1 +\*\.bin size>=5001 +lfs +2 +2 ' "$SCRATCH/sized.txt" ||
	die "the table does not show the size condition: $(grep -n 'bin' "$SCRATCH/sized.txt" | head -3)"
grep -Eq '^2 +\*\.bin +drop +2 +2 ' "$SCRATCH/sized.txt" || die "the second rule's row: $(cat "$SCRATCH/sized.txt")"
python3 - "$SCRATCH/sized/.git/migrate/report.json" <<'PY' || die "report.json lacks the size condition"
import json, sys
r = json.load(open(sys.argv[1]))['rules']
assert r[0]['size_min'] == 5001 and 'size_max' not in r[0], r[0]
assert 'size_min' not in r[1], r[1]
PY
info "two rules of one pattern: the report shows each one's size condition (size>=5001)"
EOF

test_case "progress counts the bytes a split reads from the repository" <<'EOF'
# run exports without data: the split's versions are read from the
# repository, and "MB read" must count them (it said 0.0 MB)
S="$SCRATCH/split"
git init -q "$S"
for i in 1 2 3; do
	python3 -c "import sys
for y in range(2000, 2010):
    for k in range(2000 * $i):
        sys.stdout.write('%d-%05d a record of the tracker, some text\\n' % (y, k))" >"$S/data.txt"
	git -C "$S" add -A && git -C "$S" commit -qm "version $i"
done
printf "data.txt split record='^(\\\\d{4})-' into='data/{1}.txt'\n" >"$SCRATCH/split.rules"
run_migrate run --progress --rules "$SCRATCH/split.rules" --repo "$S" --to "$SCRATCH/split-new" \
	2>"$SCRATCH/split.err" || die "the split run failed"
bytes=$(git -C "$S" rev-list --objects --all | awk '$2 == "data.txt" {print $1}' |
	git -C "$S" cat-file --batch-check='%(objectsize)' | awk '{s += $1} END {print s}')
read_mb=$(sed -n 's/.* commits, \([0-9.]*\) MB read,.*done in.*/\1/p' "$SCRATCH/split.err")
[ -n "$read_mb" ] || die "no final progress line: $(cat "$SCRATCH/split.err")"
python3 -c "import sys; sys.exit(not ($read_mb >= $bytes / 1e6 - 0.05))" ||
	die "progress says $read_mb MB read; the split read $bytes bytes of data.txt"
git -C "$SCRATCH/split-new" ls-tree -r --name-only main | grep -q '^data/2005.txt$' ||
	die "the split made no data/2005.txt"
# what it did, not "0 converted": the three versions split (and what
# the pool's workers read of them ahead, when they did)
grep -Eq 'MB/s, 3 split, ([0-9.]+ MB read ahead, )?done in' "$SCRATCH/split.err" ||
	die "the final progress line does not say the 3 versions split: $(grep 'done in' "$SCRATCH/split.err")"
info "a split reading $bytes bytes from the repository: progress says $read_mb MB read, 3 split"
EOF

test_done
