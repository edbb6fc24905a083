#!/usr/bin/env bash
# report_dryrun.sh - dry runs, reports, progress and message ids (issue 5):
#  - a dry run writes no store object and no stream, exits 0, and its
#    commit map, ref map and JSON report equal the real run's, byte for
#    byte, on the assets corpus (LFS) and the tracker corpus (split);
#  - the JSON report parses and has the documented shape, and its numbers
#    agree with git (commits, refs, LFS paths);
#  - progress appears on stderr when it is a terminal (script(1) gives a
#    pty), never on stdout, and --quiet silences it;
#  - commit messages naming old ids (full and abbreviated) name the new
#    ones after a rewrite; --no-rewrite-message-ids leaves them.
. "$(dirname "$0")/lib/lib.sh"

make_history "$SCRATCH/corpus"
ASSETS="$SCRATCH/corpus/assets"
TRACKER="$SCRATCH/corpus/tracker"
printf '*.bin lfs\n*.psd lfs\n*.zip size>=100kB lfs\n/docs/** drop\n' >"$SCRATCH/lfs.rules"
cat >"$SCRATCH/split.rules" <<'EOF'
data/CVE/list  split  record='^CVE-(\d{4})-'  into='data/CVE/list.{1}'  head='data/CVE/list.head'
EOF

# dry_vs_real NAME REPO RULES
dry_vs_real() {
	local name="$1" repo="$2" rules="$3" d="$SCRATCH/$1"
	mkdir -p "$d"
	export_stream "$repo" >"$d/in.fe"
	(cd "$repo" && run_migrate --rules "$rules" --dry-run --store "$d/dry-store" \
		--commit-map "$d/dry.map" --ref-map "$d/dry.refs" \
		--report "$d/dry.txt" --report-json "$d/dry.json") \
		<"$d/in.fe" >"$d/dry.stdout" || die "$name: dry run failed"
	[ ! -s "$d/dry.stdout" ] || die "$name: the dry run wrote a stream to stdout"
	[ ! -e "$d/dry-store" ] || [ -z "$(find "$d/dry-store" -type f)" ] ||
		die "$name: the dry run stored objects"
	git init -q "$d/new"
	(cd "$repo" && run_migrate --rules "$rules" --store "$d/new/.git/lfs/objects" \
		--commit-map "$d/real.map" --ref-map "$d/real.refs" \
		--report "$d/real.txt" --report-json "$d/real.json") \
		<"$d/in.fe" | git -C "$d/new" fast-import --quiet || die "$name: real run failed"
	for f in map refs json txt; do
		cmp -s "$d/dry.$f" "$d/real.$f" || die "$name: dry run and real run differ in $f"
	done
	info "$name: dry run = real run (commit map, ref map, reports); nothing stored or written"
}

test_case "assets (LFS): a dry run stores nothing, writes no stream, and its maps and reports are the real run's" <<'EOF'
dry_vs_real assets "$ASSETS" "$SCRATCH/lfs.rules"
EOF

test_case "tracker (split): a dry run stores nothing, writes no stream, and its maps and reports are the real run's" <<'EOF'
dry_vs_real tracker "$TRACKER" "$SCRATCH/split.rules"
EOF

# the cases below read the stream and reports of the two above
test_case "--dry-run -o FILE writes the real run's stream" <<'EOF'
# -o FILE: the dry run's stream, the same as the real one
(cd "$ASSETS" && run_migrate --rules "$SCRATCH/lfs.rules" --dry-run -o "$SCRATCH/dry.fi") \
	<"$SCRATCH/assets/in.fe" || die "dry run with -o failed"
(cd "$ASSETS" && run_migrate --rules "$SCRATCH/lfs.rules" --store "$SCRATCH/st") \
	<"$SCRATCH/assets/in.fe" >"$SCRATCH/real.fi" || die "real run failed"
cmp -s "$SCRATCH/dry.fi" "$SCRATCH/real.fi" || die "-o does not write the real run's stream"
EOF

test_case "the JSON report has the documented shape, and its numbers agree with git" <<'EOF'
# the JSON: shape and numbers, checked against git
python3 - "$SCRATCH/assets/real.json" "$SCRATCH/tracker/real.json" \
	"$ASSETS" "$SCRATCH/assets/new" <<'PY' || die "the JSON report is wrong"
import json, subprocess, sys
a, t, orig, new = sys.argv[1:5]
def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), check=True,
                          capture_output=True, text=True).stdout
d = json.load(open(a))
N = int
shape = {"version": N, "input": dict, "rules": list, "splits": list,
         "history": dict, "commits_rewritten": N, "refs_changed": N, "largest": list}
for k, ty in shape.items():
    assert isinstance(d[k], ty), k
for k in ("commits", "blobs", "blob_bytes", "refs"):
    assert isinstance(d["input"][k], int), k
for r in d["rules"]:
    for k in ("line", "pattern", "action", "paths", "blobs", "bytes", "packed_bytes_estimate"):
        assert k in r, k
    assert r["action"] in ("lfs", "annex", "drop", "keep", "split")
for k in ("blob_bytes_before", "blob_bytes_after", "packed_estimate_before", "packed_estimate_after"):
    assert isinstance(d["history"][k], int), k
for l in d["largest"]:
    assert len(l["blob"]) == 40 and l["bytes"] > 0 and l["path"]
commits = len(git(orig, "rev-list", "--all").split())
refs = len(git(new, "for-each-ref").splitlines())
assert d["input"]["commits"] == commits, (d["input"]["commits"], commits)
assert d["input"]["refs"] == refs, (d["input"]["refs"], refs)
assert d["commits_rewritten"] == commits
lfs_paths = set(git(new, "lfs", "ls-files", "--all", "--name-only").splitlines())
# the largest blobs listed are those that remain: none went to LFS
gone = [l["path"] for l in d["largest"] if l["path"] in lfs_paths]
assert not gone, ("largest lists converted blobs", gone)
# a rule counts every path it matched: the LFS files, and empty files
# (their own pointers) it named
matched = sum(r["paths"] for r in d["rules"] if r["action"] == "lfs")
empty = [l for l in git(new, "ls-tree", "-r", "-l", "--full-tree", "main").splitlines()
         if l.split()[3] == "0"]
assert len(lfs_paths) <= matched <= len(lfs_paths) + len(empty) + 1, (matched, len(lfs_paths))
assert d["history"]["blob_bytes_after"] < d["history"]["blob_bytes_before"]
drop = [r for r in d["rules"] if r["action"] == "drop"][0]
assert drop["paths"] > 0
s = json.load(open(t))["splits"]
assert len(s) == 1 and s[0]["path"] == "data/CVE/list" and s[0]["versions"] > 100 and s[0]["parts"] > 10
print("info: JSON report: shape and numbers agree with git (%d commits, %d refs, %d LFS paths)"
      % (commits, refs, len(lfs_paths)))
PY
EOF

test_case "progress goes to a terminal's stderr, never to stdout, and --quiet silences it" <<'EOF'
# progress: on a terminal's stderr, never on stdout; --quiet silences it
# (p.fi is compared with the stream of the -o case)
command -v script >/dev/null || die "script(1) is missing (bsdutils)"
# script(1) runs the command on a pty and records what the pty shows
script -qec "cd '$ASSETS' && '$MIGRATE' --rules '$SCRATCH/lfs.rules' --dry-run \
	-o '$SCRATCH/p.fi' <'$SCRATCH/assets/in.fe'" "$SCRATCH/p.tty" >/dev/null
grep -q 'migrate: .*commits, .* MB read, .*done in' "$SCRATCH/p.tty" ||
	die "no progress line on a terminal: $(cat "$SCRATCH/p.tty")"
cmp -s "$SCRATCH/p.fi" "$SCRATCH/dry.fi" || die "progress changed the stream"
script -qec "cd '$ASSETS' && '$MIGRATE' --quiet --rules '$SCRATCH/lfs.rules' --dry-run \
	<'$SCRATCH/assets/in.fe'" "$SCRATCH/q.tty" >/dev/null
! grep -q 'commits' "$SCRATCH/q.tty" || die "--quiet still printed: $(cat "$SCRATCH/q.tty")"
(cd "$ASSETS" && "$MIGRATE" --progress --rules "$SCRATCH/lfs.rules" --dry-run -o /dev/null) \
	<"$SCRATCH/assets/in.fe" >"$SCRATCH/stdout" 2>"$SCRATCH/forced.err"
[ ! -s "$SCRATCH/stdout" ] || die "progress went to stdout"
grep -q 'done in' "$SCRATCH/forced.err" || die "--progress printed nothing"
info "progress: on the terminal's stderr, never on stdout, silenced by --quiet"
EOF

# message ids: full and abbreviated old ids become the new ones
M="$SCRATCH/msg"
git init -q "$M"
printf 'secret\n' >"$M/secret.txt"
printf 'a\n' >"$M/a.txt"
git -C "$M" add -A && git -C "$M" commit -qm "first"
first=$(git -C "$M" rev-parse HEAD)
printf 'b\n' >>"$M/a.txt" && git -C "$M" commit -qam "second"
second=$(git -C "$M" rev-parse HEAD)
printf 'c\n' >>"$M/a.txt"
git -C "$M" commit -qam "Fixes $first and ${second:0:9}; not an id: deadbeefcafe"
printf 'secret.txt drop\n' >"$SCRATCH/drop.rules"
export_stream "$M" >"$SCRATCH/msg.fe"

test_case "old ids in messages, full and abbreviated, become the new ones; --no-rewrite-message-ids leaves them" <<'EOF'
for mode in rewrite keep; do
	flag=()
	[ "$mode" = keep ] && flag=(--no-rewrite-message-ids)
	git init -q "$SCRATCH/msg-$mode"
	(cd "$M" && run_migrate --rules "$SCRATCH/drop.rules" "${flag[@]}" \
		--commit-map "$SCRATCH/msg-$mode.map") <"$SCRATCH/msg.fe" |
		git -C "$SCRATCH/msg-$mode" fast-import --quiet || die "message run failed"
done
new_first=$(awk -v o="$first" '$1 == o { print $2 }' "$SCRATCH/msg-rewrite.map")
new_second=$(awk -v o="$second" '$1 == o { print $2 }' "$SCRATCH/msg-rewrite.map")
[ "$new_first" != "$first" ] || die "the drop rule did not change the first commit"
msg=$(git -C "$SCRATCH/msg-rewrite" log -1 --format=%s main)
[ "$msg" = "Fixes $new_first and ${new_second:0:9}; not an id: deadbeefcafe" ] ||
	die "message not rewritten: '$msg'"
msg=$(git -C "$SCRATCH/msg-keep" log -1 --format=%s main)
[ "$msg" = "Fixes $first and ${second:0:9}; not an id: deadbeefcafe" ] ||
	die "--no-rewrite-message-ids changed the message: '$msg'"
info "message ids: full and abbreviated ids rewritten, unknown hex left, opt-out kept"
EOF

# the two cases below continue from the maps and repository of the one above
test_case "a commit an earlier run dropped keeps its old id in messages, never zeros" <<'EOF'
new_second=$(awk -v o="$second" '$1 == o { print $2 }' "$SCRATCH/msg-rewrite.map")
[ -n "$new_second" ] || die "no map of the message run (the case before failed)"
# a commit an earlier run dropped (40 zeros in the map, as git-filter-repo
# writes for a pruned commit) keeps its old id in messages, never zeros;
# history goes on from where the pruning moved its branch (the next case)
git -C "$M" commit -q --allow-empty -m "Reverts $first, see ${second:0:8}"
zeros=0000000000000000000000000000000000000000
sed "s/^$first .*/$first $zeros/" "$SCRATCH/msg-rewrite.map" >"$SCRATCH/msg-drop.map"
grep -q "^$first $zeros\$" "$SCRATCH/msg-drop.map" || die "could not edit the map"
(cd "$M" && git fast-export --show-original-ids --reference-excluded-parents \
	--signed-tags=verbatim --reencode=no main~1..main) >"$SCRATCH/msg-more.fe"
(cd "$M" && run_migrate --rules "$SCRATCH/drop.rules" \
	--commit-map "$SCRATCH/msg-drop.map" --target-repo "$SCRATCH/msg-rewrite") \
	<"$SCRATCH/msg-more.fe" |
	git -C "$SCRATCH/msg-rewrite" fast-import --quiet --force ||
	die "incremental message run failed"
msg=$(git -C "$SCRATCH/msg-rewrite" log -1 --format=%s main)
[ "$msg" = "Reverts $first, see ${new_second:0:8}" ] ||
	die "dropped commit's id not kept as it was: '$msg'"
info "message ids: a dropped commit's id stays as it was"
EOF

test_case "history continues from a dropped commit's stand-in (pruned: its first parent's new commit)" <<'EOF'
[ -s "$SCRATCH/msg-drop.map" ] || die "no map with a dropped commit (the case before failed)"
# (fast-export names the commit's ref "main~2", which fast-import and now
# migrate refuse: give it a real branch name)
(cd "$M" && git fast-export --show-original-ids --reference-excluded-parents \
	main~3..main~2) | sed 's/^commit main~2$/commit refs\/heads\/main/' \
	>"$SCRATCH/msg-after-dropped.fe"
git init -q "$SCRATCH/after-dropped"
(cd "$M" && run_migrate --commit-map "$SCRATCH/msg-drop.map" \
	--target-repo "$SCRATCH/msg-rewrite") <"$SCRATCH/msg-after-dropped.fe" 2>"$SCRATCH/dropped.err" |
	git -C "$SCRATCH/after-dropped" fast-import --quiet ||
	die "continuing from a dropped commit: $(cat "$SCRATCH/dropped.err")"
# first was a root: nothing is left below it, its child becomes a root
[ "$(git -C "$SCRATCH/after-dropped" rev-list --count main)" = 1 ] &&
	[ "$(git -C "$SCRATCH/after-dropped" log -1 --format=%s main)" = second ] ||
	die "the child of a dropped root is not a root: $(git -C "$SCRATCH/after-dropped" log --oneline main)"
info "message ids: the child of a dropped commit goes on from what is left below it (a root)"
EOF

test_done
