#!/usr/bin/env bash
# run_early.sh - what can refuse `migrate run --in-place` refuses it before
# the first object is stored (issue 27): an untracked .gitattributes the
# lfs rules would overwrite is named before any LFS object is written (it
# was refused only after the whole conversion, with the store filled), and
# so is a linked work tree with uncommitted changes on a branch the run
# converts, and a run without rules (run_last_mile.sh). A
# --restart that fails leaves no copy of the state behind.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

R="$SCRATCH/repo"
git init -q "$R"
(
	cd "$R"
	for i in 1 2 3; do
		head -c $((3000 * i)) /dev/zero | tr '\0' "$i" >"art$i.bin"
		git add -A && git commit -qm "commit $i"
	done
)
printf '*.bin lfs\n' >"$SCRATCH/rules"
test_case "an untracked .gitattributes: refused before any LFS object is stored" <<'EOF'
echo "my own attributes" >"$R/.gitattributes"
refs_of "$R" >"$SCRATCH/before"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$R" --in-place 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "an untracked .gitattributes: exit $rc, not 1"; }
grep -q "the untracked file $R/.gitattributes would be overwritten" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "an untracked .gitattributes: not named"; }
[ "$(cat "$R/.gitattributes")" = "my own attributes" ] || die "the untracked .gitattributes changed"
[ -z "$(find "$R/.git/lfs" -type f 2>/dev/null)" ] ||
	die "LFS objects were stored before the refusal: $(find "$R/.git/lfs" -type f | head -3)"
[ ! -e "$R/.git/migrate/import.git" ] || die "the side repository was made before the refusal"
diff -u "$SCRATCH/before" <(refs_of "$R") || die "refs moved"
info "an untracked .gitattributes: refused before any LFS object was stored"
EOF

test_case "a dirty linked work tree: refused before any LFS object is stored" <<'EOF'
# a linked work tree with uncommitted changes on a branch the run converts
L="$SCRATCH/linked-repo"
git clone -q --no-local "$R" "$L"
rm -f "$L/.gitattributes"
git -C "$L" branch -q side HEAD~1
git -C "$L" worktree add -q "$SCRATCH/wt" side
echo "work in progress" >>"$SCRATCH/wt/art1.bin"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$L" --in-place 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "a dirty linked work tree: exit $rc, not 1"; }
grep -q "the work tree $SCRATCH/wt has uncommitted changes and its branch refs/heads/side" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "a dirty linked work tree: not named"; }
[ -z "$(find "$L/.git/lfs" -type f 2>/dev/null)" ] || die "LFS objects were stored before refusing the dirty linked work tree"
grep -q "work in progress" "$SCRATCH/wt/art1.bin" || die "the linked work tree's edit was lost"
info "a dirty linked work tree: refused before any LFS object was stored"
EOF

test_case "a preview is not refused; with the file moved away the run converts" <<'EOF'
# a preview writes nothing: it is not refused
run_migrate run -q --rules "$SCRATCH/rules" --repo "$R" --in-place --dry-run ||
	die "the preview was refused"
# moved away, the run goes through
mv "$R/.gitattributes" "$SCRATCH/attributes.mine"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$R" --in-place || die "the run after moving it away failed"
git -C "$R" show HEAD:art1.bin | grep -q '^version https://git-lfs' || die "not converted"
info "a preview is not refused; with the file moved away the run converts"
EOF

test_case "a failed --restart leaves no copy of the state" <<'EOF'
# a --restart that fails leaves no copy of the state behind (it left
# before-restart/, and a later restart made before-restart.2/)
printf '*.bin lfz\n' >"$SCRATCH/bad.rules"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/bad.rules" --repo "$R" --in-place --restart 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "a --restart with bad rules: exit $rc, not 1"; }
[ ! -e "$R/.git/migrate/before-restart" ] || die "a failed --restart left before-restart/"
printf '*.bin lfs\n*.txt lfs\n' >"$SCRATCH/rules2"
run_migrate run -q --rules "$SCRATCH/rules2" --repo "$R" --in-place --restart || die "the --restart after failed"
[ -d "$R/.git/migrate/before-restart" ] && [ ! -e "$R/.git/migrate/before-restart.2" ] ||
	die "the restart's copy of the state is not before-restart/ alone: $(ls "$R/.git/migrate")"
info "a failed --restart leaves no copy of the state; the next one keeps it in before-restart/"
EOF

test_done
