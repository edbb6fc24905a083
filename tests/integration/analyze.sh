#!/usr/bin/env bash
# analyze.sh - migrate analyze (issue 15, item 1), judged by the tools
# people know:
#  - every blob's sizes and the set of paths it had equal git filter-repo
#    --analyze's blob-shas-and-paths.txt (the assets history and the
#    tricky repository: renames, merges, symlinks, odd bytes in paths,
#    a notes ref, a submodule);
#  - per extension, files and bytes equal git lfs migrate info
#    --everything --unit=b's;
#  - "present" is true exactly for the blobs some ref's tip has (ls-tree);
#  - with --rules, each rule's paths, blobs and bytes equal the dry run's
#    --report-json, and the blobs said to remain are exactly the original
#    blobs the rewritten history still has;
#  - not a repository, a bad --top, an unknown option: one message, exit 1.
. "$(dirname "$0")/lib/lib.sh"

command -v git-filter-repo >/dev/null || die "git-filter-repo is not installed (scripts/lib.sh installs it)"

make_history "$SCRATCH/corpus"
ASSETS="$SCRATCH/corpus/assets"
TRICKY="$SCRATCH/tricky"
bash "$HERE/make_tricky_repo.sh" "$TRICKY" >"$SCRATCH/tricky.log" 2>&1 ||
	{ cat "$SCRATCH/tricky.log" >&2; die "make_tricky_repo.sh failed"; }

# compare_filter_repo NAME REPO: blob-shas-and-paths.txt against our JSON
compare_filter_repo() {
	local name="$1" repo="$2"
	(cd "$repo" && run_migrate analyze --top 0 --json "$SCRATCH/$name.json" \
		>"$SCRATCH/$name.txt") || die "$name: analyze failed"
	grep -q '^largest blobs' "$SCRATCH/$name.txt" || die "$name: no table"
	(cd "$repo" && git filter-repo --analyze --force --report-dir "$SCRATCH/$name.fr" \
		>/dev/null) || die "$name: git filter-repo --analyze failed"
	python3 - "$SCRATCH/$name.json" "$SCRATCH/$name.fr/blob-shas-and-paths.txt" \
		"$name" <<'PY' || die "$name: analyze disagrees with git filter-repo --analyze"
import json, re, sys
d = json.load(open(sys.argv[1]))
def path(p):
    return p['path'].encode() if p['path'] is not None else bytes.fromhex(p['path_hex'])
ours = {b['blob']: (b['bytes'], b['disk_bytes'], sorted(path(p) for p in b['paths']))
        for b in d['blobs']}
theirs = {}
# one record per blob; a path with a newline continues on the next lines
data = open(sys.argv[2], 'rb').read()
assert data.startswith(b'=== Files by sha'), data[:40]
recs = re.split(rb'\n  (?=[0-9a-f]{40} +\d+ +\d+ )', data.split(b'\n', 2)[2].rstrip(b'\n'))
for l in recs:
    l = l[2:] if l.startswith(b'  ') else l
    if not l.strip():
        continue
    sha, us, ps, names = l.split(None, 3)
    sha = sha.decode()
    if names.startswith(b'[') and names.endswith(b']') and \
            set(ours.get(sha, (0, 0, []))[2]) != {names}:
        names = names[1:-1].split(b', ')
    else:
        names = [names]
    theirs[sha] = (int(us), int(ps), sorted(names))
bad = [(k, ours.get(k), theirs.get(k)) for k in set(ours) | set(theirs)
       if ours.get(k) != theirs.get(k)]
for b in bad[:10]:
    print('differs:', b)
assert len(ours) > 10, len(ours)
assert not bad, '%d blobs differ' % len(bad)
assert d['totals']['blobs'] == len(ours)
print('info: %s: %d blobs, their paths and sizes as git filter-repo --analyze says'
      % (sys.argv[3], len(ours)))
PY
}

test_case "the assets history: every blob's sizes and paths as git filter-repo --analyze says" <<'EOF'
compare_filter_repo assets "$ASSETS"
EOF

test_case "the tricky repository: every blob's sizes and paths as git filter-repo --analyze says" <<'EOF'
compare_filter_repo tricky "$TRICKY"
EOF

# the cases below read the JSON the two above wrote ($SCRATCH/NAME.json)
test_case "per extension, files and bytes as git lfs migrate info --everything says" <<'EOF'
(cd "$ASSETS" && git lfs migrate info --everything --unit=b --top=1000) \
	>"$SCRATCH/lfs-info.txt" 2>/dev/null || die "git lfs migrate info failed"
python3 - "$SCRATCH/assets.json" "$SCRATCH/lfs-info.txt" <<'PY' || die "extensions disagree with git lfs migrate info"
import json, re, sys
d = json.load(open(sys.argv[1]))
ours = {x['extension']: (x['files'], x['bytes']) for x in d['extensions']}
n = 0
for line in open(sys.argv[2]):
    m = re.match(r'^(\S+)\s+(\d+)\s+(\d+)/(\d+) files?\s', line)
    if not m:
        continue
    ext, size, files = m.group(1), int(m.group(2)), int(m.group(4))
    assert ours.get(ext) == (files, size), (ext, ours.get(ext), (files, size))
    n += 1
assert n >= 5 and n == len(ours), (n, len(ours))
print('info: assets: %d extensions, files and bytes as git lfs migrate info says' % n)
PY
EOF

# present: exactly the blobs of some ref's tip
for repo in "$ASSETS" "$TRICKY"; do
	git -C "$repo" for-each-ref --format='%(objectname)' |
		while read -r ref; do
			git -C "$repo" rev-parse -q --verify "$ref^{tree}" 2>/dev/null || true
		done | sort -u | while read -r tree; do
			git -C "$repo" ls-tree -r "$tree" | awk '$2 == "blob" {print $3}'
		done | sort -u >"$SCRATCH/tips-$(basename "$repo")"
done

test_case "present is true exactly for the blobs some ref's tip has (ls-tree)" <<'EOF'
for name in assets tricky; do
	python3 - "$SCRATCH/$name.json" "$SCRATCH/tips-$name" "$name" <<'PY' || die "$name: present is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
tips = set(open(sys.argv[2]).read().split())
ours = {b['blob'] for b in d['blobs'] if b['present']}
assert ours == tips & {b['blob'] for b in d['blobs']}, (len(ours), len(tips))
assert any(not b['present'] for b in d['blobs']), 'nothing deleted: the test is blind'
print('info: %s: %d blobs present at a tip, as ls-tree says' % (sys.argv[3], len(ours)))
PY
done
EOF

# --rules: the dry run's report, and what the real run leaves
printf '*.bin lfs\n*.psd lfs\n*.zip size>=100kB lfs\n/docs/** drop\n*.md keep\n*.nothing drop\n' \
	>"$SCRATCH/lfs.rules"
test_case "with --rules, each rule's paths, blobs and bytes are the run's report, and the blobs said to remain are exactly those the new history has" <<'EOF'
(cd "$ASSETS" && run_migrate analyze --rules "$SCRATCH/lfs.rules" --top 0 \
	--json "$SCRATCH/rules.json" >"$SCRATCH/rules.txt") || die "analyze --rules failed"
grep -q '^what each rule would take' "$SCRATCH/rules.txt" || die "no rule table"
grep -q '^largest blobs that remain' "$SCRATCH/rules.txt" || die "no remaining blobs"
export_stream "$ASSETS" >"$SCRATCH/in.fe"
git init -q "$SCRATCH/new"
(cd "$ASSETS" && run_migrate --rules "$SCRATCH/lfs.rules" --store "$SCRATCH/new/.git/lfs/objects" \
	--report-json "$SCRATCH/report.json") <"$SCRATCH/in.fe" |
	git -C "$SCRATCH/new" fast-import --quiet || die "the real run failed"
git -C "$SCRATCH/new" rev-list --objects --all | cut -d' ' -f1 | sort -u >"$SCRATCH/new-objects"
python3 - "$SCRATCH/rules.json" "$SCRATCH/report.json" "$SCRATCH/new-objects" <<'PY' || die "analyze --rules disagrees with the run"
import json, sys
a = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
new = set(open(sys.argv[3]).read().split())
assert len(a['rules']) == len(r['rules']) == 6
for x, y in zip(a['rules'], r['rules']):
    for k in ('line', 'pattern', 'action', 'paths', 'blobs', 'bytes'):
        assert x[k] == y[k], (k, x, y)
assert any(x['blobs'] for x in a['rules']) and not a['rules'][5]['paths']
ours = {b['blob'] for b in a['remaining']['largest']}
orig = {b['blob'] for b in a['blobs']}
assert ours == orig & new, (len(ours), len(orig & new))
assert a['remaining']['blobs'] == len(ours) < len(orig)
assert a['remaining']['bytes'] == sum(b['bytes'] for b in a['remaining']['largest'])
print('info: rules: paths, blobs and bytes as the dry run reports; %d of %d blobs '
      'remain, exactly those the new history has' % (len(ours), len(orig)))
PY
EOF

test_case "--top N gives the N largest blobs, in order" <<'EOF'
(cd "$ASSETS" && run_migrate analyze --top 3 --json -) >"$SCRATCH/top.json" || die "--top 3 failed"
python3 - "$SCRATCH/top.json" "$SCRATCH/assets.json" <<'PY' || die "--top is wrong"
import json, sys
t = json.load(open(sys.argv[1]))['blobs']
a = json.load(open(sys.argv[2]))['blobs']
assert [b['blob'] for b in t] == [b['blob'] for b in a[:3]]
assert all(a[i]['bytes'] >= a[i + 1]['bytes'] for i in range(len(a) - 1))
PY
EOF

# refusals: one message, exit 1
test_case "not a repository, a bad --top, an unknown option, a missing rule file: one message, exit 1" <<'EOF'
mkdir "$SCRATCH/plain"
for args in "--repo $SCRATCH/plain" "--top x" "--topp 3" "--rules $SCRATCH/none.rules"; do
	rc=0
	# shellcheck disable=SC2086
	(cd "$ASSETS" && "$MIGRATE" analyze $args) >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
	[ "$rc" = 1 ] || die "analyze $args: exit $rc, expected 1"
	grep -q '^migrate analyze: error: ' "$SCRATCH/err" || die "analyze $args: $(cat "$SCRATCH/err")"
	[ ! -s "$SCRATCH/out" ] || die "analyze $args wrote to standard output"
done
info "refusals: not a repository, a bad --top, an unknown option, a missing rule file"
EOF

test_done
