#!/usr/bin/env bash
# one_spawner.sh - rewrite/git/gitcmd.c is the only code of migrate that
# starts a process (issue 10): argv arrays, no shell, no popen(). Another
# fork/exec, popen() or system() anywhere in migrate's sources fails here.
#
# Two looks, so that neither a comment nor a macro fools it:
#  - the sources (every .c and .h outside tests/ and the build folders),
#    comments removed by the compiler's preprocessor, grepped for calls;
#  - the object files the binary under test was linked from (when
#    $MIGRATE sits in a CMake build folder), whose undefined symbols name
#    every libc function they call.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"

ALLOWED=rewrite/git/gitcmd.c
# The one exception left, for as long as it lasts: the LFS store's
# popen("git rev-parse ... --git-common-dir") in open_store() (lfs.c, then
# apply.c), to become gitcmd_common_dir(NULL, &dir, e) (issue 10). Only
# that popen, only in rewrite/blob/.
PENDING=rewrite/blob/
PENDING_CALL=popen
PENDING_ARGS=--git-common-dir
CALLS='fork|vfork|clone|clone3|execl|execlp|execle|execv|execve|execvp|execvpe|fexecve|popen|system|posix_spawn|posix_spawnp'

# --- the sources -----------------------------------------------------------------
: >"$SCRATCH/calls"
nfiles=0
while IFS= read -r f; do
	nfiles=$((nfiles + 1))
	rel="${f#"$ROOT"/}"
	[ "$rel" = "$ALLOWED" ] && continue
	# -fpreprocessed: comments go, nothing is included or expanded
	pending='^$'
	case "$rel" in
	"$PENDING"*)
		pending="$PENDING_CALL[[:space:]]*\(\"git rev-parse [^\"]*$PENDING_ARGS"
		grep -qE "$pending" "$f" &&
			info "pending: $rel still calls $PENDING_CALL() (the exception above)"
		;;
	esac
	gcc -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null |
		grep -nE "(^|[^A-Za-z0-9_.>])($CALLS)[[:space:]]*\(" |
		grep -vE "$pending" | sed "s|^|$rel:|" >>"$SCRATCH/calls" || true
done < <(find "$ROOT" \( -path "$ROOT/build*" -o -path "$ROOT/.*" -o \
	-path "$ROOT/tests" \) -prune -o \( -name '*.c' -o -name '*.h' \) -print)
[ "$nfiles" -gt 20 ] || die "found only $nfiles source files under $ROOT"
[ -f "$ROOT/$ALLOWED" ] || die "$ALLOWED is missing"
grep -qE "(^|[^A-Za-z0-9_])fork[[:space:]]*\(" "$ROOT/$ALLOWED" ||
	die "the check is blind: it finds no fork( in $ALLOWED itself"
if [ -s "$SCRATCH/calls" ]; then
	cat "$SCRATCH/calls" >&2
	die "processes started outside $ALLOWED (above); use gitcmd_spawn, gitcmd_spawn_piped or gitcmd_run"
fi
info "sources: $nfiles files, no process started outside $ALLOWED"

# --- the object files of the binary under test -------------------------------------
objs="$(dirname "$MIGRATE")/CMakeFiles"
if ! command -v nm >/dev/null || [ ! -d "$objs" ]; then
	info "objects: skipped (no nm, or $MIGRATE is not in a CMake build folder)"
	echo "one_spawner: ok"
	exit 0
fi
: >"$SCRATCH/syms"
nobjs=0
seen_allowed=0
while IFS= read -r o; do
	nobjs=$((nobjs + 1))
	case "$o" in
	*/"$ALLOWED".o) seen_allowed=1; continue ;;
	esac
	calls="$CALLS"
	case "$o" in
	*/"$PENDING"*.o) calls="$(printf '%s' "$CALLS" | tr '|' '\n' | grep -vx "$PENDING_CALL" | paste -sd'|')" ;;
	esac
	nm -u "$o" | awk -v o="${o#"$objs"/}" -v re="^($calls)(@.*)?\$" \
		'$NF ~ re { print o ": calls " $NF }' >>"$SCRATCH/syms"
done < <(find "$objs" -path "$objs/migrate*.dir/*" -name '*.o')
[ "$nobjs" -gt 20 ] && [ "$seen_allowed" = 1 ] ||
	die "the check is blind: $nobjs object files under $objs, $ALLOWED.o among them: $seen_allowed"
nm -u "$objs"/migrate_git.dir/"$ALLOWED".o | grep -qE '^ *U fork(@|$)' ||
	die "the check is blind: nm finds no fork in $ALLOWED.o"
if [ -s "$SCRATCH/syms" ]; then
	cat "$SCRATCH/syms" >&2
	die "object files outside $ALLOWED.o start processes (above)"
fi
info "objects: $nobjs files of $(basename "$(dirname "$MIGRATE")")/, only $ALLOWED.o calls fork/exec"
echo "one_spawner: ok"
