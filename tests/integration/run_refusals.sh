#!/usr/bin/env bash
# run_refusals.sh - what `migrate run --in-place` must not overwrite, and
# what it must carry along.
#
# Refused before anything moves (exit 1, the file, work tree or operation
# named, refs and files as they were, no backups, no journal): an
# untracked .gitattributes (the run adds one), an untracked file where the
# new history needs a directory, a linked work tree with uncommitted edits
# whose branch the run rewrites, a repository in the middle of a rebase,
# merge, cherry-pick, revert or bisect, and a sha256 repository. Carried
# along: a clean linked work tree on a rewritten branch is reset to its new
# commit (no staged revert), and a detached HEAD moves to its commit's new
# id. Leftovers of killed runs (store temp files of dead processes, temp
# and .new files beside the maps) are removed at the next start; a live
# process's temp file is not.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

printf '*.bin lfs\n' >"$SCRATCH/rules"

# make_repo DIR: main (3 commits, a .bin file), branch side, tag v1
make_repo() {
	rm -rf "$1"
	git init -q "$1"
	(
		cd "$1"
		echo one >a.txt
		head -c 4000 /dev/urandom >data.bin
		git add . && git commit -qm one
		echo two >>a.txt && git commit -qam two
		git branch side
		git tag v1
		head -c 4000 /dev/urandom >data.bin
		echo three >>a.txt && git commit -qam three
	)
}

# refused DIR NAME PATTERN: the run exits 1 with PATTERN in its message,
# and the refs of DIR are exactly as before (no backup either).
refused() {
	expect_refusal --what "$2" --says "$3" --refs-unchanged "$1" \
		--absent "$1/.git/migrate/journal" --absent "$1/.git/migrate/commit-map" \
		-- "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$1" --in-place -q
}

R="$SCRATCH/repo"

test_case "untracked files the new history would overwrite" <<'EOF'
make_repo "$R"
echo "my own attributes" >"$R/.gitattributes"
refused "$R" "untracked .gitattributes" "$R/.gitattributes"
[ "$(cat "$R/.gitattributes")" = "my own attributes" ] || die "the untracked .gitattributes changed"
rm "$R/.gitattributes"
# a file where the new history has a directory (split parts under data/)
make_repo "$R"
printf 'data.txt split record=^(.) into=parts/{1}\n' >"$SCRATCH/split.rules"
printf 'x1\ny2\n' >"$R/data.txt"
git -C "$R" add data.txt && git -C "$R" commit -qm split
echo "not a directory" >"$R/parts"
expect_refusal --what "an untracked file in the way of a directory" --says "untracked file $R/parts " \
	-- "$MIGRATE" run --rules "$SCRATCH/split.rules" --repo "$R" --in-place -q
[ "$(cat "$R/parts")" = "not a directory" ] || die "the untracked file parts changed"
info "refused: untracked .gitattributes, untracked file where a directory comes (exit 1, named, kept)"
EOF

test_case "linked work trees" <<'EOF'
make_repo "$R"
git -C "$R" worktree add -q "$SCRATCH/wt" side
echo "work in progress" >>"$SCRATCH/wt/a.txt"
refused "$R" "a dirty linked work tree" "$SCRATCH/wt"
grep -q "work in progress" "$SCRATCH/wt/a.txt" || die "the linked work tree's edit was lost"
git -C "$SCRATCH/wt" checkout -q -- a.txt
# clean: its branch is rewritten and the work tree follows (no staged revert)
run_migrate run --rules "$SCRATCH/rules" --repo "$R" --in-place -q || die "the run with a clean linked work tree failed"
[ "$(git -C "$SCRATCH/wt" rev-parse HEAD)" = "$(git -C "$R" rev-parse refs/heads/side)" ] ||
	die "the linked work tree is not on the new side"
[ "$(git -C "$SCRATCH/wt" rev-parse HEAD)" != "$(git -C "$R" rev-parse refs/migrate/original/refs/heads/side)" ] ||
	die "side was not rewritten"
[ -z "$(git -C "$SCRATCH/wt" status --porcelain)" ] ||
	die "the linked work tree shows changes: $(git -C "$SCRATCH/wt" status --porcelain | head -3)"
[ -f "$SCRATCH/wt/.gitattributes" ] || die "the linked work tree lacks the new .gitattributes"
info "linked work tree: dirty refused (named, edit kept), clean one reset to its new branch"
EOF

test_case "detached HEAD" <<'EOF'
make_repo "$R"
git -C "$R" checkout -q --detach main~1
old=$(git -C "$R" rev-parse HEAD)
run_migrate run --rules "$SCRATCH/rules" --repo "$R" --in-place -q || die "the run with a detached HEAD failed"
new=$(awk -v o="$old" '$1 == o { print $2 }' "$R/.git/migrate/commit-map")
[ -n "$new" ] && [ "$new" != "$old" ] || die "the detached commit $old has no new id in the map"
[ "$(git -C "$R" rev-parse HEAD)" = "$new" ] || die "the detached HEAD did not move to $new"
! git -C "$R" symbolic-ref -q HEAD >/dev/null || die "HEAD is no longer detached"
[ -z "$(git -C "$R" status --porcelain)" ] || die "the work tree shows changes: $(git -C "$R" status --porcelain | head -3)"
run_migrate run --repo "$R" --in-place --verify-only -q || die "--verify-only fails after a detached run"
info "detached HEAD: moved to its new id $new, clean, verifies"
EOF

test_case "operations in progress" <<'EOF'
conflict_repo() {
	make_repo "$R"
	(
		cd "$R"
		git checkout -q -b other side
		echo theirs >a.txt && git commit -qam theirs
		git checkout -q main
	)
}
conflict_repo
GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/edit/" git -C "$R" rebase -q -i main~1 >/dev/null 2>&1 ||
	die "could not stop a rebase"
refused "$R" "a paused rebase" "middle of a rebase"
conflict_repo
git -C "$R" merge -q other >/dev/null 2>&1 && die "the merge did not conflict"
refused "$R" "a merge" "middle of a merge"
conflict_repo
git -C "$R" cherry-pick other >/dev/null 2>&1 && die "the cherry-pick did not conflict"
refused "$R" "a cherry-pick" "middle of a cherry-pick"
conflict_repo
git -C "$R" revert --no-edit main~1 >/dev/null 2>&1 && die "the revert did not conflict"
refused "$R" "a revert" "middle of a revert"
make_repo "$R"
git -C "$R" bisect start -q main main~2 >/dev/null 2>&1 || git -C "$R" bisect start main main~2 >/dev/null
refused "$R" "a bisect" "middle of a bisect"
info "refused: rebase, merge, cherry-pick, revert, bisect in progress (exit 1, refs unchanged)"
EOF

test_case "sha256" <<'EOF'
git init -q --object-format=sha256 "$SCRATCH/sha256"
(cd "$SCRATCH/sha256" && echo a >a && git add a && git commit -qm a)
expect_refusal --what sha256 --says "sha256 repositories are not supported yet" \
	-- "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SCRATCH/sha256" --in-place -q
expect_refusal --what "sha256 --to" --says "sha256 repositories are not supported yet" \
	-- "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SCRATCH/sha256" --to "$SCRATCH/sha256-new" -q
info "refused: sha256 repository, in place and --to"
EOF

test_case "leftovers of killed runs" <<'EOF'
make_repo "$R"
run_migrate run --rules "$SCRATCH/rules" --repo "$R" --in-place -q || die "the first run failed"
(cd "$R" && echo four >>a.txt && git commit -qam four)
S="$R/.git/migrate"
TMPD="$R/.git/lfs/objects/tmp"
mkdir -p "$TMPD"
# a pid that does not run: beyond pid_max
dead=$(($(cat /proc/sys/kernel/pid_max) + 1))
head -c 1000 /dev/zero >"$TMPD/put-$dead-0-1"
head -c 1000 /dev/zero >"$TMPD/put-$$-0-1"	# this shell: alive
echo junk >"$S/commit-map.new.tmp-AbC123"
echo junk >"$S/tips.tmp-xYz789"
echo junk >"$S/commit-map.new"
echo junk >"$S/import-marks.new.lock"	# fast-import killed writing its marks
echo "keep me" >"$S/notes.txt"
cp "$S/commit-map" "$SCRATCH/map.before"
"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$R" --in-place 2>"$SCRATCH/err" || die "the run after the leftovers failed: $(cat "$SCRATCH/err")"
grep -q "removed 5 file(s) an interrupted run left" "$SCRATCH/err" || die "no message about the leftovers: $(cat "$SCRATCH/err")"
for f in "$TMPD/put-$dead-0-1" "$S/commit-map.new.tmp-AbC123" "$S/tips.tmp-xYz789" "$S/commit-map.new" "$S/import-marks.new.lock" "$S/import.git"; do
	[ ! -e "$f" ] || die "$f is still there"
done
[ -e "$TMPD/put-$$-0-1" ] || die "the temp file of a live process was removed"
[ -e "$S/notes.txt" ] || die "a file that is not ours was removed"
grep -q junk "$S/commit-map" && die "the junk .new map was used"
[ "$(($(wc -l <"$S/commit-map") - $(wc -l <"$SCRATCH/map.before")))" = 1 ] ||
	die "the map did not grow by the one new commit"
git -C "$R" fsck --no-progress >/dev/null 2>&1 || die "git fsck fails after the run"
info "leftovers: dead process's store temp file, temp and .new state files, fast-import's marks lock removed; live one and others kept"
EOF
test_done
