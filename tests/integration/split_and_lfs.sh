#!/usr/bin/env bash
# split_and_lfs.sh - split and lfs rules in one rule file, on a real
# repository through `migrate run --to` (which asks for maps, so a lost id
# is fatal) and through the pipeline without maps (where it used to pass
# the rest of the stream through unconverted, exit 0). Found by
# fuzz_filter: the root .gitattributes asked the repository for a split
# part's blob, which only this run wrote.
#
# Judges: every commit of the result holds the parts and no data/list,
# every *.bin is an LFS pointer (`git lfs pointer --check --strict`),
# `git check-attr` says filter=lfs exactly for *.bin, `git lfs fsck`.
set -euo pipefail
. "$(dirname "$0")/lib/lib.sh"

cd "$SCRATCH"
git init -q src
mkdir -p src/data
for i in 1 2 3 4; do
	{
		echo "# the list, head line"
		for y in $(seq 2020 $((2020 + i))); do
			echo "R$y-$i record of $y"
		done
	} >src/data/list
	head -c $((1000 + i)) /dev/zero | tr '\0' "$i" >src/a.bin
	git -C src add -A
	git -C src commit -qm "c$i"
done
cat >rules <<'EOF'
data/list split record='^R(\d{4})-' into='data/part.{1}' head='data/part.head'
*.bin lfs
EOF

check() {
	local repo="$1" what="$2" c n=0
	for c in $(git -C "$repo" rev-list --all); do
		n=$((n + 1))
		! git -C "$repo" cat-file -e "$c:data/list" 2>/dev/null ||
			die "$what: commit $c still holds data/list"
		git -C "$repo" cat-file -e "$c:data/part.head" ||
			die "$what: commit $c lacks the head part"
		git -C "$repo" cat-file -p "$c:a.bin" >ptr
		git lfs pointer --check --strict --file=ptr >/dev/null 2>&1 ||
			die "$what: a.bin of $c is not an LFS pointer: $(head -c 80 ptr)"
	done
	[ "$n" = 4 ] || die "$what: $n commits, wanted 4"
}

test_case "run --to (maps asked for): every commit holds the parts and no data/list, its a.bin an LFS pointer" <<'EOF'
"$MIGRATE" run --repo src --rules rules --to new >run.out 2>&1 ||
	die "run --to failed: $(cat run.out)"
check new "run --to"
EOF

test_case "run --to: check-attr says filter=lfs for a.bin and not for the head part, git lfs fsck is clean" <<'EOF'
[ -d new ] || die "no new repository (run --to above failed)"
git -C new checkout -q main 2>/dev/null || git -C new checkout -q
[ "$(git -C new check-attr filter a.bin | sed 's/.*: //')" = lfs ] ||
	die "a.bin is not filter=lfs"
[ "$(git -C new check-attr filter data/part.head | sed 's/.*: //')" != lfs ] ||
	die "the head part is filter=lfs"
(cd new && git lfs fsck >/dev/null) || die "git lfs fsck failed"
EOF

test_case "the pipeline without maps loses no id and splits and converts every commit" <<'EOF'
# nothing may pass through unconverted
git -C src fast-export --all --show-original-ids --signed-tags=verbatim \
	--reencode=no --mark-tags >in.fi
rc=0
(cd src && "$MIGRATE" --rules ../rules --store ../store <../in.fi >../out.fi 2>../err) || rc=$?
[ "$rc" = 0 ] || die "pipeline: exit $rc: $(cat err)"
! grep -q 'cannot be computed' err || die "pipeline: ids were lost: $(cat err)"
git init -q --bare piped.git
git -C piped.git fast-import --quiet <out.fi
check piped.git pipeline
info "split with a head and lfs in one rule file: 4 commits, parts and pointers in each, maps or not"
EOF

test_done
