#!/usr/bin/env bash
# messages.sh - messages a person can act on (issue 11):
#  - an unknown or misspelled option names itself and suggests the nearest
#    one (git's style), in the filter, run, remap and check-rules; a missing
#    value names the option; exit 1, nothing on standard output;
#  - one prefix for every error: "migrate: error: " (the filter) and
#    "migrate CMD: error: " (a command), and nothing of git's own "fatal:"
#    lines reaches the terminal;
#  - outside a repository, or with a --repo that is not one, run is a usage
#    error (exit 1) in our words that quotes git's reason;
#  - a split outside a repository (nothing to read objects from) works, says
#    nothing, and writes the stream it writes inside the repository;
#  - check-rules takes PATH:SIZE with the units rules use (60MB, 1GiB);
#  - --progress to a file writes newline-ended lines, no carriage return.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

NOREPO="$SCRATCH/norepo"
mkdir -p "$NOREPO"
export GIT_CEILING_DIRECTORIES="$SCRATCH"

# expect NAME STATUS 'LINE1' ['LINE2'] -- CMD...: runs CMD in $NOREPO; its
# exit status and the first lines of its stderr must be these, exactly,
# its stdout empty, and no line of stderr may start with "fatal:"
expect() {
	local name="$1" want="$2" l1="$3" l2="" rc=0
	shift 3
	if [ "$1" != -- ]; then
		l2="$1"
		shift
	fi
	shift
	(cd "$NOREPO" && "$@") </dev/null >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
	[ "$rc" = "$want" ] || die "$name: exit $rc, not $want: $(cat "$SCRATCH/err")"
	[ "$(sed -n 1p "$SCRATCH/err")" = "$l1" ] ||
		die "$name: says '$(sed -n 1p "$SCRATCH/err")', not '$l1'"
	if [ -n "$l2" ]; then
		[ "$(sed -n 2p "$SCRATCH/err")" = "$l2" ] ||
			die "$name: second line '$(sed -n 2p "$SCRATCH/err")', not '$l2'"
	fi
	[ ! -s "$SCRATCH/out" ] || die "$name: wrote to standard output"
	! grep -q '^fatal:' "$SCRATCH/err" || die "$name: git's fatal leaked: $(cat "$SCRATCH/err")"
	info "$name: $(head -1 "$SCRATCH/err")"
}

test_case "options" <<'EOF'
expect "filter, misspelled" 1 "migrate: error: unknown option 'rulse'" \
	"did you mean '--rules'?" -- "$MIGRATE" --rulse R
expect "filter, misspelled with a value" 1 "migrate: error: unknown option 'comit-map'" \
	"did you mean '--commit-map'?" -- "$MIGRATE" --comit-map=M
expect "filter, unknown" 1 "migrate: error: unknown option 'frobnicate'" \
	"(see migrate --help)" -- "$MIGRATE" --frobnicate
expect "filter, unknown switch" 1 "migrate: error: unknown switch 'x'" -- "$MIGRATE" -x
expect "filter, missing value" 1 "migrate: error: option '--rules' needs a value" -- "$MIGRATE" --rules
expect "run, misspelled" 1 "migrate run: error: unknown option 'rulse'" \
	"did you mean '--rules'?" -- "$MIGRATE" run --rulse R --to "$SCRATCH/new"
expect "run, misspelled flag" 1 "migrate run: error: unknown option 'in-plcae'" \
	"did you mean '--in-place'?" -- "$MIGRATE" run --in-plcae
expect "run, missing value" 1 "migrate run: error: option '--to' needs a value" -- "$MIGRATE" run --to
expect "remap, misspelled" 1 "migrate remap: error: unknown option 'comit-map'" \
	"did you mean '--commit-map'?" -- "$MIGRATE" remap --comit-map M
expect "check-rules, misspelled" 1 "migrate check-rules: error: unknown option 'rusle'" \
	"did you mean '--rules'?" -- "$MIGRATE" check-rules --rusle R
[ ! -e "$SCRATCH/new" ] || die "a refused run created its target"
EOF

test_case "outside a repository, a --repo that is not one" <<'EOF'
expect "run outside a repository" 1 \
	"migrate run: error: . is not a git repository (git: not a git repository (or any of the parent directories): .git)" \
	-- "$MIGRATE" run --to "$SCRATCH/new" -q
expect "run --repo missing" 1 \
	"migrate run: error: $SCRATCH/nowhere is not a git repository (git: cannot change to '$SCRATCH/nowhere': No such file or directory)" \
	-- "$MIGRATE" run --repo "$SCRATCH/nowhere" --to "$SCRATCH/new"
expect "run --repo not a repository" 1 \
	"migrate run: error: $NOREPO is not a git repository (git: not a git repository (or any of the parent directories): .git)" \
	-- "$MIGRATE" run --repo "$NOREPO" --in-place
[ ! -e "$SCRATCH/new" ] || die "a refused run created its target"
EOF

test_case "the same prefix for errors found later" <<'EOF'
printf '*.bin lfs size>>3\n' >"$SCRATCH/bad.rules"
expect "bad rule file" 1 "migrate: error: $SCRATCH/bad.rules:1:11: size conditions go before the action" \
	-- "$MIGRATE" --rules "$SCRATCH/bad.rules"
rc=0
printf 'blob\nmark :1\ndata 10\nabc' | (cd "$NOREPO" && "$MIGRATE") >/dev/null 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 2 ] && grep -q '^migrate: error: ' "$SCRATCH/err" ||
	die "a truncated stream: exit $rc, $(cat "$SCRATCH/err")"
info "truncated stream: $(head -1 "$SCRATCH/err")"
EOF

test_case "a split outside a repository: silent, the same stream" <<'EOF'
"$HERE/make_tricky_repo.sh" "$SCRATCH/tricky" >/dev/null
H="$SCRATCH/hist"
git init -q "$H" && mkdir -p "$H/data"
printf 'CVE-2024-0002 (two)\n\tNOTE: b\nCVE-2023-0001 (one)\n' >"$H/data/list"
git -C "$H" add -A && git -C "$H" commit -qm list
printf "data/list split record='^CVE-(\\\\d{4})-' into='data/list.{1}'\n" >"$SCRATCH/split.rules"
export_stream "$H" >"$SCRATCH/in.fe"
(cd "$H" && run_migrate --rules "$SCRATCH/split.rules") <"$SCRATCH/in.fe" >"$SCRATCH/in-repo.fi" ||
	die "the split in the repository failed"
rc=0
(cd "$NOREPO" && "$MIGRATE" --rules "$SCRATCH/split.rules") <"$SCRATCH/in.fe" \
	>"$SCRATCH/no-repo.fi" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 0 ] || die "the split outside a repository: exit $rc: $(cat "$SCRATCH/err")"
[ ! -s "$SCRATCH/err" ] || die "the split outside a repository said: $(cat "$SCRATCH/err")"
cmp -s "$SCRATCH/in-repo.fi" "$SCRATCH/no-repo.fi" || die "the split outside a repository wrote another stream"
info "a split outside a repository: silent, the same stream"
EOF
test_case "check-rules sizes with the units of rules; --progress to a file" <<'EOF'
printf '*.bin size>=60MB lfs\n' >"$SCRATCH/size.rules"
"$MIGRATE" check-rules --rules "$SCRATCH/size.rules" a.bin:60MB a.bin:59999999 \
	a.bin:1GiB a.bin:60MiB >"$SCRATCH/out" || die "check-rules with sizes failed"
[ "$(awk -F'\t' '{ printf "%s %s;", $1, (NF == 2 ? $2 : $3) }' "$SCRATCH/out")" = \
	"a.bin lfs;a.bin no rule;a.bin lfs;a.bin lfs;" ] ||
	die "check-rules PATH:SIZE with units: $(cat "$SCRATCH/out")"
info "check-rules: PATH:60MB, PATH:1GiB read as sizes"
"$MIGRATE" --progress <"$SCRATCH/in.fe" >/dev/null 2>"$SCRATCH/progress" ||
	die "--progress run failed"
grep -q 'done in' "$SCRATCH/progress" || die "--progress wrote no summary: $(cat "$SCRATCH/progress")"
! grep -q $'\r' "$SCRATCH/progress" || die "--progress to a file wrote a carriage return"
[ "$(tail -c 1 "$SCRATCH/progress" | od -An -c | tr -d ' ')" = '\n' ] ||
	die "--progress to a file does not end its line"
info "--progress to a file: newline-ended lines"
EOF
test_done
