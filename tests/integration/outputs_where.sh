#!/usr/bin/env bash
# outputs_where.sh - migrate writes only where the user pointed.
#
# Every output named on the command line (--commit-map, --ref-map,
# --export-marks, --report, --report-json, -o, analyze --json, and the
# copies `migrate run` delivers): into a FIFO it is written in place (the
# FIFO stays a FIFO, its reader gets the bytes a file would have held);
# through a symbolic link its target is replaced and the link stays; a
# folder is refused. The filter never reads a FIFO given as --commit-map
# back (it would wait forever). Clean-up of what killed runs left never
# follows a link: a linked <git-dir>/lfs/objects/tmp keeps its files, a
# linked <git-dir>/migrate is refused with a clear message and what it
# names is untouched. A ref moved by someone else while a run works is
# refused by name, nothing changed. (outputs_device.sh: character devices.)
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

# --- a small repository: text, two binaries, two branches ------------------
R="$SCRATCH/repo"
git init -q "$R"
(
	cd "$R"
	for i in 1 2 3 4; do
		printf 'line %s\n' "$i" >>notes.txt
		head -c $((1000 * i)) /dev/zero | tr '\0' "$i" >"art$i.bin"
		git add -A && git commit -qm "commit $i"
	done
	git branch side HEAD~1
)
printf '*.bin lfs\n' >"$SCRATCH/rules"
export_stream "$R" >"$SCRATCH/s.fe"

# A regular run, the reference every other output is compared with.
mkdir -p "$SCRATCH/plain"
(cd "$R" && run_migrate --rules "$SCRATCH/rules" --store "$SCRATCH/store" \
	--commit-map "$SCRATCH/plain/map" --ref-map "$SCRATCH/plain/refmap" \
	--export-marks "$SCRATCH/plain/marks" --report "$SCRATCH/plain/report" \
	--report-json "$SCRATCH/plain/json" <"$SCRATCH/s.fe" >"$SCRATCH/plain/out")
for f in map refmap marks report json out; do
	[ -s "$SCRATCH/plain/$f" ] || die "the plain run wrote no $f"
done

# read_fifo NAME: a FIFO at $SCRATCH/fifo/NAME, read into $SCRATCH/got/NAME
# in the background (wait_readers waits for all of them).
mkdir -p "$SCRATCH/fifo" "$SCRATCH/got"
readers=()
read_fifo() {
	rm -f "$SCRATCH/fifo/$1"
	mkfifo "$SCRATCH/fifo/$1"
	cat "$SCRATCH/fifo/$1" >"$SCRATCH/got/$1" &
	readers+=("$!")
}
# a case that fails leaves no reader waiting: each case with readers
# starts with 'trap kill_readers EXIT' (a case is a subshell of its own)
kill_readers() {
	[ "${#readers[@]}" = 0 ] || kill "${readers[@]}" 2>/dev/null || true
}
wait_readers() {
	local p
	for p in "${readers[@]}"; do
		wait "$p" || die "a FIFO reader failed"
	done
	readers=()
}
still_fifo() {
	[ -p "$SCRATCH/fifo/$1" ] || die "the FIFO $1 was replaced by $(stat -c %F "$SCRATCH/fifo/$1")"
}
# A reader left waiting would hang the test: every run has a time limit.
T=(timeout 120)

test_case "the filter: every output into a FIFO" <<'EOF'
trap kill_readers EXIT
for f in map refmap marks report json; do read_fifo "$f"; done
(cd "$R" && "${T[@]}" "$MIGRATE" --rules "$SCRATCH/rules" --store "$SCRATCH/store" \
	--commit-map "$SCRATCH/fifo/map" --ref-map "$SCRATCH/fifo/refmap" \
	--export-marks "$SCRATCH/fifo/marks" --report "$SCRATCH/fifo/report" \
	--report-json "$SCRATCH/fifo/json" <"$SCRATCH/s.fe" >"$SCRATCH/fifo.out") ||
	die "the filter with FIFOs as outputs failed"
wait_readers
for f in map refmap marks report json; do
	still_fifo "$f"
	cmp -s "$SCRATCH/plain/$f" "$SCRATCH/got/$f" || die "the FIFO $f got other bytes than a file"
done
cmp -s "$SCRATCH/plain/out" "$SCRATCH/fifo.out" || die "the stream differs with FIFO outputs"
output_has 'tmp-' -- ls "$SCRATCH/fifo" && die "a temp file was left beside the FIFOs"
info "filter: commit map, ref map, marks, report and JSON into FIFOs: FIFOs still, same bytes as files"

# --dry-run -o FIFO
read_fifo o
(cd "$R" && "${T[@]}" "$MIGRATE" --rules "$SCRATCH/rules" --dry-run -o "$SCRATCH/fifo/o" \
	<"$SCRATCH/s.fe" >/dev/null) || die "--dry-run -o FIFO failed"
wait_readers
still_fifo o
grep -q '^commit refs/heads/main' "$SCRATCH/got/o" || die "-o FIFO: no stream came out"
info "--dry-run -o into a FIFO: the stream came out of it"
EOF

test_case "through symbolic links: the target replaced, the link kept" <<'EOF'
mkdir -p "$SCRATCH/maps"
head -1 "$SCRATCH/plain/map" >"$SCRATCH/maps/2026-12-01"	# an empty map
ln -s 2026-12-01 "$SCRATCH/maps/current"
ln -s ../maps/report-target "$SCRATCH/got/report-link"	# to a file not made yet
(cd "$R" && run_migrate --rules "$SCRATCH/rules" --store "$SCRATCH/store" \
	--commit-map "$SCRATCH/maps/current" --report "$SCRATCH/got/report-link" \
	<"$SCRATCH/s.fe" >/dev/null 2>"$SCRATCH/err") ||
	{ cat "$SCRATCH/err" >&2; die "the filter through links failed"; }
[ -L "$SCRATCH/maps/current" ] || die "the link maps/current was replaced"
[ "$(readlink "$SCRATCH/maps/current")" = 2026-12-01 ] || die "the link was changed"
[ -L "$SCRATCH/got/report-link" ] || die "the link to a file not made yet was replaced"
cmp -s "$SCRATCH/maps/2026-12-01" "$SCRATCH/plain/map" || die "the link's target is not the map"
cmp -s "$SCRATCH/maps/report-target" "$SCRATCH/plain/report" || die "the dangling link's target is not the report"
info "filter: --commit-map and --report through links: the links stay, their targets hold the outputs"
EOF

test_case "a folder is refused, nothing written" <<'EOF'
mkdir -p "$SCRATCH/adir"
rc=0
(cd "$R" && "$MIGRATE" --rules "$SCRATCH/rules" --store "$SCRATCH/store" \
	--report "$SCRATCH/adir" <"$SCRATCH/s.fe" >/dev/null 2>"$SCRATCH/err") || rc=$?
[ "$rc" != 0 ] || die "a folder as --report was accepted"
grep -q "adir: is a folder" "$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "a folder: unclear message"; }
[ -z "$(ls -A "$SCRATCH/adir")" ] || die "something was written into the folder"
info "a folder as --report: $(head -1 "$SCRATCH/err")"
EOF

test_case "analyze --json into a FIFO" <<'EOF'
trap kill_readers EXIT
read_fifo analyze
"${T[@]}" "$MIGRATE" analyze --repo "$R" --json "$SCRATCH/fifo/analyze" >/dev/null ||
	die "analyze --json FIFO failed"
wait_readers
still_fifo analyze
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$SCRATCH/got/analyze" ||
	die "analyze --json into a FIFO: not JSON"
info "analyze --json into a FIFO: JSON came out of it"
EOF

test_case "migrate run --to: its copies into a FIFO and through a link" <<'EOF'
trap kill_readers EXIT
read_fifo run-map
ln -s ../maps/run-report "$SCRATCH/got/run-report"
"${T[@]}" "$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$R" --to "$SCRATCH/new" \
	--commit-map "$SCRATCH/fifo/run-map" --report "$SCRATCH/got/run-report" ||
	die "run --to with a FIFO and a link failed"
wait_readers
still_fifo run-map
[ -L "$SCRATCH/got/run-report" ] || die "run: the link was replaced"
cmp -s "$SCRATCH/got/run-map" "$SCRATCH/new/.git/migrate/commit-map" ||
	die "run: the FIFO got another map than the state's"
cmp -s "$SCRATCH/maps/run-report" "$SCRATCH/new/.git/migrate/report.txt" ||
	die "run: the link's target is not the report"
info "run --to: --commit-map into a FIFO, --report through a link, as the state holds them"
EOF

test_case "clean-up never follows a link" <<'EOF'
# <git-dir>/lfs/objects/tmp a link to a folder holding a file named as the
# store's temp files of a process that is gone: it stays.
C="$SCRATCH/clean"
git clone -q --no-local "$R" "$C"
mkdir -p "$SCRATCH/elsewhere" "$C/.git/lfs/objects"
echo precious >"$SCRATCH/elsewhere/put-999999-1-2"
ln -s "$SCRATCH/elsewhere" "$C/.git/lfs/objects/tmp"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$C" --in-place ||
	die "run with a linked lfs/objects/tmp failed"
[ -f "$SCRATCH/elsewhere/put-999999-1-2" ] || die "a file behind the linked lfs/objects/tmp was deleted"
info "a linked <git-dir>/lfs/objects/tmp: what it names is not cleaned"

# <git-dir>/migrate a link: refused, naming it; its target untouched
C2="$SCRATCH/clean2"
git clone -q --no-local "$R" "$C2"
mkdir -p "$SCRATCH/thesis"
echo "chapter 1" >"$SCRATCH/thesis/thesis.new"
echo "draft" >"$SCRATCH/thesis/notes.tmp-abc123"
ln -s "$SCRATCH/thesis" "$C2/.git/migrate"
refs_of "$C2" >"$SCRATCH/c2.refs"
for how in --in-place --dry-run; do
	rc=0
	"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$C2" --in-place \
		$([ "$how" = --dry-run ] && echo --dry-run) 2>"$SCRATCH/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "a linked state folder ($how): exit $rc, not 1"; }
	grep -q "migrate is a symbolic link" "$SCRATCH/err" ||
		{ cat "$SCRATCH/err" >&2; die "a linked state folder: unclear message"; }
done
[ "$(ls "$SCRATCH/thesis")" = "$(printf 'notes.tmp-abc123\nthesis.new')" ] ||
	die "the folder behind the linked state changed: $(ls "$SCRATCH/thesis")"
cmp -s "$SCRATCH/c2.refs" <(refs_of "$C2") || die "refs moved in a refused run"
info "a linked <git-dir>/migrate: $(head -1 "$SCRATCH/err" | sed "s|$SCRATCH|…|")"
EOF

test_case "a ref moved by someone else while the run works" <<'EOF'
# git's reference-transaction hook of the side repository (where
# fast-import writes) makes a commit on 'side' in the user's repository
# once, while the run works: the run must refuse it by name.
M="$SCRATCH/moved"
git clone -q --no-local "$R" "$M"
git -C "$M" branch -q side origin/side
refs_of "$M" >"$SCRATCH/m.refs"
mid_run_hook "git -C '$M' commit-tree -p side -m 'made meanwhile' side^{tree} >'$SCRATCH/moved.commit'
git -C '$M' update-ref refs/heads/side \$(cat '$SCRATCH/moved.commit')"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$M" --in-place 2>"$SCRATCH/err" || rc=$?
no_hook
[ -s "$SCRATCH/moved.commit" ] || die "the hook made no commit during the run"
moved=$(cat "$SCRATCH/moved.commit")
[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "a ref moved during the run: exit $rc, not 3"; }
grep -q "refs/heads/side moved during the run (now $moved); nothing was changed; run again" \
	"$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "a ref moved during the run: unclear message"; }
# nothing changed: every ref as before but the one moved, no backup made
sed "s|^[0-9a-f]* refs/heads/side\$|$moved refs/heads/side|" "$SCRATCH/m.refs" |
	LC_ALL=C sort >"$SCRATCH/m.want"
diff -u "$SCRATCH/m.want" <(refs_of "$M") || die "refs changed in the refused run"
[ ! -e "$M/.git/migrate/journal" ] || die "a journal was left"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$M" --in-place || die "the run again failed"
[ "$(git -C "$M" log -1 --format=%s side)" = 'made meanwhile' ] || die "the commit made meanwhile is not converted"
info "a ref moved during the run: $(head -1 "$SCRATCH/err" | sed 's/[0-9a-f]\{40\}/<id>/')"
EOF
git config --global --unset core.hooksPath || true

test_done
