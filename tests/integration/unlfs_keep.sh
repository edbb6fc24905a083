#!/usr/bin/env bash
# unlfs_keep.sh - `unlfs` with --missing=keep (issue 28, item 5): a pointer
# whose object is in no store stays a pointer and stays an LFS file, by its
# own filter=lfs line in the root .gitattributes (it lost its line with the
# others'), while the files taken back have none: git check-attr judges
# at every commit; the work tree after `migrate run` is clean, the kept
# pointer checked out as a pointer. A pointer with extensions is refused
# naming the commit and the path, with the rule that keeps it.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
git lfs install --skip-repo >/dev/null

W="$SCRATCH/lfs-repo"
git init -q "$W"
(
	cd "$W"
	git lfs track '*.bin' >/dev/null
	for i in 1 2 3; do
		python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(1500 + $i))" >"art$i.bin"
		git add -A && git commit -qm "commit $i"
	done
	mkdir -p sub && cp art1.bin sub/copy.bin && git add -A && git commit -qm copy
)
test_case "--missing keep: the kept pointer alone keeps filter=lfs, work tree clean" <<'EOF'
lost=$(git -C "$W" lfs ls-files -l | awk '$3 == "art2.bin" {print $1}')
[ -n "$lost" ] || die "no oid for art2.bin"
find "$W/.git/lfs/objects" -name "$lost" -delete
printf '*.bin unlfs\n' >"$SCRATCH/rules"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$W" --to "$SCRATCH/new" --missing keep \
	2>"$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "unlfs --missing keep failed"; }
N="$SCRATCH/new"
# each commit's attributes (git 2.39 has no check-attr --source: its tree
# read into an index of its own, check-attr --cached)
n=0
for rev in $(git -C "$N" rev-list --all); do
	GIT_INDEX_FILE="$SCRATCH/index" git -C "$N" read-tree "$rev"
	while read -r p; do
		want=unspecified
		git -C "$N" cat-file blob "$rev:$p" >"$SCRATCH/blob"
		head -c 100 "$SCRATCH/blob" | grep -q '^version https://git-lfs' && want=lfs
		got=$(GIT_INDEX_FILE="$SCRATCH/index" git -C "$N" check-attr --cached filter -- "$p" |
			sed 's/.*: filter: //')
		[ "$got" = "$want" ] || die "$rev $p: check-attr says filter $got, the blob says $want"
		n=$((n + 1))
	done < <(git -C "$N" ls-tree -r --name-only "$rev" | grep '\.bin$')
done
[ "$n" -ge 9 ] || die "only $n paths judged"
git -C "$N" show HEAD:art2.bin | grep -q '^version https://git-lfs' || die "art2.bin is not kept as a pointer"
output_has '^version https://git-lfs' -- git -C "$N" show HEAD:art1.bin && die "art1.bin was not taken back"
[ -z "$(git -C "$N" status --porcelain)" ] || die "the work tree is not clean: $(git -C "$N" status --porcelain | head -3)"
grep -q '^version https://git-lfs' "$N/art2.bin" || die "the kept pointer is not a pointer in the work tree"
info "--missing keep: the kept pointer alone has filter=lfs ($n paths judged by check-attr, every commit), work tree clean"
EOF

test_case "a pointer with extensions: refused naming commit and path, the rule it suggests keeps it" <<'EOF'
# a pointer with extensions: refused naming the commit and the path, with
# the rule that keeps it; that rule keeps it a pointer and the run goes on
X="$SCRATCH/ext-repo"
git init -q "$X"
(
	cd "$X"
	printf '*.bin filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes
	printf 'plain\n' >readme.txt
	git add -A && git commit -qm first
	mkdir -p "dir with space"
	printf 'version https://git-lfs.github.com/spec/v1\next-0-foo sha256:%s\noid sha256:%s\nsize 12\n' \
		"$(printf 'a%.0s' $(seq 64))" "$(printf 'b%.0s' $(seq 64))" >"dir with space/x.bin"
	git add -A && git -c filter.lfs.clean=cat -c filter.lfs.smudge=cat -c filter.lfs.process= \
		-c filter.lfs.required=false commit -qm "extension pointer"
)
commit=$(git -C "$X" rev-parse HEAD)
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$X" --to "$SCRATCH/ext-new" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "an extension pointer: exit $rc, not 3"; }
grep -qF "dir with space/x.bin in commit $commit: an LFS pointer with extensions" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "an extension pointer: commit and path not named"; }
rule=$(sed -n "s/.*with the rule '\(.*\)' before the unlfs rule.*/\1/p" "$SCRATCH/err")
[ -n "$rule" ] || die "no rule suggested: $(cat "$SCRATCH/err")"
{ printf '%s\n' "$rule"; cat "$SCRATCH/rules"; } >"$SCRATCH/rules.ext"
run_migrate run -q --rules "$SCRATCH/rules.ext" --repo "$X" --to "$SCRATCH/ext-new2" ||
	die "the run with the suggested rule ($rule) failed"
git -C "$SCRATCH/ext-new2" show "HEAD:dir with space/x.bin" | grep -q '^ext-0-foo' ||
	die "the extension pointer did not stay a pointer"
info "an extension pointer: refused naming commit and path; the suggested rule ($rule) keeps it"
EOF

test_done
