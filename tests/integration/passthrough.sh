#!/usr/bin/env bash
# passthrough.sh - with no rules, migrate changes nothing and knows every id.
#
# 1. The tricky repository (make_tricky_repo.sh) exported with the standard
#    flags, through migrate, into a fresh repository: every ref equals the
#    original's (except those a plain fast-export | fast-import changes too,
#    which must equal that plain pipeline's), and check_ids holds.
# 2. Hand-written streams with what fast-export never emits (delimited data,
#    inline data, N, C "" dst, directory R/C, deleteall, merge without from,
#    implicit parents, no author, empty-name idents, reset, alias, progress,
#    checkpoint, comments, tags without tagger, tag of a tag by mark, and the
#    query commands): migrate's marks, commit map and ref map must equal
#    what fast-import writes for migrate's output.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

ORIG="$SCRATCH/orig"
test_case "1. the tricky repository passes through: refs as git's own pipeline, every id known" <<'CASE'
"$HERE/make_tricky_repo.sh" "$ORIG" >/dev/null
export_stream "$ORIG" >"$SCRATCH/in.fe"

# The plain pipeline, as the reference for what fast-import itself changes.
import_stream "$SCRATCH/plain" "$SCRATCH/plain.marks" <"$SCRATCH/in.fe"

run_migrate --commit-map "$SCRATCH/M" --ref-map "$SCRATCH/R" \
	--export-marks "$SCRATCH/MM" --source-repo "$ORIG" \
	<"$SCRATCH/in.fe" >"$SCRATCH/out.fi" ||
	die "migrate failed on the tricky repository's stream"
head -n 1 "$SCRATCH/out.fi" | grep -qx 'feature done' ||
	die "migrate's output does not start with 'feature done'"
[ "$(tail -n 1 "$SCRATCH/out.fi")" = "done" ] ||
	die "migrate's output does not end with 'done'"
import_stream "$SCRATCH/new" "$SCRATCH/X" <"$SCRATCH/out.fi" ||
	die "git fast-import rejected migrate's output"

# (a) exact pass-through. A tag of a tag is the one construct of this
# repository that fast-export | fast-import itself cannot keep (docs/FORMATS.md
# 2.5: the inner tag is re-emitted under the outer name); the list below
# must hold exactly the refs the plain pipeline changes.
KNOWN_CHANGED_BY_GIT="refs/tags/outer"
refs_of "$ORIG" >"$SCRATCH/refs.orig"
refs_of "$SCRATCH/plain" >"$SCRATCH/refs.plain"
refs_of "$SCRATCH/new" >"$SCRATCH/refs.new"
[ -s "$SCRATCH/refs.orig" ] || die "the tricky repository has no refs"
if ! diff -u "$SCRATCH/refs.plain" "$SCRATCH/refs.new"; then
	die "refs differ between 'fast-export | fast-import' and 'fast-export | migrate | fast-import'"
fi
changed="$({ diff "$SCRATCH/refs.orig" "$SCRATCH/refs.plain" || true; } |
	sed -n 's/^> [0-9a-f]* //p' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
[ "$changed" = "$KNOWN_CHANGED_BY_GIT" ] ||
	die "refs changed by the plain pipeline: '$changed', expected '$KNOWN_CHANGED_BY_GIT'"
info "tricky repo: $(wc -l <"$SCRATCH/refs.new") refs equal to the original's," \
	"except $changed (changed by fast-export | fast-import alone; equal to that)"

# (b) computed ids
check_ids "$SCRATCH/in.fe" "$SCRATCH/MM" "$SCRATCH/X" "$SCRATCH/M" "$SCRATCH/R" \
	"$SCRATCH/new" --orig-repo "$ORIG" ||
	die "ids computed by migrate differ from fast-import's (tricky repository)"
git -C "$SCRATCH/new" fsck --no-progress >/dev/null ||
	die "git fsck fails on the imported repository"
CASE

# --- 2. hand-written streams -------------------------------------------
fake_oid() { printf 'fake object %s' "$1" | sha1sum | cut -c1-40; }
GITLINK="$(fake_oid gitlink)"

# Constructs git fast-export never writes, in the order fast-import wants.
make_hand_stream() {
	cat <<EOF
feature done
option git quiet
# a comment after the feature/option lines
blob
mark :1
original-oid $(fake_oid blob1)
data <<EOF_BLOB
delimited blob
with two lines
EOF_BLOB

blob
mark :2
data 6
hello

progress two blobs
commit refs/heads/hand
mark :3
original-oid $(fake_oid c3)
author A U Thor <a@example.org> 1000000000 +0100
committer C O Mitter <c@example.org> 1000000001 -0130
data <<MSG
a delimited message
MSG
M 644 :1 a.txt
M 100755 :2 bin/run
# a comment between file changes
M 644 inline "quoted\\tname \\"q\\" \\303\\251"
data 7
inline

M 120000 inline link
data 5
a.txtM 160000 $GITLINK sort/bar
M 644 :2 sort/bar-/x
M 644 :2 sort/bar.c
M 644 :2 sort/foo/x
M 644 :2 sort/foo.c
M 644 :2 sort/foo0
M 644 :2 dir/sub/f
M 644 :2 dir/sub2/g
M 644 :1 sp ace/unquoted path with spaces

commit refs/heads/hand
mark :4
original-oid $(fake_oid c4)
committer <empty-name@example.org> 1000000100 +0000
data 0
C dir dir-copy
R dir/sub2 moved
C "" snapshot
C a.txt "copied file"
D sort/bar.c
D no/such/path

checkpoint

commit refs/notes/hand
mark :5
committer N O Ter <n@example.org> 1000000200 +0000
data 6
notes
N inline :3
data 11
note for 3
N :2 :4

reset refs/heads/side
from :3

EOF
	# no author, a Latin-1 message with an encoding header, branch side
	# continued from the reset without 'from'
	printf 'commit refs/heads/side\nmark :6\noriginal-oid %s\n' "$(fake_oid c6)"
	printf 'committer Some One <s@example.org> 1000000300 +1400\n'
	printf 'encoding ISO-8859-1\ndata 11\ncaf\351 cr\350me\n\n'
	printf 'M 644 :2 side.txt\n\n'
	cat <<EOF
commit refs/heads/hand
mark :7
original-oid $(fake_oid c7)
author <> 1000000400 +0000
committer C <c@example.org> 1000000400 -1400
data 6
merge
merge :6
D sp ace

alias
mark :8
to :7

commit refs/heads/wiped
mark :9
committer C <c@example.org> 1000000500 +0000
data 9
deleteall
from :8
deleteall
M 644 :1 only

reset refs/heads/gone
from :9

reset refs/heads/gone

EOF
	# a root commit on a reset branch, with a message without final LF
	printf 'commit refs/heads/gone\nmark :10\noriginal-oid %s\n' "$(fake_oid c10)"
	printf 'committer C <c@example.org> 1000000600 +0000\ndata 4\nrootM 644 :2 x\n\n'
	cat <<EOF
tag t-notagger
mark :11
from :7
original-oid $(fake_oid t11)
data 10
no tagger

tag t-of-tag
mark :12
from :11
tagger T <t@example.org> 1000000700 +0000
data 11
tag of tag

tag t-blob
from :1
tagger <t@example.org> 1000000800 +0000
data 5
blob

reset refs/tags/light
from :4

commit refs/heads/hand
mark :13
committer C <c@example.org> 1000000900 +0000
data <<E
E
from refs/heads/side
merge :9
merge :10
M 040000 4b825dc642cb6eb9a060e54bf8d69288fbee4904 snapshot
M 644 :2 side.txt

reset refs/heads/deleted
from :13

reset refs/heads/deleted
from 0000000000000000000000000000000000000000

done
EOF
}

# The query commands, answered by fast-import on --cat-blob-fd.
make_query_stream() {
	cat <<EOF
blob
mark :1
data 4
abc

commit refs/heads/q
mark :2
original-oid $(fake_oid q2)
committer Q <q@example.org> 1000000000 +0000
data 2
q
M 644 :1 f
ls "f"
cat-blob :1
M 644 inline g
data 2
g

get-mark :2
cat-blob :1
ls :2 f
ls :2 nothere
commit refs/heads/q
mark :3
original-oid $(fake_oid q3)
committer Q <q@example.org> 1000000001 +0000
data 2
r
ls :2 g
M 644 :1 h

EOF
}

hand_case() {
	local name="$1" gen="$2" d="$SCRATCH/$1"
	mkdir -p "$d"
	"$gen" >"$d/in.fi"
	# The stream itself must be valid: fast-import must take it as is.
	import_stream "$d/plain" "$d/plain.marks" --cat-blob-fd=3 \
		<"$d/in.fi" 3>/dev/null >/dev/null ||
		die "$name: git fast-import rejects the hand-written stream itself"
	run_migrate --commit-map "$d/M" --ref-map "$d/R" --export-marks "$d/MM" \
		--source-repo "$d/plain" <"$d/in.fi" >"$d/out.fi" ||
		die "$name: migrate failed on the hand-written stream"
	import_stream "$d/new" "$d/X" --cat-blob-fd=3 <"$d/out.fi" 3>/dev/null >/dev/null ||
		die "$name: git fast-import rejected migrate's output"
	refs_of "$d/plain" >"$d/refs.plain"
	refs_of "$d/new" >"$d/refs.new"
	diff -u "$d/refs.plain" "$d/refs.new" ||
		die "$name: refs differ between the stream imported as is and through migrate"
	LC_ALL=C sort "$d/plain.marks" >"$d/plain.sorted"
	LC_ALL=C sort "$d/X" >"$d/X.sorted"
	diff -u "$d/plain.sorted" "$d/X.sorted" ||
		die "$name: fast-import's marks differ with and without migrate"
	check_ids "$d/in.fi" "$d/MM" "$d/X" "$d/M" "$d/R" "$d/new" ||
		die "$name: ids computed by migrate differ from fast-import's"
	info "$name: $(wc -l <"$d/refs.new") refs and $(wc -l <"$d/X") marks equal"
}

test_case "2. a hand-written stream: delimited and counted data, N, C, R, D, deleteall, alias, tags" \
	'hand_case hand make_hand_stream'
test_case "2. a hand-written stream of queries (cat-blob, ls, get-mark)" 'hand_case queries make_query_stream'

test_done
