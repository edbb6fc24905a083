#!/usr/bin/env bash
# corpus_git2008.sh - the spine on real history: git's own history up to
# v1.6.0 (../shared/corpus/git-history-2008.bundle: 15,649 commits, 228 refs).
#
# export -> migrate -> fast-import into a fresh repository, then:
#  - migrate's marks equal fast-import's, every one;
#  - the commit map agrees with fast-import's marks for every commit;
#  - the ref map agrees with 'git rev-parse' for every ref;
#  - the refs equal those of the plain 'fast-export | fast-import' pipeline.
# Prints how many commits and refs have old != new, and why (tests/README.md, "What scripts/test runs, in more words").
# Skipped (exit 77) when the bundle is not there.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

need_shared corpus/git-history-2008.bundle
BUNDLE="$SHARED/corpus/git-history-2008.bundle"

SRC="$SCRATCH/src.git"
git clone -q --mirror "$BUNDLE" "$SRC"
export_stream "$SRC" >"$SCRATCH/in.fe"
info "stream: $(wc -c <"$SCRATCH/in.fe") bytes, $(git -C "$SRC" rev-list --all | wc -l) commits," \
	"$(git -C "$SRC" for-each-ref | wc -l) refs"

# The plain pipeline, in the background meanwhile (two cores).
git init -q "$SCRATCH/plain"
git -C "$SCRATCH/plain" fast-import --quiet <"$SCRATCH/in.fe" &
plain_pid=$!
trap 'kill "$plain_pid" 2>/dev/null || true; wait || true; cleanup_scratch' EXIT

git init -q "$SCRATCH/new"

test_case "migrate | git fast-import takes git's history to v1.6.0" <<'EOF'
rc=0
run_migrate --commit-map "$SCRATCH/M" --ref-map "$SCRATCH/R" \
	--export-marks "$SCRATCH/MM" --source-repo "$SRC" <"$SCRATCH/in.fe" |
	git -C "$SCRATCH/new" fast-import --quiet --export-marks="$SCRATCH/X" ||
	rc=$?
[ "$rc" -eq 0 ] || die "the pipeline migrate | git fast-import failed"
EOF

# the cases below judge what the pipeline above wrote
test_case "migrate's marks, commit map and ref map are fast-import's ids, every one (check_ids)" <<'EOF'
check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" \
	"$SCRATCH/new" --orig-repo "$SRC" ||
	die "ids computed by migrate differ from fast-import's (git-history-2008)"
EOF

# Pass-through: the same refs as the plain pipeline (which itself changes
# ids, for the reasons explain_map.py prints). Waited for here, outside the
# cases: a case (a subshell) cannot wait for it.
plain_rc=0
wait "$plain_pid" || plain_rc=$?
test_case "the refs are those of the plain fast-export | fast-import pipeline" <<'EOF'
[ "$plain_rc" = 0 ] || die "git fast-import of the plain stream failed"
refs_of "$SCRATCH/plain" >"$SCRATCH/refs.plain"
refs_of "$SCRATCH/new" >"$SCRATCH/refs.new"
diff -u "$SCRATCH/refs.plain" "$SCRATCH/refs.new" >"$SCRATCH/refs.diff" || {
	head -n 40 "$SCRATCH/refs.diff"
	die "refs differ between 'fast-export | fast-import' and 'fast-export | migrate | fast-import'"
}
EOF

test_case "every commit and ref whose id changed is counted and its cause named (explain_map.py)" <<'EOF'
python3 "$HERE/explain_map.py" "$SRC" "$SCRATCH/M" "$SCRATCH/R"
EOF

test_done
