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
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

ALLOWED=rewrite/git/gitcmd.c
CALLS='fork|vfork|clone|clone3|execl|execlp|execle|execv|execve|execvp|execvpe|fexecve|popen|system|posix_spawn|posix_spawnp'

test_case "the sources" <<'EOF'
: >"$SCRATCH/calls"
nfiles=0
while IFS= read -r f; do
	nfiles=$((nfiles + 1))
	rel="${f#"$ROOT"/}"
	[ "$rel" = "$ALLOWED" ] && continue
	# -fpreprocessed: comments go, nothing is included or expanded
	gcc -fpreprocessed -dD -E -P -x c "$f" 2>/dev/null |
		grep -nE "(^|[^A-Za-z0-9_.>])($CALLS)[[:space:]]*\(" |
		sed "s|^|$rel:|" >>"$SCRATCH/calls" || true
done < <(find "$ROOT" \( -path "$ROOT/build*" -o -path "$ROOT/.*" -o \
	-path "$ROOT/tests" \) -prune -o \( -name '*.c' -o -name '*.h' \) -print)
[ "$nfiles" -gt 20 ] || die "found only $nfiles source files under $ROOT"
[ -f "$ROOT/$ALLOWED" ] || die "$ALLOWED is missing"
grep -qE "(^|[^A-Za-z0-9_])posix_spawnp[[:space:]]*\(" "$ROOT/$ALLOWED" ||
	die "the check is blind: it finds no posix_spawnp( in $ALLOWED itself"
if [ -s "$SCRATCH/calls" ]; then
	cat "$SCRATCH/calls" >&2
	die "processes started outside $ALLOWED (above); use gitcmd_spawn, gitcmd_spawn_piped or gitcmd_run"
fi
info "sources: $nfiles files, no process started outside $ALLOWED"
EOF

test_case "the libraries the binary under test is linked from" <<'EOF'
build="$(dirname "$MIGRATE")"
libs=()
for f in common stream rules split pointerize replace git report blob engine analyze run cli; do
	libs+=("$build/libmigrate_$f.a")
done
if ! command -v nm >/dev/null || [ ! -f "$build/libmigrate_git.a" ]; then
	info "objects: skipped (no nm, or $MIGRATE is not in a CMake build folder)"
	exit 0	# the end of this case
fi
for l in "${libs[@]}"; do
	[ -f "$l" ] || die "no $l: the list of libraries above is out of date"
done
# every member of every library (what is linked, not what an old build
# folder may still hold), and main.c's object
nm -A -u "${libs[@]}" "$build"/CMakeFiles/migrate.dir/rewrite/cli/main.c.o 2>/dev/null |
	awk -v re="^($CALLS)(@.*)?\$" '$NF ~ re { sub(/:$/, "", $1); print $1 ": calls " $NF }' |
	sed "s|$build/||" >"$SCRATCH/syms.all"
nmembers="$(for l in "${libs[@]}"; do ar t "$l"; done | wc -l)"
grep -q "libmigrate_git.a:gitcmd.c.o.*: calls posix_spawnp" "$SCRATCH/syms.all" ||
	die "the check is blind: nm finds no posix_spawnp in libmigrate_git.a's gitcmd.c.o"
grep -v "^libmigrate_git.a:gitcmd.c.o" "$SCRATCH/syms.all" >"$SCRATCH/syms" || true
[ "$nmembers" -gt 20 ] || die "the check is blind: $nmembers objects in ${#libs[@]} libraries"
if [ -s "$SCRATCH/syms" ]; then
	cat "$SCRATCH/syms" >&2
	die "objects outside $ALLOWED start processes (above)"
fi
info "objects: $nmembers in ${#libs[@]} libraries of $(basename "$build")/, only $ALLOWED starts processes"
EOF
test_done
