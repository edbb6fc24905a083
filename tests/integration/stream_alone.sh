#!/usr/bin/env bash
# stream_alone.sh - a full-data fast-export stream stands alone (issue 28,
# item 4): piped into the filter with no repository behind it, every
# action (split, replace-text, lfs, drop, annex) answers a later reference
# to a blob it consumed (the same content named again at a path the rules
# keep) from what it set aside, not from a repository; so does a blob
# written as it was and named again where a rule converts it, or defined
# again, also inside a repository that does not have it. The oracle is the
# same stream filtered inside the source repository, where git can answer:
# the output streams are byte-identical, and git fast-import takes them.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

R="$SCRATCH/repo"
git init -q "$R"
(
	cd "$R"
	python3 -c "
import sys
for y in range(2000, 2004):
    for k in range(40):
        sys.stdout.write('%d-%05d a record with SECRET in it\n' % (y, k))" >data.txt
	head -c 6000 /dev/urandom >a.bin
	git add -A && git commit -qm "first"
	echo "2001-99999 one more record" >>data.txt
	git commit -qam "second"
	git checkout -q -b side HEAD~1
	# the consumed contents, named again at paths no rule takes
	cp data.txt copy.txt && cp a.bin a.dat
	git add -A && git commit -qm "copies"
	git checkout -q main
	git merge -q --no-edit side
)
export_stream "$R" >"$SCRATCH/full.fe"
printf 'SECRET==>REDACTED\n' >"$SCRATCH/expr"
mkdir -p "$SCRATCH/alone"
UUID=0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9

# filter RULE WHERE OUT: the stream through the rule, in directory WHERE
filter() {
	printf '%s\n' "$1" >"$SCRATCH/rule"
	rm -rf "$SCRATCH/store" "$SCRATCH/annex"
	(cd "$2" && GIT_CEILING_DIRECTORIES="$SCRATCH" "$MIGRATE" --rules "$SCRATCH/rule" \
		--store "$SCRATCH/store" --annex-dir "$SCRATCH/annex" --annex-uuid "$UUID" -q \
		<"$SCRATCH/full.fe" >"$3" 2>"$3.err") || { cat "$3.err"; return 1; }
	if [ -s "$3.err" ]; then
		cat "$3.err"
		return 1
	fi
}

# inside_and_alone NAME: NAME.fe with NAME.rules through the filter
# inside the unrelated repository $SCRATCH/other and with no repository
# ($SCRATCH/alone), into NAME.other and NAME.alone: the same stream both
# times, which git fast-import takes into a new $SCRATCH/imp
inside_and_alone() {
	local name="$1" where
	for where in other alone; do
		rm -rf "$SCRATCH/$name.store"
		(cd "$SCRATCH/$where" && GIT_CEILING_DIRECTORIES="$SCRATCH" "$MIGRATE" \
			--rules "$SCRATCH/$name.rules" --store "$SCRATCH/$name.store" \
			--commit-map "$SCRATCH/$name.$where.map" -q <"$SCRATCH/$name.fe" \
			>"$SCRATCH/$name.$where" 2>"$SCRATCH/$name.$where.err") ||
			die "in $where: $(cat "$SCRATCH/$name.$where.err")"
	done
	cmp -s "$SCRATCH/$name.other" "$SCRATCH/$name.alone" ||
		die "inside another repository, the stream differs from the one with no repository"
	rm -rf "$SCRATCH/imp" && git init -q "$SCRATCH/imp"
	git -C "$SCRATCH/imp" fast-import --quiet <"$SCRATCH/$name.alone" || die "fast-import refused it"
}

for rule in "data.txt split record='^(\\d{4})-' into='d/{1}.txt'" \
	"data.txt replace-text=$SCRATCH/expr" "*.bin lfs" "*.bin drop" "*.bin annex"; do
	test_case "${rule%% *} ${rule#* }: no repository needed for a blob named again" "
		filter \"\$rule\" \"\$R\" \"\$SCRATCH/in-repo.fe\" || die 'the run inside the repository failed'
		filter \"\$rule\" \"\$SCRATCH/alone\" \"\$SCRATCH/alone.fe\" || die 'the run with no repository failed'
		cmp -s \"\$SCRATCH/in-repo.fe\" \"\$SCRATCH/alone.fe\" ||
			die 'the stream differs from the one made inside the repository'
		rm -rf \"\$SCRATCH/imp\" && git init -q \"\$SCRATCH/imp\"
		git -C \"\$SCRATCH/imp\" fast-import --quiet <\"\$SCRATCH/alone.fe\" || die 'fast-import refused it'
		for f in copy.txt a.dat; do
			cmp -s <(git -C \"\$SCRATCH/imp\" show main:\$f) <(git -C \"\$R\" show side:\$f) ||
				die \"\$f is not the original content\"
		done
		info \"\${rule%% *}: the same stream as inside the repository; copy.txt and a.dat as they were\"
	"
done

test_case "a blob written as it was, named again at a path a rule converts: set aside, with or without a repository" <<'EOF'
# fast-export writes each blob once and names it by its mark at every
# later commit. README's blob goes out as it is in the first commit; the
# second names it at b.dat, which the lfs rule converts: its content is
# needed again, from what was set aside (fast-import's pack has no name
# yet, and the repository around the filter, here, has no such blob).
cat >"$SCRATCH/kept.fe" <<'FE'
blob
mark :1
original-oid 8178c76d627cade75005b40711b92f4177bc6cfc
data 7
readme

commit refs/heads/main
mark :2
committer C <c@x> 1700000000 +0000
data 6
first
M 100644 :1 a.txt

commit refs/heads/main
mark :3
committer C <c@x> 1700000001 +0000
data 7
second
M 100644 :1 b.dat

FE
git init -q "$SCRATCH/other"
printf '*.dat lfs\n' >"$SCRATCH/kept.rules"
inside_and_alone kept
git -C "$SCRATCH/imp" show main:b.dat | grep -q '^version https://git-lfs' || die "b.dat is not an LFS pointer"
[ "$(git -C "$SCRATCH/imp" show main:a.txt)" = readme ] || die "a.txt is not its content"
EOF

test_case "a stream another repository's: a blob let go and defined again is set aside, not looked for there" <<'EOF'
# README's blob and secret.env's are in the stream only (their
# original-oids are ids the repository does not have). secret.env's is
# defined, unused by the first commit, defined again (its id computed
# only when needed: it has an original-oid), written to fast-import and
# let go at the reset (with a repository behind the filter, it was taken
# for one it could read back there), then used; the lfs rule reads it
# (is it a pointer?). Inside an unrelated repository the stream must give what it
# gives with no repository at all.
cat >"$SCRATCH/again.fe" <<'FE'
blob
mark :1
original-oid 8178c76d627cade75005b40711b92f4177bc6cfc
data 7
readme

blob
mark :2
original-oid 65ec2679eeaac690801f2a00b7de9baebbef7a2d
data 9
SECRET=1

commit refs/heads/main
mark :3
committer C <c@x> 1700000000 +0000
data 6
first
M 100644 :1 README

blob
mark :4
original-oid 65ec2679eeaac690801f2a00b7de9baebbef7a2d
data 9
SECRET=1

reset refs/heads/main
from :3

commit refs/heads/main
mark :5
committer C <c@x> 1700000001 +0000
data 7
second
M 100644 :4 secret.env

FE
rm -rf "$SCRATCH/other" && git init -q "$SCRATCH/other"
printf '*.dat lfs\n' >"$SCRATCH/again.rules"
inside_and_alone again
[ "$(git -C "$SCRATCH/imp" show main:secret.env)" = SECRET=1 ] || die "secret.env is not its content"
EOF

test_done
