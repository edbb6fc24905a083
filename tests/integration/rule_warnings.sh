#!/usr/bin/env bash
# rule_warnings.sh - rule files that warn (issue 11, item 6):
#  - a rule an earlier rule always beats (the same pattern, or `*` before
#    it, with a size condition that covers its own) is a warning naming
#    both lines, from check-rules, the filter and run; --quiet silences
#    it; it is never an error (exit 0, the same stream);
#  - near misses (an earlier rule with a narrower size condition) say
#    nothing;
#  - after a run the report (text and JSON) lists the rules that matched
#    no path, and git agrees on which paths there are.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

R="$SCRATCH/w.rules"
# line 3 loses to line 1, line 7 to line 6; line 4 (no condition) does
# not lose to line 2 (size>=1MB); line 2 and line 5 match no file
cat >"$R" <<'RULES'
*.psd keep
*.bin size>=1MB drop
*.psd drop
*.bin keep
re:\.zip$ drop
* keep
*.txt drop
RULES
WARN="$R:3: warning: rule never matches: line 1 ('*.psd') always wins
$R:7: warning: rule never matches: line 6 ('*') always wins"

# check_warn NAME ERRFILE: ERRFILE holds exactly the two warnings
check_warn() {
	[ "$(cat "$2")" = "$WARN" ] || die "$1: stderr is not the two warnings: $(cat "$2")"
	info "$1: warns about lines 3 and 7, exit 0"
}

test_case "check-rules" <<'EOF'
rc=0
"$MIGRATE" check-rules --rules "$R" a.psd b.txt >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 0 ] || die "check-rules: exit $rc: $(cat "$SCRATCH/err")"
check_warn "check-rules" "$SCRATCH/err"
[ "$(cut -f2 "$SCRATCH/out" | tr '\n' ' ')" = "$R:1 $R:6 " ] ||
	die "check-rules answers: $(cat "$SCRATCH/out")"
"$MIGRATE" check-rules -q --rules "$R" a.psd >/dev/null 2>"$SCRATCH/err" ||
	die "check-rules -q failed"
[ ! -s "$SCRATCH/err" ] || die "check-rules -q still warns: $(cat "$SCRATCH/err")"
printf '*.bin size>=2MB drop\n*.bin size>=1MB keep\n* size>=1 keep\n*.txt keep\n' >"$SCRATCH/near.rules"
"$MIGRATE" check-rules --rules "$SCRATCH/near.rules" a.bin >/dev/null 2>"$SCRATCH/err" ||
	die "check-rules on near misses failed"
[ ! -s "$SCRATCH/err" ] || die "near misses warn: $(cat "$SCRATCH/err")"
info "check-rules: -q silent; near misses (narrower earlier conditions) silent"
EOF

SRC="$SCRATCH/src"
test_case "the filter" <<'EOF'
git init -q "$SRC" && mkdir -p "$SRC/dir"
echo psd >"$SRC/a.psd"
echo text >"$SRC/b.txt"
echo small >"$SRC/dir/c.bin"
git -C "$SRC" add -A && git -C "$SRC" commit -qm one
export_stream "$SRC" >"$SCRATCH/in.fe"
(cd "$SRC" && "$MIGRATE" --rules "$R") <"$SCRATCH/in.fe" >"$SCRATCH/a.fi" 2>"$SCRATCH/err" ||
	die "the filter failed: $(cat "$SCRATCH/err")"
check_warn "filter" "$SCRATCH/err"
(cd "$SRC" && "$MIGRATE" --quiet --rules "$R") <"$SCRATCH/in.fe" >"$SCRATCH/b.fi" 2>"$SCRATCH/err" ||
	die "the filter --quiet failed: $(cat "$SCRATCH/err")"
[ ! -s "$SCRATCH/err" ] || die "the filter --quiet still warns: $(cat "$SCRATCH/err")"
cmp -s "$SCRATCH/a.fi" "$SCRATCH/b.fi" || die "the warning changed the stream"
info "filter: --quiet silent, the same stream"
EOF

NEW="$SCRATCH/new"
TXT="$NEW/.git/migrate/report.txt"
test_case "run, and its report" <<'EOF'
(cd "$SRC" && "$MIGRATE" run --rules "$R" --to "$NEW") >/dev/null 2>"$SCRATCH/err" ||
	die "run failed: $(cat "$SCRATCH/err")"
[ "$(grep -c 'warning: rule never matches' "$SCRATCH/err")" = 2 ] &&
	grep -qxF "$R:3: warning: rule never matches: line 1 ('*.psd') always wins" "$SCRATCH/err" &&
	grep -qxF "$R:7: warning: rule never matches: line 6 ('*') always wins" "$SCRATCH/err" ||
	die "run: not the two warnings: $(cat "$SCRATCH/err")"
info "run: warns about lines 3 and 7 once"
[ "$(sed -n '/^rules that matched nothing:$/,/^$/p' "$TXT")" = "rules that matched nothing:
  $R:2 *.bin
  $R:3 *.psd
  $R:5 re:\"\\\\.zip\$\"
  $R:7 *.txt" ] || die "the text report does not list lines 2 3 5 7: $(cat "$TXT")"
python3 - "$NEW/.git/migrate/report.json" "$NEW" <<'PY' || die "the JSON report is wrong"
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
un = [(r["line"], r["pattern"], r["action"]) for r in d["unmatched_rules"]]
assert un == [(2, "*.bin", "drop"), (3, "*.psd", "drop"), (5, "re:\\.zip$", "drop"),
              (7, "*.txt", "drop")], un
# the same rules the per-rule counts call empty
assert [r["line"] for r in d["rules"] if r["paths"] == 0] == [u[0] for u in un]
# git: every file is still there (nothing dropped), so the drop rules matched nothing
files = subprocess.run(["git", "-C", sys.argv[2], "ls-tree", "-r", "--name-only", "HEAD"],
                       check=True, capture_output=True, text=True).stdout.split()
assert sorted(files) == ["a.psd", "b.txt", "dir/c.bin"], files
assert sum(r["paths"] for r in d["rules"]) == len(files)
PY
info "report: text and JSON list the rules that matched nothing (2 3 5 7)"
EOF
test_done
