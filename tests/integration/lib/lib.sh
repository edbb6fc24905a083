# shellcheck shell=bash
# tests/integration/lib/lib.sh - helpers shared by the integration tests.
#
# Source it from a test script (tests/integration/NAME.sh):
#     . "$(dirname "$0")/lib/lib.sh"
# It sets: ROOT (the repository root), HERE (this folder, the helpers:
# $HERE/make_tricky_repo.sh, $HERE/lfs_lib.sh, ...), MIGRATE (the
# binary under test, ${MIGRATE:-$ROOT/build/migrate}), SCRATCH (a fresh
# temporary directory, removed on exit unless KEEP_SCRATCH=1), and a git
# environment that does not depend on the user's configuration.

set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
MIGRATE="${MIGRATE:-$ROOT/build/migrate}"
# A relative path given by the caller is taken from the repository root,
# a bare word (e.g. MIGRATE=cat for a dry run of the tests) from PATH.
case "$MIGRATE" in
/*) ;;
*/*) MIGRATE="$ROOT/$MIGRATE" ;;
esac

# The shared corpora: ../shared beside the repository (the layout of the
# work tree and of CI), or wherever MIGRATE_SHARED says. Optional: a test
# that needs it calls need_shared, and is skipped without it.
export SHARED="${MIGRATE_SHARED:-$ROOT/../shared}"

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/migrate-it.XXXXXX")"
# cleanup_scratch: the EXIT trap (a script that sets its own calls it last).
# A script whose cases failed (test_case) ends non-zero even if it exits 0
# without calling test_done.
cleanup_scratch() {
	local rc=$?
	if [ "${KEEP_SCRATCH:-0}" = 1 ]; then
		echo "info: scratch kept in $SCRATCH" >&2
	else
		rm -rf "$SCRATCH"
	fi
	if [ "$rc" = 0 ] && [ "${TEST_CASES_FAILED:-0}" -gt 0 ]; then
		printf 'FAIL: %d of %d cases failed (and test_done was not reached)\n' \
			"$TEST_CASES_FAILED" "$TEST_CASES" >&2
		exit 1
	fi
}
trap cleanup_scratch EXIT

# Git must not read the caller's configuration, and every commit made by a
# test has a fixed identity.
export GIT_CONFIG_NOSYSTEM=1
export GIT_CONFIG_GLOBAL="$SCRATCH/gitconfig"
: >"$GIT_CONFIG_GLOBAL"
git config --global init.defaultBranch main
git config --global user.name "Migrate Tester"
git config --global user.email "tester@example.org"
git config --global commit.gpgsign false
git config --global tag.gpgsign false
git config --global advice.detachedHead false
git config --global advice.nestedTag false
export GIT_AUTHOR_NAME="Migrate Tester" GIT_AUTHOR_EMAIL="tester@example.org"
export GIT_COMMITTER_NAME="Migrate Tester" GIT_COMMITTER_EMAIL="tester@example.org"
export LC_ALL=C
export PYTHONDONTWRITEBYTECODE=1

die() {
	printf 'FAIL: %s\n' "$*" >&2
	exit 1
}

info() {
	printf 'info: %s\n' "$*"
}

# output_has GREP-ARGS... -- CMD...: 0 when a line of CMD's output matches
# (grep -q GREP-ARGS), 1 when none does; dies when CMD fails.
# output_lacks GREP-ARGS... -- CMD...: the reverse, for "no such line".
# CMD's output is read whole into a file first. `CMD | grep -q P` under
# pipefail is no check of absence: grep leaves at its first match, CMD
# may die of SIGPIPE, and `! CMD | grep -q P` is then true; nor does it
# notice CMD failing with no output.
output_has() {
	local args=() out="$SCRATCH/.output.$BASHPID"
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	[ "$#" -gt 1 ] || die "output_has: no command after --"
	shift
	"$@" >"$out" || die "failed (exit status $?): $*"
	grep -q "${args[@]}" "$out"
}
output_lacks() {
	! output_has "$@"
}

# --- cases (git's test_expect_success is the model) -------------------------
#
#   test_case NAME 'COMMANDS'         the commands in one argument, or
#   test_case NAME <<'EOF'            on standard input (a quoted here
#   COMMANDS                          document: nothing in it is expanded
#   EOF                               before the case runs)
#
# runs COMMANDS (eval'd) in a subshell with 'set -euo pipefail', its output
# kept, and prints "ok N - NAME" (after that output) or "not ok N - NAME"
# (then the output and the command that failed, each line as '#   ...').
# The script goes on after a failing case; die in a case fails that case
# only. A case runs in a subshell: the files it writes stay for the cases
# after it, the variables it sets and a cd do not (set up what several
# cases share outside them, or write it to a file). need_shared belongs
# outside the cases (its exit 77 would be a failure in one).
#
# test_done, the script's last line, prints "NAME: N of M cases passed"
# and exits 1 if any case failed.
TEST_NAME="$(basename "$0" .sh)"
TEST_CASES=0
TEST_CASES_FAILED=0
test_case() {
	local _tc_name="$1" _tc_body _tc_rc _tc_out
	if [ "$#" -ge 2 ]; then
		_tc_body="$2"
	else
		_tc_body="$(cat)"
	fi
	TEST_CASES=$((TEST_CASES + 1))
	_tc_out="$SCRATCH/.case-$TEST_CASES.out"
	set +e
	(
		set -eEuo pipefail
		trap 'printf "FAIL: this failed (exit %d): %s\n" "$?" "$BASH_COMMAND" >&2' ERR
		eval "$_tc_body"
	) >"$_tc_out" 2>&1
	_tc_rc=$?
	set -e
	if [ "$_tc_rc" = 0 ]; then
		cat "$_tc_out"
		printf 'ok %d - %s\n' "$TEST_CASES" "$_tc_name"
	else
		TEST_CASES_FAILED=$((TEST_CASES_FAILED + 1))
		printf 'not ok %d - %s\n' "$TEST_CASES" "$_tc_name"
		sed 's/^/#   /' "$_tc_out"
		[ -s "$_tc_out" ] || printf '#   (exit %d, no output)\n' "$_tc_rc"
	fi
	rm -f "$_tc_out"
}
test_done() {
	local ran=$TEST_CASES failed=$TEST_CASES_FAILED
	printf '%s: %d of %d cases passed\n' "$TEST_NAME" "$((ran - failed))" "$ran"
	TEST_CASES_FAILED=0	# counted here: the EXIT trap need not say it again
	[ "$failed" = 0 ] || exit 1
	exit 0
}

# expect_refusal [CHECKS...] -- COMMAND [ARGS...]: COMMAND, run with its
# standard input from /dev/null, must refuse: exit 1, and every check hold.
# Its standard error is left in $SCRATCH/refusal.err, its output in
# $SCRATCH/refusal.out. Dies naming what failed (and the message).
#   --what TEXT         what is refused, for the messages (default: COMMAND)
#   --status N          the exit status wanted (default 1)
#   --says PATTERN      the message matches PATTERN (grep); repeatable
#   --says-line N TEXT  line N of the message is exactly TEXT; repeatable
#   --one-message       the message is at most one line
#   --no-output         nothing on standard output
#   --stdin FILE        standard input from FILE
#   --in DIR            run in DIR
#   --unchanged CMD     CMD (eval'd) prints the same before and after;
#                       repeatable (e.g. --unchanged "ls $DIR/.git/migrate")
#   --refs-unchanged REPO   every ref of REPO as it was (refs_of)
#   --absent PATH       PATH does not exist afterwards; repeatable
expect_refusal() {
	local _er_what="" _er_want=1 _er_one=0 _er_noout=0 _er_stdin=/dev/null _er_dir=. _er_rc=0 _er_i _er_p
	local _er_says=() _er_lines=() _er_unchanged=() _er_absent=() _er_before=()
	while [ "$#" -gt 0 ]; do
		case "$1" in
		--what) _er_what="$2"; shift 2 ;;
		--status) _er_want="$2"; shift 2 ;;
		--says) _er_says+=("$2"); shift 2 ;;
		--says-line) _er_lines+=("$2" "$3"); shift 3 ;;
		--one-message) _er_one=1; shift ;;
		--no-output) _er_noout=1; shift ;;
		--stdin) _er_stdin="$2"; shift 2 ;;
		--in) _er_dir="$2"; shift 2 ;;
		--unchanged) _er_unchanged+=("$2"); shift 2 ;;
		--refs-unchanged) _er_unchanged+=("refs_of $(printf '%q' "$2")"); shift 2 ;;
		--absent) _er_absent+=("$2"); shift 2 ;;
		--) shift; break ;;
		*) die "expect_refusal: unknown check '$1'" ;;
		esac
	done
	[ "$#" -gt 0 ] || die "expect_refusal: no command"
	[ -n "$_er_what" ] || _er_what="$*"
	for _er_i in "${!_er_unchanged[@]}"; do
		_er_before[_er_i]="$(eval "${_er_unchanged[_er_i]}")" || die "$_er_what: '${_er_unchanged[_er_i]}' failed before"
	done
	(cd "$_er_dir" && "$@" >"$SCRATCH/refusal.out" 2>"$SCRATCH/refusal.err") <"$_er_stdin" || _er_rc=$?
	local _er_err="$SCRATCH/refusal.err"
	[ "$_er_rc" = "$_er_want" ] || die "$_er_what: exit $_er_rc, not $_er_want: $(cat "$_er_err")"
	for _er_p in "${_er_says[@]+"${_er_says[@]}"}"; do
		grep -q -- "$_er_p" "$_er_err" || die "$_er_what: the message does not say '$_er_p': $(cat "$_er_err")"
	done
	for ((_er_i = 0; _er_i < ${#_er_lines[@]}; _er_i += 2)); do
		[ "$(sed -n "${_er_lines[_er_i]}p" "$_er_err")" = "${_er_lines[_er_i + 1]}" ] ||
			die "$_er_what: line ${_er_lines[_er_i]} of the message is not '${_er_lines[_er_i + 1]}': $(cat "$_er_err")"
	done
	[ "$_er_one" = 0 ] || [ "$(wc -l <"$_er_err")" -le 1 ] || die "$_er_what: more than one message: $(cat "$_er_err")"
	[ "$_er_noout" = 0 ] || [ ! -s "$SCRATCH/refusal.out" ] || die "$_er_what: wrote to standard output"
	for _er_i in "${!_er_unchanged[@]}"; do
		diff -u <(echo "${_er_before[_er_i]}") <(eval "${_er_unchanged[_er_i]}") >&2 ||
			die "$_er_what: refused, but '${_er_unchanged[_er_i]}' changed"
	done
	for _er_p in "${_er_absent[@]+"${_er_absent[@]}"}"; do
		[ ! -e "$_er_p" ] && [ ! -L "$_er_p" ] || die "$_er_what: refused, but $_er_p was written"
	done
}

# need_shared PATH: PATH under $SHARED (e.g. corpus/git-history-2008.bundle)
# must exist, or the test is skipped: a 'SKIP: reason' line and exit 77,
# which scripts/test counts as a skip, not a failure (MIGRATE_NO_SKIP=1
# makes it one).
need_shared() {
	[ -e "$SHARED/$1" ] && return 0
	printf 'SKIP: %s is not there (the optional ../shared folder; MIGRATE_SHARED names another)\n' \
		"$SHARED/$1"
	exit 77
}

# make_history [OPTIONS] OUTDIR: the project's test histories
# (tests/gen/make-history; OUTDIR/assets, OUTDIR/tracker), at test scale.
make_history() {
	"$ROOT/tests/gen/make-history" "$@" >"$SCRATCH/make-history.log" 2>&1 || {
		cat "$SCRATCH/make-history.log" >&2
		die "make-history $* failed"
	}
}

# The export flags every test uses (docs/DESIGN.md, issue 2).
EXPORT_FLAGS=(--show-original-ids --signed-tags=verbatim --reencode=no
	--mark-tags --tag-of-filtered-object=drop)

# export_stream REPO [REV-ARGS...] > FILE
# Without REV-ARGS, exports --all.
export_stream() {
	local repo="$1"
	shift
	if [ "$#" -eq 0 ]; then
		set -- --all
	fi
	git -C "$repo" fast-export "${EXPORT_FLAGS[@]}" "$@"
}

# import_stream NEWREPO MARKSFILE [FAST-IMPORT-OPTIONS...] < STREAM
# Creates NEWREPO if needed (git init) and runs git fast-import into it,
# writing fast-import's own marks to MARKSFILE.
import_stream() {
	local repo="$1" marks="$2"
	shift 2
	if [ ! -d "$repo" ]; then
		git init -q "$repo"
	fi
	git -C "$repo" fast-import --quiet --export-marks="$marks" "$@"
}

# clone_refs SRC DST: a clone of SRC with a local branch for each of its
# branches and no remote, so DST has the source's refs.
clone_refs() {
	git clone -q --no-local "$1" "$2"
	git -C "$2" for-each-ref --format='%(refname:strip=3)' refs/remotes/origin |
		grep -v '^HEAD$' | while read -r b; do
		git -C "$2" branch -q -f "$b" "origin/$b" 2>/dev/null || true
	done
	git -C "$2" remote remove origin
}

# run_migrate [ARGS...] < IN > OUT: the binary under test, with the exit
# status reported on failure.
run_migrate() {
	local rc=0
	"$MIGRATE" "$@" || rc=$?
	if [ "$rc" -ne 0 ]; then
		printf 'FAIL: %s exited %d\n' "$MIGRATE" "$rc" >&2
	fi
	return "$rc"
}

# plain_pipeline SRC RULES NAME: git fast-export of SRC (--all) through the
# plain filter (RULES) into git fast-import of a new repository
# $SCRATCH/NAME: the oracle a run is judged by. Leaves $SCRATCH/NAME.fe,
# .fi, .marks, .map (the commit map) and .refs (refs_of); dies on a failure.
plain_pipeline() {
	local src="$1" rules="$2" out="$SCRATCH/$3"
	export_stream "$src" >"$out.fe" || die "$3: git fast-export failed"
	run_migrate --rules "$rules" --commit-map "$out.map" --source-repo "$src" \
		<"$out.fe" >"$out.fi" || die "$3: migrate failed"
	import_stream "$out" "$out.marks" <"$out.fi" || die "$3: git fast-import failed"
	refs_of "$out" >"$out.refs"
}

# refs_of REPO: every ref with its value, sorted ('<id> <refname>').
# estimate_near DRY_JSON RUN_JSON: the preview's packed estimate of the
# new history (--report-json of run --dry-run) is within 3x of the run's
# (its report.json); dies otherwise
estimate_near() {
	python3 - "$1" "$2" <<'PY' || die "the preview's packed estimate is more than 3x off the run's"
import json, sys
dry = json.load(open(sys.argv[1]))["history"]["packed_estimate_after"]
real = json.load(open(sys.argv[2]))["history"]["packed_estimate_after"]
print("info: packed after: the preview estimated %d bytes, the run %d" % (dry, real))
sys.exit(not (real / 3 <= dry <= real * 3))
PY
}

refs_of() {
	git -C "$1" for-each-ref --format='%(objectname) %(refname)' | LC_ALL=C sort
}

# check_ids STREAM MARKS_MIGRATE MARKS_FASTIMPORT COMMITMAP REFMAP NEWREPO [OPTIONS]
# Asserts that the ids migrate computed are the ids fast-import wrote:
#  - migrate's --export-marks equals fast-import's --export-marks, line by line;
#  - every '<old> <new>' of the commit map equals fast-import's id for the
#    mark that carried original-oid <old> in STREAM, and every commit of
#    STREAM with an original-oid is in the map;
#  - every ref-map line's new id equals 'git -C NEWREPO rev-parse <ref>',
#    and every ref of NEWREPO is in the ref map.
# OPTIONS (passed to check_ids.py): --orig-repo DIR (ref-map old ids must
# be that repo's refs), --partial-refs (NEWREPO may hold refs this stream did
# not set), --map-may-have-more (the commit map holds entries of earlier runs).
check_ids() {
	python3 "$HERE/check_ids.py" --stream "$1" --migrate-marks "$2" \
		--fastimport-marks "$3" --commit-map "$4" --ref-map "$5" \
		--repo "$6" "${@:7}"
}

# mid_run_hook SCRIPT: core.hooksPath (the test's own global config) gets a
# reference-transaction hook that runs the shell commands SCRIPT once,
# when fast-import commits a ref in the side repository of a run
# (<git-dir>/migrate/import.git): something done while a run works, with
# no race. no_hook takes it away.
mid_run_hook() {
	rm -rf "$SCRATCH/hooks" "$SCRATCH/hook.done"
	mkdir -p "$SCRATCH/hooks"
	cat >"$SCRATCH/hooks/reference-transaction" <<HOOK
#!/bin/sh
case "\$(git rev-parse --absolute-git-dir)" in
*/migrate/import.git) ;;
*) exit 0 ;;
esac
[ "\$1" = committed ] || exit 0
[ -e "$SCRATCH/hook.done" ] && exit 0
: >"$SCRATCH/hook.done"
unset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE
$1
HOOK
	chmod +x "$SCRATCH/hooks/reference-transaction"
	git config --global core.hooksPath "$SCRATCH/hooks"
}
no_hook() {
	git config --global --unset core.hooksPath || true
}
