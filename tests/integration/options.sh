#!/usr/bin/env bash
# options.sh - one option table for the filter and `migrate run` (issue 10):
#  - `migrate --help` and `migrate run --help` list the options they share
#    with the same text; run lists exactly those and its own (--repo, --to,
#    --in-place, --verify-only, --rollback, --restart);
#  - every option a help lists is accepted there (`... --OPT [VALUE] --help`
#    exits 0), and the filter's options run does not list are unknown to
#    run, as run's own are to the filter;
#  - a misspelt shared option gets the same suggestion from both, and a bad
#    value the same message;
#  - the shared options mean the same: with the same --rules,
#    --[no-]rewrite-message-ids and --commit-map-format lfs, the pipeline
#    and `migrate run --to` write the same commit map; --quiet silences the
#    rule warning in both, --progress gives both a progress summary.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

SHARED_OPTS="above commit-map commit-map-format dry-run exclude fixup help include invert-paths lfs-objects missing no-prune-empty no-rewrite-message-ids object-reader path path-glob path-regex paths-from-file progress quiet ref-map replace-message report report-json rewrite-message-ids rules strip-blobs-bigger-than strip-blobs-with-ids threads verify-split"
RUN_ONLY="allow-no-rules everything exclude-ref in-place include-ref repo restart rollback to undo verify-only"

# options_of HELPFILE: 'NAME<US>ARG<US>ENTRY' (US: the byte 037) per option of the list after
# "Options:", ENTRY being the whole entry (names and help) on one line
options_of() {
	awk '
	/^Options:$/ { on = 1; next }
	on && /^$/ { on = 0 }
	!on { next }
	/^  -/ { if (entry != "") flush(); entry = $0; next }
	{ entry = entry " " $0 }
	END { if (entry != "") flush() }
	function flush(   names, n, i, w, a) {
		names = entry
		sub(/^  /, "", names)
		# the names end where two spaces or the end of the line come
		if (match(names, /  /))
			names = substr(names, 1, RSTART - 1)
		n = split(names, w, ", ")
		for (i = 1; i <= n; i++) {
			if (w[i] !~ /^--/)
				continue
			a = w[i]
			sub(/^--/, "", a)
			arg = ""
			if (index(a, " ")) {
				arg = substr(a, index(a, " ") + 1)
				a = substr(a, 1, index(a, " ") - 1)
			}
			gsub(/  +/, " ", entry)
			printf "%s\037%s\037%s\n", a, arg, entry
		}
		entry = ""
	}' "$1" | LC_ALL=C sort
}

"$MIGRATE" --help >"$SCRATCH/filter.help" || die "migrate --help failed"
"$MIGRATE" run --help >"$SCRATCH/run.help" || die "migrate run --help failed"
options_of "$SCRATCH/filter.help" >"$SCRATCH/filter.opts"
options_of "$SCRATCH/run.help" >"$SCRATCH/run.opts"
[ "$(wc -l <"$SCRATCH/filter.opts")" -ge 15 ] || die "migrate --help lists $(wc -l <"$SCRATCH/filter.opts") options"

test_case "the lists" <<'EOF'
[ "$(cut -d$'\037' -f1 "$SCRATCH/run.opts" | tr '\n' ' ')" = \
	"$(printf '%s\n' $SHARED_OPTS $RUN_ONLY | LC_ALL=C sort | tr '\n' ' ')" ] ||
	die "migrate run --help lists: $(cut -d$'\037' -f1 "$SCRATCH/run.opts" | tr '\n' ' ')"
for o in $SHARED_OPTS; do
	f="$(grep "^$o"$'\037' "$SCRATCH/filter.opts" || true)"
	r="$(grep "^$o"$'\037' "$SCRATCH/run.opts" || true)"
	[ -n "$f" ] || die "migrate --help does not list --$o"
	[ "$f" = "$r" ] || die "--$o: the filter says '$f', run says '$r'"
done
for o in $RUN_ONLY; do
	! grep -q "^$o"$'\037' "$SCRATCH/filter.opts" || die "migrate --help lists run's --$o"
done
info "shared options listed alike by migrate --help and migrate run --help: $SHARED_OPTS"
EOF

test_case "accepted where listed, unknown where not" <<'EOF'
value_for() { # ARG-NAME: a value the option accepts
	case "$1" in
	"") ;;
	F) echo lfs ;;
	FMT) echo raw ;;
	UUID) echo 01234567-89ab-4cde-8f01-23456789abcd ;;
	READER) echo auto ;;
	WHAT) echo keep ;;
	N) echo 2 ;;
	*) echo x ;;
	esac
}
accepts() { # LISTFILE CMD...: each listed option, then --help: exit 0, the usage
	local list="$1" name arg entry v
	shift
	while IFS=$'\037' read -r name arg entry; do
		v="$(value_for "$arg")"
		"$@" "--$name" ${v:+"$v"} --help >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null ||
			die "$* --$name ${v:-}: refused: $(cat "$SCRATCH/err")"
		if [ "$name" = version ]; then
			grep -q '^migrate ' "$SCRATCH/out" || die "$* --version --help: no version"
		else
			grep -q '^usage: migrate' "$SCRATCH/out" || die "$* --$name ${v:-} --help: no usage"
		fi
	done <"$list"
}
accepts "$SCRATCH/filter.opts" "$MIGRATE"
accepts "$SCRATCH/run.opts" "$MIGRATE" run
refused() { # OPTION CMD...: exit 1, "unknown option" (not getopt_long's
	# abbreviation of a longer option: --commit-map is not run's --commit-map-format)
	local o="$1"
	shift
	# (a peer's option run takes, given to the filter, also names the way)
	expect_refusal --says "^migrate.*: error: unknown option '$o'\(\$\| (\)" -- "$@" "--$o" x
}
n=0
while IFS=$'\037' read -r name _; do
	case " $SHARED_OPTS " in *" $name "*) continue ;; esac
	refused "$name" "$MIGRATE" run
	n=$((n + 1))
done <"$SCRATCH/filter.opts"
for o in $RUN_ONLY; do
	refused "$o" "$MIGRATE"
done
info "every listed option accepted; $n filter-only options unknown to run, run's own unknown to the filter"
EOF

test_case "the same suggestion, the same message" <<'EOF'
for o in $SHARED_OPTS; do
	typo="${o:0:1}${o:2:1}${o:1:1}${o:3}"	# two letters swapped: one edit
	"$MIGRATE" "--$typo" </dev/null >/dev/null 2>"$SCRATCH/f.err" && die "the filter took --$typo"
	"$MIGRATE" run "--$typo" </dev/null >/dev/null 2>"$SCRATCH/r.err" && die "run took --$typo"
	[ "$(sed -n 1p "$SCRATCH/f.err")" = "migrate: error: unknown option '$typo'" ] ||
		die "the filter, --$typo: $(cat "$SCRATCH/f.err")"
	[ "$(sed -n 1p "$SCRATCH/r.err")" = "migrate run: error: unknown option '$typo'" ] ||
		die "run, --$typo: $(cat "$SCRATCH/r.err")"
	[ "$(sed -n 2p "$SCRATCH/f.err")" = "did you mean '--$o'?" ] &&
		[ "$(sed -n 2p "$SCRATCH/r.err")" = "did you mean '--$o'?" ] ||
		die "--$typo: the filter says '$(sed -n 2p "$SCRATCH/f.err")', run '$(sed -n 2p "$SCRATCH/r.err")'"
done
rc=0
"$MIGRATE" --commit-map-format csv </dev/null >/dev/null 2>"$SCRATCH/f.err" || rc=$?
[ "$rc" = 1 ] || die "the filter, --commit-map-format csv: exit $rc"
rc=0
"$MIGRATE" run --commit-map-format csv --to "$SCRATCH/nowhere" </dev/null >/dev/null 2>"$SCRATCH/r.err" || rc=$?
[ "$rc" = 1 ] || die "run, --commit-map-format csv: exit $rc"
[ "$(sed 's/^migrate: error: //' "$SCRATCH/f.err")" = "$(sed 's/^migrate run: error: //' "$SCRATCH/r.err")" ] &&
	grep -q "got 'csv'" "$SCRATCH/f.err" ||
	die "--commit-map-format csv: the filter says '$(cat "$SCRATCH/f.err")', run '$(cat "$SCRATCH/r.err")'"
[ ! -e "$SCRATCH/nowhere" ] || die "a refused run created its target"
info "a misspelt shared option: the same suggestion from both; a bad value: the same message"
EOF

test_case "the same meaning" <<'EOF'
H="$SCRATCH/hist"
git init -q "$H"
printf 'one\n' >"$H/a.txt"
printf 'big\n' >"$H/big.bin"
git -C "$H" add -A && git -C "$H" commit -qm first
first="$(git -C "$H" rev-parse HEAD)"
printf 'two\n' >"$H/a.txt"
git -C "$H" commit -qam "follows $first"
# the second rule never matches: a warning unless --quiet
printf '*.bin drop\n*.bin keep\n' >"$SCRATCH/rules"
export_stream "$H" >"$SCRATCH/h.fe"

# same OPTIONS...: the pipeline's map and run's (both lfs: changed commits)
# into $SCRATCH/pipe.map and $SCRATCH/run.map; their stderr into *.err
k=0
same() {
	k=$((k + 1))
	(cd "$H" && "$MIGRATE" --rules "$SCRATCH/rules" --commit-map-format lfs \
		--commit-map "$SCRATCH/pipe.map" "$@") <"$SCRATCH/h.fe" \
		>"$SCRATCH/h.fi" 2>"$SCRATCH/pipe.err" || die "the filter with $*: $(cat "$SCRATCH/pipe.err")"
	import_stream "$SCRATCH/pipe$k" "$SCRATCH/pipe$k.marks" <"$SCRATCH/h.fi" ||
		die "fast-import of the filter's stream with $*"
	"$MIGRATE" run --rules "$SCRATCH/rules" --commit-map-format lfs --repo "$H" \
		--to "$SCRATCH/run$k" "$@" 2>"$SCRATCH/run.err" </dev/null ||
		die "run with $*: $(cat "$SCRATCH/run.err")"
	cp "$SCRATCH/run$k/.git/migrate/commit-map.lfs" "$SCRATCH/run.map"
	diff -u <(sort "$SCRATCH/pipe.map") <(sort "$SCRATCH/run.map") ||
		die "with $*: run wrote another commit map than the pipeline"
	rm -f "$SCRATCH/pipe.map"
	[ "$(grep -c . "$SCRATCH/run.map")" = 2 ] || die "with $*: $(cat "$SCRATCH/run.map")"
	[ "$(refs_of "$SCRATCH/pipe$k")" = "$(refs_of "$SCRATCH/run$k")" ] ||
		die "with $*: run wrote other refs than the pipeline"
}
msg_of() { git -C "$1" log -1 --format=%s refs/heads/main; }

same
grep -q 'warning: rule never matches' "$SCRATCH/pipe.err" &&
	grep -q 'warning: rule never matches' "$SCRATCH/run.err" ||
	die "without --quiet, the rule warning: filter '$(cat "$SCRATCH/pipe.err")', run '$(cat "$SCRATCH/run.err")'"
cp "$SCRATCH/run.map" "$SCRATCH/rewritten.map"
[ "$(msg_of "$SCRATCH/run$k")" != "follows $first" ] || die "the message id was not rewritten"

same --no-rewrite-message-ids -q
[ ! -s "$SCRATCH/pipe.err" ] && [ ! -s "$SCRATCH/run.err" ] ||
	die "--quiet: filter '$(cat "$SCRATCH/pipe.err")', run '$(cat "$SCRATCH/run.err")'"
[ "$(msg_of "$SCRATCH/run$k")" = "follows $first" ] || die "--no-rewrite-message-ids rewrote the message"
! cmp -s "$SCRATCH/rewritten.map" "$SCRATCH/run.map" || die "--no-rewrite-message-ids changed no id"

same --no-rewrite-message-ids --rewrite-message-ids --progress --verify-split
cmp -s "$SCRATCH/rewritten.map" "$SCRATCH/run.map" ||
	die "--rewrite-message-ids after --no-rewrite-message-ids: not the default's map"
grep -q 'done in' "$SCRATCH/pipe.err" && grep -q 'done in' "$SCRATCH/run.err" ||
	die "--progress: filter '$(cat "$SCRATCH/pipe.err")', run '$(cat "$SCRATCH/run.err")'"
info "the same map and refs from the pipeline and run with --rules, --[no-]rewrite-message-ids, --commit-map-format lfs; -q and --progress alike"
EOF
test_done
