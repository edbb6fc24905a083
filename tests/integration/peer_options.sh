#!/usr/bin/env bash
# peer_options.sh - an option of git lfs migrate, git filter-repo or BFG
# that migrate does not take names migrate's way of saying it (issue 28,
# item 2): exit 1, the peer named, and the rule it suggests is one the
# rule parser takes (migrate check-rules judges it).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

test_case "peer options name our way of saying them, a rule check-rules takes" <<'EOF'
n=0
for o in include exclude above fixup everything include-ref exclude-ref \
	strip-blobs-bigger-than path path-glob path-regex invert-paths \
	paths-from-file replace-text delete-files; do
	for cmd in run ""; do
		rc=0
		# shellcheck disable=SC2086
		"$MIGRATE" $cmd "--$o=x" </dev/null >/dev/null 2>"$SCRATCH/err" || rc=$?
		[ "$rc" = 1 ] || die "migrate $cmd --$o: exit $rc, not 1"
		grep -q "^migrate.*: error: unknown option '$o' (\(git lfs migrate\|git filter-repo\|BFG\)'s); in migrate: " \
			"$SCRATCH/err" || die "migrate $cmd --$o: no word of our way: $(cat "$SCRATCH/err")"
		# the rule it quotes parses
		rule=$(sed -n "s/.*in migrate: [^']*'\([^']* [^']*\)'.*/\1/p" "$SCRATCH/err" | head -1)
		if [ -n "$rule" ]; then
			printf '%s\n' "${rule//EXPRESSIONS/$SCRATCH/expr.txt}" >"$SCRATCH/r.rules"
			echo 'secret==>xxx' >"$SCRATCH/expr.txt"
			"$MIGRATE" check-rules --rules "$SCRATCH/r.rules" a/b.png:5MB >/dev/null 2>"$SCRATCH/cr.err" ||
				die "--$o: the suggested rule '$rule' does not parse: $(cat "$SCRATCH/cr.err")"
		fi
		n=$((n + 1))
	done
done
info "$n peer options (git lfs migrate, git filter-repo, BFG) refused with migrate's way of saying them; the rules quoted parse"
EOF

test_case "a near miss of our own option gets the nearest one" <<'EOF'
# a near miss of our own option still gets the nearest one, not a peer's
"$MIGRATE" run --inclde x </dev/null >/dev/null 2>"$SCRATCH/err" || true
grep -q "^migrate run: error: unknown option 'inclde'$" "$SCRATCH/err" || die "--inclde: $(cat "$SCRATCH/err")"
EOF

test_done
