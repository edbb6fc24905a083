#!/usr/bin/env bash
# sha256.sh - a sha256 repository is refused by name everywhere (issue 28,
# item 7) until migrate computes sha256 ids: the filter (the stream of a
# sha256 repository exited 0 with sha1 ids in every map), analyze (it
# failed with "unexpected line"), remap and run, each with exit status 1
# and nothing written.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

S="$SCRATCH/sha256"
git init -q --object-format=sha256 "$S"
( cd "$S" && echo a >a.txt && git add a.txt && git commit -qm a )
git -C "$S" fast-export --all >"$SCRATCH/s.fe"	# no original ids: nothing in it says sha256

expect_sha256_refusal() { # NAME CMD...: exit 1, the format named
	local name="$1" rc=0
	shift
	"$@" >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null || rc=$?
	[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "$name: exit $rc, not 1"; }
	grep -q "uses sha256 object ids; sha256 repositories are not supported yet" "$SCRATCH/err" ||
		{ cat "$SCRATCH/err" >&2; die "$name: the object format is not named"; }
}
test_case "the filter, in the repository and with --source-repo: refused, nothing written" <<'EOF'
( cd "$S" && expect_sha256_refusal "the filter" "$MIGRATE" --commit-map "$SCRATCH/map" \
	< "$SCRATCH/s.fe" )
rc=0
(cd "$S" && "$MIGRATE" --commit-map "$SCRATCH/map" <"$SCRATCH/s.fe" >"$SCRATCH/out" 2>"$SCRATCH/err") || rc=$?
[ "$rc" = 1 ] || die "the filter in a sha256 repository: exit $rc"
[ ! -e "$SCRATCH/map" ] || die "the filter wrote a commit map of sha1 ids"
[ ! -s "$SCRATCH/out" ] || die "the filter wrote a stream"
expect_sha256_refusal "the filter, --source-repo" "$MIGRATE" --source-repo "$S"
EOF

test_case "analyze: refused by name" <<'EOF'
expect_sha256_refusal "analyze" "$MIGRATE" analyze --repo "$S"
EOF

test_case "remap: refused by name" <<'EOF'
( cd "$S" && expect_sha256_refusal "remap" "$MIGRATE" remap --commit-map "$SCRATCH/s.fe" )
EOF

test_case "run: refused by name, no state written" <<'EOF'
printf '*.bin lfs\n' >"$SCRATCH/rules"
expect_sha256_refusal "run" "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$S" --in-place
[ ! -e "$S/.git/migrate" ] || die "run wrote a state into the sha256 repository"
info "a sha256 repository: the filter, analyze, remap and run refuse it by name (exit 1), nothing written"
EOF

test_done
