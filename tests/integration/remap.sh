#!/usr/bin/env bash
# remap.sh - `migrate remap` moves a collaborator's unpushed work onto the
# rewritten history.
#
# A published repository (bare, the assets corpus) has two clones. Alice
# has no local work; Bob has a local branch with two unpushed commits on
# main (one names an old commit id in its message), a local branch that is
# exactly an old commit, and a branch whose commit conflicts with the
# migration (it edits a file the rules drop). The maintainer migrates the
# repository (LFS and a drop rule: ids change) and publishes it. Alice
# follows RESET.md's commands for a clone without local work; Bob fetches
# and runs `migrate remap`: his branch ends up on the new history with his
# two commits on top and their content intact, the old-commit branch moves
# to the new commit, and the conflicting branch is refused and left as it
# was.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/lfs_lib.sh
. "$HERE/lfs_lib.sh"

make_history --only assets "$SCRATCH/corpus"
ORIGIN="$SCRATCH/origin.git"
git clone -q --bare "$SCRATCH/corpus/assets" "$ORIGIN"
git clone -q "$ORIGIN" "$SCRATCH/alice"
git clone -q "$ORIGIN" "$SCRATCH/bob"
git clone -q "$ORIGIN" "$SCRATCH/carol"
B="$SCRATCH/bob"
C="$SCRATCH/carol"
# Carol: work2, one unpushed commit on the old main
git -C "$C" checkout -q -b work2
echo "carol's notes" >"$C/carol.txt"
git -C "$C" add carol.txt && git -C "$C" commit -q -m "carol's notes"

# --- Bob's unpushed work ------------------------------------------------------
old_main="$(git -C "$B" rev-parse main)"
git -C "$B" checkout -q -b work
echo "bob's notes" >"$B/notes.txt"
git -C "$B" add notes.txt
git -C "$B" commit -q -m "notes: first (after $(git -C "$B" rev-parse --short=10 main~2))"
echo "more notes" >>"$B/notes.txt"
mkdir -p "$B/src"
echo 'int main(void) { return 0; }' >"$B/src/bob.c"
git -C "$B" add notes.txt src/bob.c
git -C "$B" commit -q -m "notes: second, and bob.c; fixes $old_main"
git -C "$B" branch old-point main~3
git -C "$B" checkout -q -b conflicting main
echo "changed by bob" >>"$B/data/strings.json"
git -C "$B" commit -q -a -m "edit strings.json"
git -C "$B" checkout -q work
git -C "$B" diff main work >"$SCRATCH/work.patch"
git -C "$B" log --format='%an %ae %at %s' main..work >"$SCRATCH/work.log"
old_conflicting="$(git -C "$B" rev-parse conflicting)"
old_point="$(git -C "$B" rev-parse old-point)"

# --- the maintainer migrates and publishes -------------------------------------
printf '/data/strings.json drop\n*.bin lfs\n*.psd lfs\n' >"$SCRATCH/rules"

test_case "the maintainer's migrate run --in-place changes main's id" <<'EOF'
run_migrate run --rules "$SCRATCH/rules" --repo "$ORIGIN" --in-place -q ||
	die "migrate run --in-place of the published repository failed"
new_main="$(git -C "$ORIGIN" rev-parse main)"
[ "$new_main" != "$old_main" ] || die "test setup: the rules did not change main's id"
EOF
MAP="$ORIGIN/migrate/commit-map"
# every case below is on the rewritten repository of the case above

# --- Alice: no local work, RESET.md's commands ---------------------------------
test_case "Alice, without local work, follows RESET.md's commands onto the new main and tags" <<'EOF'
new_main="$(git -C "$ORIGIN" rev-parse main)"
grep -q 'git fetch --all --prune' "$ORIGIN/migrate/RESET.md" || die "RESET.md: no fetch"
(cd "$SCRATCH/alice" && git fetch -q --all --prune && git checkout -q main &&
	git reset -q --hard origin/main && git fetch -q --tags --force) ||
	die "RESET.md's commands for a clone without local work failed"
[ "$(git -C "$SCRATCH/alice" rev-parse HEAD)" = "$new_main" ] || die "Alice is not on the new main"
[ "$(git -C "$SCRATCH/alice" rev-parse v1.0.0)" = "$(git -C "$ORIGIN" rev-parse v1.0.0)" ] ||
	die "Alice's tags are not the new ones"
EOF

# --- Bob: fetch, remap ------------------------------------------------------------
test_case "Bob's remap refuses the conflicting branch (exit 3) and leaves it, HEAD and the work tree as they were" <<'EOF'
git -C "$B" fetch -q --all --prune
rc=0
(cd "$B" && "$MIGRATE" remap --commit-map "$MAP") 2>"$SCRATCH/remap.err" || rc=$?
cat "$SCRATCH/remap.err" >&2
[ "$rc" = 3 ] || die "remap with a conflicting branch gave exit $rc, not 3"
grep -q 'conflicting: not moved' "$SCRATCH/remap.err" || die "the conflict is not reported"
[ "$(git -C "$B" rev-parse conflicting)" = "$old_conflicting" ] ||
	die "the conflicting branch was changed"
[ ! -d "$B/.git/rebase-merge" ] && [ ! -d "$B/.git/rebase-apply" ] || die "a rebase was left in progress"
[ "$(git -C "$B" symbolic-ref HEAD)" = refs/heads/work ] || die "HEAD is not back on work"
[ -z "$(git -C "$B" status --porcelain --untracked-files=no)" ] || die "Bob's work tree is not clean"
EOF

# the next three judge Bob's branches after the remap above
test_case "Bob's work is rebased on the new main: two commits, changes, authors and dates intact, old ids in messages rewritten" <<'EOF'
new_main="$(git -C "$ORIGIN" rev-parse main)"
[ "$(git -C "$B" rev-parse work~2)" = "$new_main" ] || die "work is not two commits on the new main"
[ "$(git -C "$B" rev-list --count "$new_main..work")" = 2 ] || die "work has not exactly 2 commits on the new main"
git -C "$B" diff "$new_main" work >"$SCRATCH/work.new.patch"
diff -u "$SCRATCH/work.patch" "$SCRATCH/work.new.patch" || die "the commits' changes differ after remap"
git -C "$B" log --format='%an %ae %at %s' "$new_main..work" | sed 's/[0-9a-f]\{10,40\}/ID/g' >"$SCRATCH/work.new.log"
sed 's/[0-9a-f]\{10,40\}/ID/g' "$SCRATCH/work.log" | diff -u - "$SCRATCH/work.new.log" ||
	die "authors, dates or subjects changed"
git -C "$B" log -1 --format=%B work | grep -q "fixes $new_main" ||
	die "the full old id in the message was not rewritten: $(git -C "$B" log -1 --format=%B work)"
short_new="$(git -C "$ORIGIN" rev-parse --short=10 main~2)"
git -C "$B" log -1 --format=%B work~1 | grep -q "after $short_new" ||
	die "the abbreviated old id was not rewritten: $(git -C "$B" log -1 --format=%B work~1)"
[ "$(git -C "$B" show work:notes.txt)" = "$(printf "bob's notes\nmore notes")" ] || die "notes.txt content"
git -C "$B" show work:assets/textures/hero.psd | grep -q '^version https://git-lfs' ||
	die "work does not have the new (LFS) history"
EOF

test_case "old-point, exactly an old commit, moves to its new commit" <<'EOF'
# old-point: exactly an old commit, moved to the new one
[ "$(git -C "$B" rev-parse old-point)" = "$(git -C "$ORIGIN" rev-parse main~3)" ] ||
	die "old-point did not move to the new main~3"
grep -q "^$old_point $(git -C "$ORIGIN" rev-parse main~3)\$" "$MAP" || die "old-point: map"
EOF

test_case "a second remap of the moved branches finds nothing to do" <<'EOF'
new_main="$(git -C "$ORIGIN" rev-parse main)"
[ "$new_main" != "$old_main" ] || die "main is not rewritten (the first case failed)"
# a second remap finds nothing to do for the moved branches
rc=0
(cd "$B" && "$MIGRATE" remap --commit-map "$MAP" work old-point) 2>"$SCRATCH/remap2.err" || rc=$?
[ "$rc" = 0 ] || die "a second remap of moved branches failed: $(cat "$SCRATCH/remap2.err")"
[ "$(git -C "$B" rev-parse work~2)" = "$new_main" ] || die "the second remap moved work"
info "remap: work rebased (2 commits, content and authors intact, old ids in messages rewritten), old-point moved, conflicting refused"
EOF

test_case "remap without --commit-map and no .git/migrate/commit-map: exit 1, naming commit-map" <<'EOF'
# the default map is .git/migrate/commit-map; without one, usage error
rc=0
(cd "$B" && "$MIGRATE" remap) 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'commit-map' "$SCRATCH/err" || die "remap without a map: exit $rc"
EOF

test_case "Carol stays on the branch she is on when a hook would block checking it out again; work2 is rebased aside" <<'EOF'
new_main="$(git -C "$ORIGIN" rev-parse main)"
[ "$new_main" != "$old_main" ] || die "main is not rewritten (the first case failed)"
# --- Carol: the branch she is on must stay checked out ----------------------
# She is on feature (new history, tracks blocker.txt); work2 is rebased.
# A post-rewrite hook (a tool that writes files after a rebase) creates an
# untracked blocker.txt wherever the rebase ran: a rebase of work2 in her
# own work tree would leave her on work2, unable to check feature out again.
git -C "$C" fetch -q --all --prune
git -C "$C" checkout -q -b feature origin/main
echo "tracked on feature" >"$C/blocker.txt"
git -C "$C" add blocker.txt && git -C "$C" commit -q -m "feature: blocker"
printf '#!/bin/sh\necho from-the-hook >blocker.txt\n' >"$C/.git/hooks/post-rewrite"
chmod +x "$C/.git/hooks/post-rewrite"
rc=0
(cd "$C" && "$MIGRATE" remap --commit-map "$MAP") 2>"$SCRATCH/carol.err" || rc=$?
[ "$rc" = 0 ] || die "Carol's remap gave exit $rc: $(cat "$SCRATCH/carol.err")"
[ "$(git -C "$C" symbolic-ref HEAD)" = refs/heads/feature ] ||
	die "Carol was left on $(git -C "$C" symbolic-ref HEAD 2>/dev/null || echo a detached HEAD), not feature"
[ "$(cat "$C/blocker.txt")" = "tracked on feature" ] || die "Carol's blocker.txt changed"
[ -z "$(git -C "$C" status --porcelain)" ] || die "Carol's work tree is not clean: $(git -C "$C" status --porcelain)"
[ "$(git -C "$C" rev-parse work2~1)" = "$new_main" ] || die "work2 is not on the new main"
[ "$(git -C "$C" show work2:carol.txt)" = "carol's notes" ] || die "work2 lost carol.txt"
[ "$(git -C "$C" worktree list | wc -l)" = 1 ] || die "a temporary work tree was left: $(git -C "$C" worktree list)"
info "remap: the clone stays on its branch (others are rebased aside), even when checking it out again would fail"
EOF

test_done
