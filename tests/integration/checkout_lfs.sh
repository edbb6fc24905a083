#!/usr/bin/env bash
# checkout_lfs.sh - the work tree a run checks out, its LFS files copied
# by migrate's threads rather than piped through git-lfs's smudge.
#
# A small history with LFS candidates (one executable, one under a name
# with spaces and non-ASCII letters), a file that was an LFS pointer
# before the run and whose object is nowhere, and a text file holding the
# pointer of another file's content (the run makes it an LFS file: every
# pointer in the history is one). After `run --to`, `run --in-place` and
# in a linked work tree: every file is what git-lfs's smudge makes of it
# (the content; the pointer where the object is missing); the index holds
# each LFS file's stat data as lstat(2) gives it, and each has its
# object's mtime (as `cp -p` keeps it), so git reads none again; `git
# status` is clean and `git lfs fsck` passes; and no byte of the content
# went through git's pipe to git-lfs (GIT_TRACE_PACKET). Then what
# git-lfs decides itself is left to it: lfs.fetchexclude (the excluded
# file stays a pointer), .git/info/attributes unsetting the filter (that
# pointer stays text), GIT_LFS_SKIP_SMUDGE=1 (every LFS file stays a
# pointer); the index forms git may have: version 4 with a split index,
# and a sparse check-out (the file outside it is not written). Last, the
# files of a check-out are written by git's parallel workers
# (checkout.workers), unless the user set their number.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/lfs_lib.sh
. "$HERE/lfs_lib.sh"

MARK="CONTENT-NEVER-PIPED"
SRC="$SCRATCH/src"
git init -q "$SRC"
(
	cd "$SRC"
	# the pointer of an object no store has, tracked as LFS already
	printf 'old.bin filter=lfs diff=lfs merge=lfs -text\n' >.gitattributes
	printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize 12345\n' 7 >old.bin
	git add .gitattributes old.bin
	git commit -q -m "an LFS file whose object is gone"
	mkdir -p "sub/dir" "dir with space"
	for f in big1.bin sub/dir/big3.bin "dir with space/grüße 2.bin"; do
		{ echo "$MARK $f"; head -c 300000 /dev/urandom; } >"$f"
	done
	{ echo "$MARK psd"; head -c 200000 /dev/urandom; } >tool.psd
	chmod +x tool.psd
	echo "small" >README.md
	git add -A
	git commit -q -m "large files"
	# a text file holding the pointer of big1.bin's content (the run
	# makes it an LFS file: every pointer in the history is one)
	mkdir notes
	git lfs pointer --file=big1.bin 2>/dev/null >notes/pointer.txt
	git add notes
	git commit -q -m "notes"
)
printf '*.bin lfs\n*.psd lfs\n' >"$SCRATCH/rules"
LFSFILES=(big1.bin sub/dir/big3.bin "dir with space/grüße 2.bin" tool.psd notes/pointer.txt)

# check_tree DIR [SKIPPED...]: DIR's work tree after a run of the rules
# (SKIPPED: LFS paths expected as pointers: git-lfs smudged them not).
# notes/pointer.txt is an LFS file too (a pointer found in the history),
# whose object is big1.bin's content.
check_tree() {
	local dir="$1" f orig
	shift
	for f in "${LFSFILES[@]}"; do
		orig="$SRC/$f"
		[ "$f" != notes/pointer.txt ] || orig="$SRC/big1.bin"
		case " $* " in
		*" $f "*)
			git -C "$dir" show "HEAD:$f" | cmp -s - "$dir/$f" ||
				die "$dir/$f: not the pointer git-lfs leaves" ;;
		*)
			cmp -s "$orig" "$dir/$f" || die "$dir/$f: not the original content" ;;
		esac
	done
	[ -x "$dir/tool.psd" ] || die "tool.psd lost its executable bit"
	[ ! -e "$dir/old.bin" ] && [ -z "$(git -C "$dir" ls-files old.bin)" ] ||
		cmp -s "$SRC/old.bin" "$dir/old.bin" || die "old.bin (no object) is not its pointer"
	[ -z "$(git -C "$dir" status --porcelain)" ] ||
		die "$dir: git status is not clean: $(git -C "$dir" status --porcelain | head -3)"
	# git lfs fsck: no object but old.bin's is missing or bad
	(cd "$dir" && git lfs fsck 2>&1) | grep -v 'old\.bin\|repair: moving\|fsck OK' | grep . &&
		die "$dir: git lfs fsck complains" || true
}

# check_stat DIR PATH...: the index's stat data of each PATH is lstat's
check_stat() {
	local dir="$1"
	shift
	python3 - "$dir" "$@" <<'PY' || die "$1: the index does not hold the files' stat data"
import os, subprocess, sys
d = sys.argv[1]
out = subprocess.run(["git", "-C", d, "ls-files", "--debug", "-z", "--"] + sys.argv[2:],
                     capture_output=True, check=True).stdout.decode()
entries, cur = {}, None
for part in out.split("\0"):
    lines = [l.strip() for l in part.split("\n") if l.strip()]
    for l in lines:
        if l.startswith(("ctime:", "mtime:", "dev:", "uid:", "size:")):
            for k, v in zip(l.split()[0::2], l.split()[1::2]):
                entries[cur][k.rstrip(":")] = v
        else:
            cur = l
            entries[cur] = {}
bad = 0
for p in sys.argv[2:]:
    st = os.lstat(os.path.join(d, p))
    e = entries.get(p)
    want = {"ctime": "%d:%d" % (st.st_ctime_ns // 10**9, st.st_ctime_ns % 10**9),
            "mtime": "%d:%d" % (st.st_mtime_ns // 10**9, st.st_mtime_ns % 10**9),
            "dev": str(st.st_dev & 0xffffffff), "ino": str(st.st_ino & 0xffffffff),
            "uid": str(st.st_uid), "gid": str(st.st_gid), "size": str(st.st_size)}
    if e is None or any(e.get(k) != v for k, v in want.items()):
        print("%s: index %s, lstat %s" % (p, e, want))
        bad += 1
sys.exit(1 if bad else 0)
PY
}

# check_times DIR PATH...: each PATH has its LFS object's mtime (kept as
# `cp -p` keeps it: older than the index, git need not read it again)
check_times() {
	local dir="$1" f oid common
	shift
	common="$(git -C "$dir" rev-parse --path-format=absolute --git-common-dir)"
	for f in "$@"; do
		oid="$(git -C "$dir" show "HEAD:$f" | sed -n 's/^oid sha256://p')"
		[ -n "$oid" ] || die "$f: no pointer at HEAD"
		[ "$(stat -c %y "$dir/$f")" = "$(stat -c %y "$common/lfs/objects/${oid:0:2}/${oid:2:2}/$oid")" ] ||
			die "$f: not its object's mtime"
	done
}

# no_content_piped TRACE: no packet git read from a filter held the content
no_content_piped() {
	! grep -aq "git< $MARK" "$1" || die "LFS content went through git-lfs's smudge pipe"
	grep -aq 'command=smudge' "$1" || die "the packet trace saw no smudge at all"
}

# a clone of SRC (old.bin's object is nowhere: its pointer is checked out)
clone_src() {
	GIT_LFS_SKIP_SMUDGE=1 clone_refs "$SRC" "$1"
}
# the same, with old.bin removed at HEAD: every pointer there has its
# object, so git's second reset (which would mend what the copies got
# wrong, in the second it ran) does not run
clone_src_all() {
	clone_src "$1"
	git -C "$1" rm -q old.bin
	git -C "$1" commit -q -m "old.bin goes"
}


# run_checked NAME WORKTREE ARGS...: `migrate run ARGS` with the rules,
# then WORKTREE is what it must be: check_tree, check_stat and
# check_times of every LFS file, no_content_piped
run_checked() {
	local name="$1" wt="$2"
	shift 2
	GIT_TRACE_PACKET="$SCRATCH/$name.packets" run_migrate run --rules "$SCRATCH/rules" \
		"$@" -q || die "migrate run $* failed"
	check_tree "$wt"
	check_stat "$wt" "${LFSFILES[@]}"
	check_times "$wt" "${LFSFILES[@]}"
	no_content_piped "$SCRATCH/$name.packets"
}

test_case "run --to: the LFS files copied, the index holds their stat" <<'EOF'
run_checked to "$SCRATCH/to" --repo "$SRC" --to "$SCRATCH/to"
EOF

test_case "run --in-place: the same" <<'EOF'
clone_src "$SCRATCH/ip"
run_checked ip "$SCRATCH/ip" --repo "$SCRATCH/ip" --in-place
EOF

test_case "a linked work tree: its own index, the common store" <<'EOF'
clone_src "$SCRATCH/lk"
git -C "$SCRATCH/lk" branch -q side
GIT_LFS_SKIP_SMUDGE=1 git -C "$SCRATCH/lk" worktree add -q "$SCRATCH/lk-side" side
run_checked lk "$SCRATCH/lk-side" --repo "$SCRATCH/lk" --in-place
EOF

test_case "lfs.fetchexclude: the excluded file stays a pointer" <<'EOF'
clone_src_all "$SCRATCH/fx"
git -C "$SCRATCH/fx" config lfs.fetchexclude 'sub/**'
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/fx" --in-place -q ||
	die "run failed"
# git's own reset, which this run is left to, keeps notes/pointer.txt
# (its blob did not change) as the clone checked it out: its pointer
check_tree "$SCRATCH/fx" sub/dir/big3.bin notes/pointer.txt
EOF

test_case "info/attributes unsets the filter: that pointer stays text" <<'EOF'
clone_src_all "$SCRATCH/ia"
printf 'notes/pointer.txt -filter\n' >"$SCRATCH/ia/.git/info/attributes"
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/ia" --in-place -q ||
	die "run failed"
check_tree "$SCRATCH/ia" notes/pointer.txt
EOF

test_case "GIT_LFS_SKIP_SMUDGE=1: every LFS file stays a pointer" <<'EOF'
clone_src_all "$SCRATCH/skipsrc"
GIT_LFS_SKIP_SMUDGE=1 run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/skipsrc" \
	--to "$SCRATCH/skip" -q || die "run failed"
check_tree "$SCRATCH/skip" "${LFSFILES[@]}"
EOF

test_case "index version 4, split: read and written as git does" <<'EOF'
clone_src "$SCRATCH/v4"
git -C "$SCRATCH/v4" config index.version 4
git -C "$SCRATCH/v4" config core.splitIndex true
git -C "$SCRATCH/v4" update-index --index-version 4 --split-index
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/v4" --in-place -q ||
	die "run failed"
check_tree "$SCRATCH/v4"
check_stat "$SCRATCH/v4" "${LFSFILES[@]}"
git -C "$SCRATCH/v4" ls-files --debug >/dev/null || die "git cannot read the index"
EOF

test_case "sparse check-out: a file outside it is not written" <<'EOF'
clone_src "$SCRATCH/sp"
git -C "$SCRATCH/sp" sparse-checkout set --no-cone '/*' '!/sub/' 2>/dev/null
[ ! -e "$SCRATCH/sp/sub/dir/big3.bin" ] || die "setup: sparse check-out wrote sub/"
run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/sp" --in-place -q ||
	die "run failed"
[ ! -e "$SCRATCH/sp/sub/dir/big3.bin" ] || die "the run wrote a file outside the sparse check-out"
cmp -s "$SRC/big1.bin" "$SCRATCH/sp/big1.bin" || die "big1.bin: not the original content"
[ -z "$(git -C "$SCRATCH/sp" status --porcelain)" ] || die "git status is not clean"
EOF

test_case "the check-out's files written by git's parallel workers" <<'EOF'
# 150 files (git's threshold for parallel check-out is 100)
many="$SCRATCH/many"
git init -q "$many"
for i in $(seq 150); do echo "$i" >"$many/f$i.txt"; done
git -C "$many" add -A
git -C "$many" commit -q -m many
GIT_TRACE="$SCRATCH/many.trace" run_migrate run --rules "$SCRATCH/rules" \
	--repo "$many" --to "$SCRATCH/many-to" -q || die "run --to failed"
grep -q 'checkout--worker' "$SCRATCH/many.trace" ||
	die "the check-out ran no parallel worker"
[ -z "$(git -C "$SCRATCH/many-to" status --porcelain)" ] || die "git status is not clean"
# the user's own checkout.workers wins
git config --global checkout.workers 1
GIT_TRACE="$SCRATCH/one.trace" run_migrate run --rules "$SCRATCH/rules" \
	--repo "$many" --to "$SCRATCH/many-one" -q || die "run --to failed"
! grep -q 'checkout--worker' "$SCRATCH/one.trace" ||
	die "checkout.workers=1 was not kept"
git config --global --unset checkout.workers
EOF

test_done
