# lfs_lib.sh - checks shared by the LFS integration tests (sourced after
# lib.sh). git and git-lfs are the judges.

export HOME="$SCRATCH/home"
mkdir -p "$HOME"
git lfs install --skip-repo >/dev/null

# check_ref_checkouts ORIG NEW: every branch and tag of NEW (a tag of a
# blob or tree: the object it names equals the original's), checked out
# with git-lfs smudging, equals ORIG at the same ref, checked out the same
# way, byte for byte (but
# .gitattributes, which migrate extends); git status is clean; and
# `git check-attr filter` says lfs for exactly the LFS files (and empty
# files a rule names: an empty file is its own pointer).
check_ref_checkouts() {
	local orig="$1" new="$2" w="$SCRATCH/w" o="$SCRATCH/o" n=0 ref
	git -C "$new" symbolic-ref HEAD refs/heads/main 2>/dev/null || true
	(cd "$new" && git lfs install --local >/dev/null)
	while read -r ref; do
		n=$((n + 1))
		if [ "$(git -C "$new" cat-file -t "$ref^{}")" != commit ]; then
			# a tag of a blob or tree: nothing to check out; the object
			# it names must be the original's, byte for byte
			cmp -s <(git -C "$orig" cat-file -p "$ref^{}") <(git -C "$new" cat-file -p "$ref^{}") ||
				die "$ref: names another $(git -C "$new" cat-file -t "$ref^{}") than the original"
			continue
		fi
		rm -rf "$w" "$o"
		git -C "$new" worktree prune
		git -C "$orig" worktree prune
		git -C "$new" worktree add -q --detach "$w" "$ref" ||
			die "$ref: checkout failed"
		git -C "$orig" worktree add -q --detach "$o" "$ref" ||
			die "$ref: checkout of the original failed"
		diff -r --no-dereference -x .gitattributes -x .git "$o" "$w" ||
			die "$ref: the checkout differs from the original"
		[ -z "$(git -C "$w" status --porcelain)" ] ||
			die "$ref: git status is not clean: $(git -C "$w" status --porcelain | head -3)"
		git -C "$w" ls-files -z | git -C "$w" check-attr --stdin -z filter |
			tr '\0' '\n' | paste - - - | awk -F'\t' '$3 == "lfs" { print $1 }' |
			sort >"$SCRATCH/attr.lfs"
		git -C "$w" lfs ls-files --name-only | sort >"$SCRATCH/lfs.files"
		(cd "$w" && git ls-files -z | xargs -0 -r sh -c \
			'for f; do if [ -f "$f" ] && [ ! -L "$f" ] && [ ! -s "$f" ]; then echo "$f"; fi; done' sh) |
			sort >"$SCRATCH/empty"
		comm -23 "$SCRATCH/attr.lfs" "$SCRATCH/empty" >"$SCRATCH/attr.nonempty"
		diff -u "$SCRATCH/lfs.files" "$SCRATCH/attr.nonempty" ||
			die "$ref: check-attr filter=lfs differs from the LFS files"
		git -C "$new" worktree remove --force "$w"
		git -C "$orig" worktree remove --force "$o"
	done < <(git -C "$new" for-each-ref --format='%(refname)' refs/heads refs/tags)
	[ "$n" -gt 0 ] || die "no refs to check in $new"
	info "$n refs checked out: identical to the original, clean, attributes exact"
}
