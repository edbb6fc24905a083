#!/usr/bin/env bash
# tag_refs.sh - git fast-export names the commits it first reaches from an
# annotated tag by the tag's ref (`commit refs/tags/v1`), so git
# fast-import holds a branch of that name beside the tag and writes the
# ref twice at its end: the branch, then the tag over it. In `migrate
# run` such a branch is reset to no commit before `done`, so fast-import
# writes each tag's ref once (issue 29: fast-import's end was mostly
# these writes on git's own history). strace judges the writes; the
# plain pipeline (fast-import fed the plain filter's stream) judges the
# refs:
#  - v1, on a side history no branch reaches: its ref is written once in
#    the side repository (twice before);
#  - v2, whose side history starts with a commit the rules leave empty:
#    the run resets the branch to the null id first, which fast-import
#    remembers (a later reset would take the tag out of its list), so
#    that branch is left as it is and the tag must still be there;
#  - the run's refs and commit map equal the plain pipeline's.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

SRC="$SCRATCH/src"
(
	set -e
	git init -q -b main "$SRC"
	cd "$SRC"
	echo a >keep.txt && echo x >drop.bin
	git add -A && git commit -q -m one
	# v1: a side history no branch reaches, tagged
	git checkout -q -b side1
	echo b >keep.txt && git commit -q -am side1-1
	echo c >keep.txt && git commit -q -am side1-2
	git tag -a -m "tag one" v1
	# v2: an orphan history whose first commit only touches drop.bin
	git checkout -q --orphan side2
	git rm -q -rf --cached . && rm -f keep.txt drop.bin
	echo y >drop.bin && git add drop.bin && git commit -q -m "side2 root, dropped"
	echo d >keep.txt && git add keep.txt && git commit -q -m side2-2
	git tag -a -m "tag two" v2
	git checkout -q main
	git branch -q -D side1 side2
	echo e >keep.txt && git commit -q -am two
) || die "could not build the source repository"
printf '/drop.bin drop\n' >"$SCRATCH/rules"

test_case "the plain pipeline; fast-export names the side histories by their tags" <<'EOF'
plain_pipeline "$SRC" "$SCRATCH/rules" plain
grep -qx 'commit refs/tags/v1' "$SCRATCH/plain.fe" || die "no commit refs/tags/v1 in the export"
grep -qx 'commit refs/tags/v2' "$SCRATCH/plain.fe" || die "no commit refs/tags/v2 in the export"
grep -q ' refs/tags/v2$' "$SCRATCH/plain.refs" || die "plain pipeline: no v2"
EOF

test_case "run --in-place: each tag's ref written once by fast-import, the same refs" <<'EOF'
git clone -q "$SRC" "$SCRATCH/run"
git -C "$SCRATCH/run" fetch -q origin 'refs/tags/*:refs/tags/*'
git -C "$SCRATCH/run" remote remove origin
# LeakSanitizer cannot work under ptrace: leaks are looked for elsewhere
(cd "$SCRATCH/run" && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -e trace=rename -e status=successful -o "$SCRATCH/trace" "$MIGRATE" run --rules "$SCRATCH/rules" --in-place -q </dev/null) ||
	die "migrate run failed"
n1=$(grep -c 'import.git/\./refs/tags/v1\.lock' "$SCRATCH/trace")
n2=$(grep -c 'import.git/\./refs/tags/v2\.lock' "$SCRATCH/trace")
info "fast-import wrote refs/tags/v1 $n1 time(s), refs/tags/v2 $n2 time(s)"
[ "$n1" = 1 ] || die "refs/tags/v1 written $n1 times by fast-import, not once"
[ "$n2" -ge 1 ] || die "refs/tags/v2 never written by fast-import"
refs_of "$SCRATCH/run" | grep -v ' refs/migrate/' >"$SCRATCH/run.refs"
diff -u "$SCRATCH/plain.refs" "$SCRATCH/run.refs" || die "the run's refs differ from the plain pipeline's"
sort "$SCRATCH/plain.map" >"$SCRATCH/plain.map.s"
sort "$SCRATCH/run/.git/migrate/commit-map" >"$SCRATCH/run.map.s"
diff -u "$SCRATCH/plain.map.s" "$SCRATCH/run.map.s" || die "the commit maps differ"
EOF

test_done
