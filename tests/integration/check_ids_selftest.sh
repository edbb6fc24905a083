#!/usr/bin/env bash
# check_ids_selftest.sh - the checker itself can fail. Builds, from plain
# git (no migrate), a correct set of marks, commit map and ref map for the
# tricky repository (fast-import's own marks and the original ids), checks
# that check_ids accepts it, then that it rejects each single corruption:
# a wrong id in the marks, a missing mark, a wrong or missing commit-map
# entry, a bad header, a wrong or missing ref-map entry, a wrong old id.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

ORIG="$SCRATCH/orig"
"$HERE/make_tricky_repo.sh" "$ORIG" >/dev/null
export_stream "$ORIG" >"$SCRATCH/in.fe"
import_stream "$SCRATCH/new" "$SCRATCH/X" <"$SCRATCH/in.fe"

# The correct answer, by construction.
cp "$SCRATCH/X" "$SCRATCH/MM"
{
	printf '%-40s %s\n' old new
	python3 "$HERE/stream_marks.py" marks "$SCRATCH/in.fe" |
		awk '$1 == "commit" { print $3, $2 }' |
		while read -r old mark; do
			printf '%s %s\n' "$old" "$(awk -v m="$mark" '$1 == m { print $2 }' "$SCRATCH/X")"
		done
} >"$SCRATCH/M"
git -C "$ORIG" for-each-ref --format='%(objectname) %(refname)' |
	while read -r old ref; do
		printf '%s %s %s\n' "$old" "$(git -C "$SCRATCH/new" rev-parse "$ref")" "$ref"
	done >"$SCRATCH/R"

check() { # check MM M R
	check_ids "$SCRATCH/in.fe" "$1" "$SCRATCH/X" "$2" "$3" "$SCRATCH/new" \
		--orig-repo "$ORIG" >"$SCRATCH/check.out" 2>&1
}
test_case "check_ids accepts the correct set, built with plain git" <<'EOF'
check "$SCRATCH/MM" "$SCRATCH/M" "$SCRATCH/R" || {
	cat "$SCRATCH/check.out"
	die "check_ids rejects a correct set"
}
EOF

flip() { # flip FILE LINE: change the last hex digit of line LINE
	awk -v n="$2" 'NR == n { c = substr($0, length($0)) ; sub(/.$/, c == "0" ? "1" : "0") } { print }' "$1"
}
flip_col2() { # flip_col2 FILE LINE: change the last digit of the 2nd field
	awk -v n="$2" 'NR == n { c = substr($2, 40, 1); $2 = substr($2, 1, 39) (c == "0" ? "1" : "0") } { print }' "$1"
}
M="$SCRATCH/M" R="$SCRATCH/R" MM="$SCRATCH/MM" B="$SCRATCH/bad"
expect_reject() { # expect_reject WHAT MM M R
	if check "$2" "$3" "$4"; then
		die "check_ids accepts $1"
	fi
	info "rejected: $1: $(grep -m1 '^FAIL' "$SCRATCH/check.out")"
}

test_case "check_ids rejects a wrong id in migrate's marks" <<'EOF'
flip "$MM" 3 >"$B.mm1"
expect_reject "a wrong id in migrate's marks" "$B.mm1" "$M" "$R"
EOF
test_case "check_ids rejects a missing mark" <<'EOF'
sed '2d' "$MM" >"$B.mm2"
expect_reject "a missing mark" "$B.mm2" "$M" "$R"
EOF
test_case "check_ids rejects a wrong new id in the commit map" <<'EOF'
flip "$M" 4 >"$B.m1"
expect_reject "a wrong new id in the commit map" "$MM" "$B.m1" "$R"
EOF
test_case "check_ids rejects a missing commit-map entry" <<'EOF'
sed '3d' "$M" >"$B.m2"
expect_reject "a missing commit-map entry" "$MM" "$B.m2" "$R"
EOF
test_case "check_ids rejects a commit map without header" <<'EOF'
tail -n +2 "$M" >"$B.m3"
expect_reject "a commit map without header" "$MM" "$B.m3" "$R"
EOF
test_case "check_ids rejects a wrong new id in the ref map" <<'EOF'
flip_col2 "$R" 2 >"$B.r1"
expect_reject "a wrong new id in the ref map" "$MM" "$M" "$B.r1"
EOF
test_case "check_ids rejects a missing ref-map entry" <<'EOF'
sed '1d' "$R" >"$B.r2"
expect_reject "a missing ref-map entry" "$MM" "$M" "$B.r2"
EOF
test_case "check_ids rejects a wrong old id in the ref map" <<'EOF'
awk 'NR == 1 { c = substr($1, 40, 1); $1 = substr($1, 1, 39) (c == "0" ? "1" : "0") } { print }' \
	"$R" >"$B.r3"
expect_reject "a wrong old id in the ref map" "$MM" "$M" "$B.r3"
EOF
test_case "check_ids rejects a missing marks file, commit map or ref map" <<'EOF'
expect_reject "no marks file" "$SCRATCH/none" "$M" "$R"
expect_reject "no commit map" "$MM" "$SCRATCH/none" "$R"
expect_reject "no ref map" "$MM" "$M" "$SCRATCH/none"
EOF

test_done
