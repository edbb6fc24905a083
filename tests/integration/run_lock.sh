#!/usr/bin/env bash
# run_lock.sh - one `migrate run` at a time per repository: a second run
# started while the first works (from inside it, with no race: a hook of
# fast-import's in the first run's side repository) is refused with one
# message naming the lock, exit 1, and touches nothing; the first run
# finishes as if alone (git lfs fsck, every .bin an LFS pointer); once it
# is done the lock is free: the next run goes.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

R="$SCRATCH/repo"
git init -q "$R"
(
	cd "$R"
	for i in 1 2 3; do
		head -c $((3000 + i)) /dev/urandom >"art$i.bin"
		echo "line $i" >>notes.txt
		git add -A && git commit -qm "commit $i"
	done
)
printf '*.bin lfs\n' >"$SCRATCH/rules"
refs_of "$R" >"$SCRATCH/before.refs"

test_case "a second run while the first works is refused by the lock" <<'CASE'
mid_run_hook "'$MIGRATE' run -q --rules '$SCRATCH/rules' --repo '$R' --in-place \
	>'$SCRATCH/second.out' 2>'$SCRATCH/second.err'; echo \$? >'$SCRATCH/second.rc'
refs_list=\$(git -C '$R' for-each-ref --format='%(objectname) %(refname)' | LC_ALL=C sort)
printf '%s\n' \"\$refs_list\" >'$SCRATCH/during.refs'"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$R" --in-place 2>"$SCRATCH/first.err" || rc=$?
no_hook
[ -s "$SCRATCH/second.rc" ] || die "the hook did not start a second run"
[ "$rc" = 0 ] || { cat "$SCRATCH/first.err"; die "the first run failed (exit $rc)"; }
[ "$(cat "$SCRATCH/second.rc")" = 1 ] ||
	die "the second run exited $(cat "$SCRATCH/second.rc"), not 1: $(cat "$SCRATCH/second.err")"
[ "$(wc -l <"$SCRATCH/second.err")" = 1 ] || die "not one message: $(cat "$SCRATCH/second.err")"
grep -q "another migrate run holds .*migrate/lock" "$SCRATCH/second.err" ||
	die "the refusal does not name the lock: $(cat "$SCRATCH/second.err")"
[ ! -s "$SCRATCH/second.out" ] || die "the second run wrote to standard output"
diff -q "$SCRATCH/before.refs" "$SCRATCH/during.refs" >/dev/null ||
	die "a ref moved while the first run was importing"
info "the second run: $(cat "$SCRATCH/second.err")"
CASE

test_case "the first run finished as if alone" <<'CASE'
(cd "$R" && git lfs fsck >/dev/null) || die "git lfs fsck failed"
for i in 1 2 3; do
	git -C "$R" show "main:art$i.bin" | git lfs pointer --check --stdin ||
		die "art$i.bin is not an LFS pointer at main"
done
[ -z "$(git -C "$R" status --porcelain)" ] || die "the work tree is not clean"
[ ! -e "$R/.git/migrate/journal" ] || die "a journal is left"
info "every .bin an LFS pointer, git lfs fsck clean, no journal"
CASE

test_case "once the run is done the lock is free" <<'CASE'
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$R" --in-place 2>"$SCRATCH/third.err" || rc=$?
[ "$rc" = 0 ] || die "the next run failed (exit $rc): $(cat "$SCRATCH/third.err")"
info "the next run goes"
CASE

test_done
