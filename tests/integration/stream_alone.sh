#!/usr/bin/env bash
# stream_alone.sh - a full-data fast-export stream stands alone (issue 28,
# item 4): piped into the filter with no repository behind it, every
# action (split, replace-text, lfs, drop, annex) answers a later reference
# to a blob it consumed (the same content named again at a path the rules
# keep) from what it set aside, not from a repository. The oracle is the
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

test_done
