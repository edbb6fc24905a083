#!/usr/bin/env bash
# options_surface.sh - the option tables are the one truth about options
# (issue 26, item 4); what is written elsewhere must not lack any of them:
#  - `migrate [CMD] --list-options` (hidden, as git's
#    --git-completion-helper) prints the options of each command's table
#    on one line, "--NAME=" for one that takes a value, and --help does
#    not list it;
#  - each command's man page (docs/man/migrate.1 for the filter,
#    migrate-CMD.1 for a command) names every option of its table, and
#    every page (those and migrate-rules.5) renders without a warning
#    (groff -ww, man -l --warnings) and is installed by CMakeLists.txt;
#  - the README's quick start runs the migrate commands scripts/demo runs;
#  - the bash completion (scripts/completion.bash, driven as bash does:
#    COMP_WORDS, COMP_CWORD, _migrate, COMPREPLY) offers after `--` exactly
#    the options of the table: asking the binary, and, when the binary
#    fails (one older than --list-options), from its own lists; a value of
#    an option that takes one is not completed with option names;
#  - remap parses its options with the table's machinery: every option it
#    lists is accepted, an unknown one is exit 1 with the nearest one
#    suggested, as for the other commands.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

COMMANDS=("" run push remap analyze check-rules)
COMPLETION="$ROOT/scripts/completion.bash"
MANDIR="$ROOT/docs/man"
# page KEY: the man page of command KEY (filter: the filter's)
page() { if [ "$1" = filter ]; then echo "$MANDIR/migrate.1"; else echo "$MANDIR/migrate-$1.1"; fi; }
# say_failures: the failures a case collected, one FAIL line each, then die
failures=()
say_failures() {
	[ "${#failures[@]}" = 0 ] && return 0
	printf 'FAIL: %s\n' "${failures[@]}" >&2
	die "${#failures[@]} problem(s) (above)"
}

# --list-options: a case per command (the later cases read the files each
# writes: $SCRATCH/KEY.list, .words, .names, .help)
for c in "${COMMANDS[@]}"; do
	test_case "migrate${c:+ $c} --list-options: one line, the options --help lists" <<'EOF'
	key="${c:-filter}"
	"$MIGRATE" ${c:+"$c"} --list-options </dev/null >"$SCRATCH/$key.list" 2>"$SCRATCH/err" ||
		die "migrate $c --list-options failed: $(cat "$SCRATCH/err")"
	[ "$(wc -l <"$SCRATCH/$key.list")" = 1 ] || die "migrate $c --list-options: not one line"
	tr ' ' '\n' <"$SCRATCH/$key.list" >"$SCRATCH/$key.words"
	grep -qvE '^--[a-z][a-z0-9-]*=?$' "$SCRATCH/$key.words" &&
		die "migrate $c --list-options: not an option: $(grep -vE '^--[a-z][a-z0-9-]*=?$' "$SCRATCH/$key.words" | head -1)"
	# the names alone, sorted: what the documents are held to
	sed 's/=$//' "$SCRATCH/$key.words" | LC_ALL=C sort -u >"$SCRATCH/$key.names"
	grep -qx -- --help "$SCRATCH/$key.names" || die "migrate $c --list-options lacks --help"
	# each listed option that takes a value says so (its --help entry has one)
	"$MIGRATE" ${c:+"$c"} --help >"$SCRATCH/$key.help" </dev/null
	! grep -q list-options "$SCRATCH/$key.help" || die "migrate $c --help shows the hidden --list-options"
	while read -r w; do
		name="${w%=}"
		if [ "$w" != "$name" ]; then
			grep -qE -- "(^|[ ,])$name [A-Z]" "$SCRATCH/$key.help" ||
				die "migrate $c: $w takes a value, --help shows none"
		else
			! grep -qE -- "(^|[ ,])$name [A-Z]" "$SCRATCH/$key.help" ||
				die "migrate $c: $w takes no value, --help shows one"
		fi
	done <"$SCRATCH/$key.words"
	# the same table: --help's option list names the same options (the
	# names stand left of the help text, ", " apart, a value after a blank)
	sed -n '/^Options:$/,/^$/p' "$SCRATCH/$key.help" | grep '^  -' |
		sed -e 's/^  //' -e 's/  .*//' | tr ',' '\n' | sed -e 's/^ *//' -e 's/ .*//' |
		grep -- '^--' | LC_ALL=C sort -u >"$SCRATCH/$key.helpnames"
	cmp -s "$SCRATCH/$key.names" "$SCRATCH/$key.helpnames" ||
		die "migrate $c: --list-options and --help differ: $(diff "$SCRATCH/$key.names" "$SCRATCH/$key.helpnames" | grep '^[<>]' | tr '\n' ' ')"
EOF
done
test_case "--list-options has run's --restart and the filter's --annex-dir" <<'EOF'
if ! grep -qx -- --restart "$SCRATCH/run.names" || ! grep -qx -- --annex-dir "$SCRATCH/filter.names"; then
	die "--list-options lacks run's --restart or the filter's --annex-dir"
fi
info "--list-options: $(wc -w <"$SCRATCH/filter.list") options of the filter, $(wc -w <"$SCRATCH/run.list") of run, $(wc -w <"$SCRATCH/remap.list") of remap, $(wc -w <"$SCRATCH/analyze.list") of analyze"
EOF

test_case "each --help's synopsis is its table: every option, and no other" <<'EOF'
for c in "${COMMANDS[@]}"; do
	key="${c:-filter}"
	# the usage lines, up to the first blank line; the "or:" lines are
	# the other commands' short ones
	sed -n '1,/^$/p' "$SCRATCH/$key.help" | sed '/^   or: /,$d' >"$SCRATCH/$key.synopsis"
	grep -q "^usage: migrate${c:+ $c}" "$SCRATCH/$key.synopsis" ||
		failures+=("migrate${c:+ $c} --help does not start with its usage line")
	grep -o -- '--[a-z][a-z0-9-]*' "$SCRATCH/$key.synopsis" | LC_ALL=C sort -u >"$SCRATCH/$key.synnames"
	# --help and --version are the option list's alone
	grep -vx -- '--help\|--version' "$SCRATCH/$key.names" >"$SCRATCH/$key.want"
	while read -r name; do
		failures+=("the synopsis of migrate${c:+ $c} --help lacks $name")
	done < <(LC_ALL=C comm -23 "$SCRATCH/$key.want" "$SCRATCH/$key.synnames")
	while read -r name; do
		failures+=("the synopsis of migrate${c:+ $c} --help names $name, not in its table")
	done < <(LC_ALL=C comm -13 "$SCRATCH/$key.want" "$SCRATCH/$key.synnames")
done
grep -q '(--to NEWDIR | --in-place)' "$SCRATCH/run.synopsis" ||
	failures+=("migrate run --help: no (--to NEWDIR | --in-place) in its synopsis")
say_failures
info "every --help's synopsis names exactly the options of its table"
EOF

test_case "each command's man page names every option of its table" <<'EOF'
# roff writes a minus as \- and may set an option in bold (\fB...\fR); an
# option is named when --NAME stands there whole (not the start of a
# longer name)
for c in "${COMMANDS[@]}"; do
	key="${c:-filter}"
	man="$(page "$key")"
	[ -f "$man" ] || { failures+=("no man page $(basename "$man") for migrate${c:+ $c}"); continue; }
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$man" >"$SCRATCH/$key.man"
	while read -r name; do
		grep -qE -- "${name}([^a-z0-9-]|\$)" "$SCRATCH/$key.man" ||
			failures+=("$(basename "$man") lacks $name (an option of migrate${c:+ $c})")
	done <"$SCRATCH/$key.names"
done
say_failures
info "each page of docs/man names every option of its command's table"
EOF

test_case "every man page renders without a warning, and is installed" <<'EOF'
n=0
for man in "$MANDIR"/*.[15]; do
	n=$((n + 1))
	base="$(basename "$man")"
	groff -ww -man -z "$man" >"$SCRATCH/groff.err" 2>&1 || failures+=("groff -man fails on $base")
	[ ! -s "$SCRATCH/groff.err" ] || failures+=("groff -ww: $base: $(head -3 "$SCRATCH/groff.err" | tr '\n' ' ')")
	MANWIDTH=80 man -l --warnings "$man" 2>"$SCRATCH/man.err" >"$SCRATCH/man.out" ||
		failures+=("man -l $base fails: $(head -3 "$SCRATCH/man.err" | tr '\n' ' ')")
	[ ! -s "$SCRATCH/man.err" ] || failures+=("man -l --warnings: $base: $(head -3 "$SCRATCH/man.err" | tr '\n' ' ')")
	# the page's own name heads it (.TH NAME SECTION)
	name="${base%.*}"
	head -1 "$SCRATCH/man.out" | grep -qiF "${name}(${base##*.})" ||
		failures+=("$base: its heading is not ${name}(${base##*.}): $(head -1 "$SCRATCH/man.out")")
	grep -qF "docs/man/$base" "$ROOT/CMakeLists.txt" || failures+=("CMakeLists.txt does not install docs/man/$base")
done
[ "$n" -ge 7 ] || failures+=("$n man pages in docs/man, not the 7 of migrate(1), one per command and migrate-rules(5)")
say_failures
info "$n man pages render without a warning (groff -ww, man -l --warnings), each installed"
EOF

test_case "the README's quick start is what scripts/demo runs" <<'EOF'
# every migrate command of the README's quick start is a command the demo
# shows (its `run CMD` lines, or the line that says how to undo)
sed -n '/^## Quick start/,/^## /p' "$ROOT/README.md" | grep '^    migrate ' |
	sed -e 's/^    //' -e 's/ *#.*$//' >"$SCRATCH/quickstart"
[ "$(wc -l <"$SCRATCH/quickstart")" -ge 5 ] || die "the README's quick start has no migrate commands: $(cat "$SCRATCH/quickstart")"
while read -r cmd; do
	grep -qF -- "$cmd" "$ROOT/scripts/demo" || failures+=("the README's quick start runs '$cmd', which scripts/demo does not")
done <"$SCRATCH/quickstart"
for want in "migrate run --rules ../demo.rules --in-place --dry-run" "migrate run --rules ../demo.rules --in-place" \
	"migrate push" "migrate remap" "migrate run --in-place --undo"; do
	grep -qF -- "$want" "$SCRATCH/quickstart" || failures+=("the README's quick start lacks $want")
done
say_failures
info "the README's quick start: $(wc -l <"$SCRATCH/quickstart") migrate commands, each one scripts/demo runs"
EOF

# complete BINDIR CMD: what _migrate offers for `migrate [CMD] --<TAB>` with
# PATH=BINDIR:$PATH, one per line, sorted
complete() {
	local bindir="$1" cmd="$2"
	(cd "$SCRATCH" && PATH="$bindir:$PATH" bash -c '
		. "$1"
		if [ -n "$2" ]; then COMP_WORDS=(migrate "$2" --); else COMP_WORDS=(migrate --); fi
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_migrate
		printf "%s\n" "${COMPREPLY[@]}"' sh "$COMPLETION" "$cmd") | LC_ALL=C sort -u
}
test_case "the completion offers every option, from the binary and from its own lists" <<'EOF'
mkdir -p "$SCRATCH/real" "$SCRATCH/old" "$SCRATCH/fake"
ln -s "$MIGRATE" "$SCRATCH/real/migrate"
# a binary older than --list-options refuses it
printf '#!/bin/sh\necho "migrate: error: unknown option '"'list-options'"'" >&2\nexit 1\n' >"$SCRATCH/old/migrate"
# one whose table has an option the completion cannot know by itself
printf '#!/bin/sh\necho "--zz-only-in-the-binary= --help"\n' >"$SCRATCH/fake/migrate"
chmod +x "$SCRATCH/old/migrate" "$SCRATCH/fake/migrate"
for c in "${COMMANDS[@]}"; do
	key="${c:-filter}"
	for how in real old; do
		complete "$SCRATCH/$how" "$c" >"$SCRATCH/$key.$how.offered"
		what="the completion"
		[ "$how" = old ] && what="the completion's own list (the binary failing)"
		while read -r name; do
			failures+=("$what lacks $name (an option of migrate${c:+ $c})")
		done < <(LC_ALL=C comm -23 "$SCRATCH/$key.names" "$SCRATCH/$key.$how.offered")
		while read -r name; do
			failures+=("$what offers $name, not an option of migrate${c:+ $c}")
		done < <(LC_ALL=C comm -13 "$SCRATCH/$key.names" "$SCRATCH/$key.$how.offered")
	done
	[ "$(complete "$SCRATCH/fake" "$c" | tr '\n' ' ')" = "--help --zz-only-in-the-binary " ] ||
		failures+=("migrate${c:+ $c} --<TAB> does not offer what the binary lists: $(complete "$SCRATCH/fake" "$c" | tr '\n' ' ')")
done
# a value is not an option: `migrate analyze --top <TAB>` offers none
(cd "$SCRATCH" && PATH="$SCRATCH/real:$PATH" bash -c '. "$1"; COMP_WORDS=(migrate analyze --top ""); COMP_CWORD=3
	_migrate; printf "%s\n" "${COMPREPLY[@]}"' sh "$COMPLETION") >"$SCRATCH/top.offered"
! grep -q -- '^--' "$SCRATCH/top.offered" ||
	failures+=("migrate analyze --top <TAB> offers options as its value")
# --annex-dir takes a directory, as --store does
mkdir -p "$SCRATCH/cwd/annex.d" && : >"$SCRATCH/cwd/annex.txt"
[ "$(cd "$SCRATCH/cwd" && PATH="$SCRATCH/real:$PATH" bash -c '. "$1"; COMP_WORDS=(migrate --annex-dir an); COMP_CWORD=2
	_migrate; printf "%s\n" "${COMPREPLY[@]}"' sh "$COMPLETION")" = annex.d ] ||
	failures+=("migrate --annex-dir an<TAB> does not offer the directory alone")

say_failures
info "the completion (from the binary and its own lists) has every option of every table"
EOF

test_case "remap: every option of its table accepted" <<'EOF'
# every option remap lists is accepted (then --help answers), as options.sh
# checks for the filter and run
while read -r w; do
	name="${w%=}"
	v=""
	[ "$w" != "$name" ] && v=x
	"$MIGRATE" remap "$name" ${v:+"$v"} --help >"$SCRATCH/out" 2>"$SCRATCH/err" </dev/null ||
		die "migrate remap $name $v --help: refused: $(cat "$SCRATCH/err")"
	grep -q '^usage: migrate remap' "$SCRATCH/out" || die "migrate remap $name --help: no usage"
done <"$SCRATCH/remap.words"
grep -q -- '^  --commit-map MAP ' "$SCRATCH/remap.help" ||
	die "migrate remap --help lists no options from its table"
EOF

refused() { # EXPECTED-SUGGESTION ARG...: exit 1, unknown option, the suggestion
	local want="$1"
	shift
	expect_refusal --what "migrate remap $*" --in "$SCRATCH" --no-output \
		--says-line 1 "migrate remap: error: unknown option '${1#--}'" \
		${want:+--says-line 2 "did you mean '$want'?"} -- "$MIGRATE" remap "$@"
}
test_case "remap: an unknown option refused, the nearest one suggested" <<'EOF'
refused --commit-map --comit-map M
refused --no-rewrite-message-ids --no-rewrite-mesage-ids
# an option of the filter remap does not take is unknown there
refused "" --rules R
refused "" --rewrite-message-ids
info "remap: its listed options accepted; --comit-map: exit 1, did you mean '--commit-map'?"
EOF

test_done
