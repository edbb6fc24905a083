#!/usr/bin/env bash
# marks_reused.sh - blobs and marks as frontends other than git
# fast-export write them (no original-oid, no repository behind the
# stream), through migrate with rules. git fast-import judges: the output
# imports to the same commits as the input.
#
#  * the same content under a second mark after the first copy went out
#    (migrate used to look for it in a repository and exit 3);
#  * a mark defined twice before a commit uses it (fast-import takes the
#    later blob; migrate used to write the earlier one under the mark,
#    exit 0: a silently wrong file).
set -euo pipefail
. "$(dirname "$0")/lib/lib.sh"

cd "$SCRATCH"
printf '*.tmp drop\n*.bin size>1MB drop\n' >rules

again() {
	cat <<'EOF'
blob
mark :1
data 6
again

commit refs/heads/main
mark :2
committer A <a@example.org> 1700000000 +0000
data 2
X
M 100644 :1 a.txt

blob
mark :3
data 6
again

commit refs/heads/main
mark :4
committer A <a@example.org> 1700000001 +0000
data 2
Y
from :2
M 100644 :3 b.txt

EOF
}

twice() {
	cat <<'EOF'
blob
mark :1
data 6
first

blob
mark :1
data 7
second

commit refs/heads/main
mark :2
committer A <a@example.org> 1700000000 +0000
data 2
X
M 100644 inline x.txt
data 2
x

commit refs/heads/main
mark :3
committer A <a@example.org> 1700000001 +0000
data 2
Y
from :2
M 100644 :1 f.txt

EOF
}

mkdir nowhere
# same_commits CASE: the stream CASE (a function above) through migrate,
# from no repository; input and output import to the same commits
same_commits() {
	local case="$1" rc=0 s want got
	"$case" >"$case.fi"
	(cd nowhere && GIT_CEILING_DIRECTORIES="$SCRATCH" \
		"$MIGRATE" --rules ../rules <"../$case.fi" >"../$case.out" 2>"../$case.err") || rc=$?
	[ "$rc" = 0 ] || die "$case: migrate exited $rc: $(cat "$case.err")"
	for s in fi out; do
		git init -q --bare "$case-$s.git"
		git -C "$case-$s.git" fast-import --quiet <"$case.$s" ||
			die "$case: fast-import refused the $s stream"
	done
	want="$(git -C "$case-fi.git" rev-parse main)"
	got="$(git -C "$case-out.git" rev-parse main)"
	[ "$want" = "$got" ] || die "$case: input imports to $want, output to $got:
$(git -C "$case-out.git" ls-tree -r main)"
}

test_case "a content again under a new mark, after the first copy went out: the commits fast-import makes of the input" <<'EOF'
same_commits again
info "a content again under a new mark: the commits fast-import makes of the input"
EOF

test_case "a mark defined twice before a commit uses it: the commits fast-import makes of the input, the later blob" <<'EOF'
same_commits twice
[ "$(git -C twice-out.git cat-file -p main:f.txt)" = second ] ||
	die "twice: f.txt is not the later blob"
info "a mark defined twice: the commits fast-import makes of the input"
EOF

test_done
