#!/usr/bin/env bash
# unlfs_stream.sh - a full-data stream stands alone (issue 28, item 4): the
# documented pipeline `git fast-export | migrate | git fast-import` with
# unlfs rules, run where there is no repository at all, takes an LFS
# history back to real files although the same pointer blob is named again
# by later commits (a copy, a rename): it failed with "blob ... is needed
# again but is neither in the stream any more nor in repository .". Every
# file of every commit is judged against git lfs smudge of the original.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
git lfs install --skip-repo >/dev/null

W="$SCRATCH/lfs-repo"
git init -q "$W"
(
	cd "$W"
	git lfs track '*.bin' >/dev/null
	python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(1500))" >a.bin
	python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(1700))" >b.bin
	git add -A && git commit -qm one
	echo text >t.txt && git add -A && git commit -qm two
	mkdir sub && cp a.bin sub/copy.bin && git add -A && git commit -qm copy
	git mv b.bin moved.bin && git commit -qm rename
	git checkout -q -b side HEAD~2
	cp a.bin again.bin && git add -A && git commit -qm "side copy"
)
export_stream "$W" >"$SCRATCH/full.fe"	# full data: every blob is in it
printf '*.bin unlfs\n' >"$SCRATCH/rules"
test_case "a full-data stream, no repository anywhere: every file taken back" <<'EOF'
mkdir -p "$SCRATCH/nowhere"
(cd "$SCRATCH/nowhere" && run_migrate --rules "$SCRATCH/rules" --lfs-objects "$W/.git/lfs/objects" \
	<"$SCRATCH/full.fe" >"$SCRATCH/out.fi" 2>"$SCRATCH/err") ||
	{ cat "$SCRATCH/err" >&2; die "the pipeline without a repository failed"; }
N="$SCRATCH/new"
git init -q "$N"
git -C "$N" fast-import --quiet <"$SCRATCH/out.fi" || die "fast-import refused the stream"
n=0
for rev in $(git -C "$W" rev-list --all); do
	new=$(git -C "$N" rev-list --all --format=%s | paste - - | awk -v s="$(git -C "$W" log -1 --format=%s "$rev")" '$0 ~ "\t"s"$" {print $2}' | head -1)
	[ -n "$new" ] || die "no commit '$(git -C "$W" log -1 --format=%s "$rev")' in the result"
	while read -r p; do
		git -C "$W" show "$rev:$p" >"$SCRATCH/old"
		case "$p" in *.bin) git -C "$W" lfs smudge <"$SCRATCH/old" >"$SCRATCH/want" ;; *) cp "$SCRATCH/old" "$SCRATCH/want" ;; esac
		[ "$p" = .gitattributes ] && continue
		git -C "$N" show "$new:$p" | cmp -s - "$SCRATCH/want" || die "$p at '$(git -C "$W" log -1 --format=%s "$rev")' is not the file"
		n=$((n + 1))
	done < <(git -C "$W" ls-tree -r --name-only "$rev")
done
info "no repository anywhere: $n files of $(git -C "$W" rev-list --all | wc -l) commits taken back, copies and renames of one pointer included"
EOF

test_done
