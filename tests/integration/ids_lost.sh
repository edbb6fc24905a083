#!/usr/bin/env bash
# ids_lost.sh - with rules, when ids cannot be followed any more (a tree
# the stream names is in no repository migrate can read, and no map was
# asked for), the stream passes through unchanged: every line of it, the
# one that found out included. git fast-import judges: the output imports
# to the same trees as the input.
#
# The case: a stream of the repository A (trees named by id), filtered
# from a directory that is no repository. Commit 2 changes a directory
# named by id in commit 1 (M of a directory, and D inside it), which needs
# that tree's entries.
set -euo pipefail
. "$(dirname "$0")/lib/lib.sh"

cd "$SCRATCH"
git init -q a
mkdir -p a/dir/sub a/other
echo one >a/dir/sub/f
echo two >a/dir/y
echo three >a/other/z
git -C a add -A
git -C a commit -qm base
dir_tree="$(git -C a rev-parse HEAD:dir)"
other_tree="$(git -C a rev-parse HEAD:other)"

# two commits that name trees by id (as `fast-export --no-data` does)
stream() {
	cat <<EOF
commit refs/heads/main
mark :1
committer T <t@example.org> 1700000000 +0000
data 2
c1
M 040000 $dir_tree dir
M 100644 inline notes.txt
data 4
txt

commit refs/heads/main
mark :2
committer T <t@example.org> 1700000100 +0000
data 2
c2
from :1
M 040000 $other_tree dir/sub2
D dir/y

EOF
}

printf '*.tmp drop\n' >rules
mkdir nowhere
stream >in.fi

test_case "filtered from a directory that is no repository, migrate warns that ids cannot be computed" <<'EOF'
(cd nowhere && GIT_CEILING_DIRECTORIES="$SCRATCH" GIT_DIR=/nonexistent \
	"$MIGRATE" --rules ../rules <../in.fi >../out.fi 2>../err) ||
	die "migrate failed: $(cat err)"
grep -q 'cannot be computed' err || die "no warning that ids are lost: $(cat err)"
EOF

# the cases below judge out.fi, the output of the case above
test_case "the lines after the loss pass through: the M of dir/sub2 and the D of dir/y" <<'EOF'
grep -qx "M 0*40000 $other_tree dir/sub2" out.fi || die "the M of dir/sub2 was lost:
$(cat out.fi)"
grep -qx "D dir/y" out.fi || die "the D of dir/y was lost:
$(cat out.fi)"
EOF

test_case "input and output import into a clone of A to the same trees (git fast-import)" <<'EOF'
# the judge: both streams import into a clone of A to the same trees
for s in in out; do
	git clone -q --bare a "$s.git"
	git -C "$s.git" fast-import --quiet --force <"$s.fi"
done
want="$(git -C in.git rev-parse 'main^{tree}')"
got="$(git -C out.git rev-parse 'main^{tree}')"
[ "$want" = "$got" ] || die "trees differ: input $want, output $got"
git -C out.git cat-file -e main:dir/sub2/z || die "dir/sub2 missing"
! git -C out.git cat-file -e main:dir/y 2>/dev/null || die "dir/y still there"
info "ids lost at commit 2: the rest of the stream passed through whole"
EOF

test_done
