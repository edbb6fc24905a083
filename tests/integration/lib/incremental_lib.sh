# shellcheck shell=bash
# incremental_lib.sh - the two-part migration that incremental.sh and
# incremental_git2005.sh run on their histories (sourced after lib.sh).
#
# A history is migrated in two parts into the same repository:
#  1. the history as it was earlier (a mirror with the main branch moved
#     back and the refs that did not exist yet removed), with --commit-map M;
#  2. the rest: fast-export --reference-excluded-parents of everything not
#     in part 1, so the stream names part 1's commits by their old ids;
#     migrate with the same M translates them (--target-repo NEW holds
#     their trees) and fast-import continues the refs of NEW.
# Then: the refs of NEW equal those of one full run into a fresh repository,
# M was extended (part 1's lines kept, one line added per new commit) and
# equals the full run's map, and check_ids holds for both runs.

# restrict_to REPO BRANCH CUT: move BRANCH to CUT and delete every ref that
# does not point (peeled) at an ancestor of CUT.
restrict_to() {
	local repo="$1" branch="$2" cut ref target
	cut="$(git -C "$repo" rev-parse "$3^{commit}")"
	git -C "$repo" update-ref "refs/heads/$branch" "$cut"
	git -C "$repo" for-each-ref --format='%(refname)' | while read -r ref; do
		target="$(git -C "$repo" rev-parse "$ref^{}")"
		if [ "$(git -C "$repo" cat-file -t "$target")" != commit ] ||
			! git -C "$repo" merge-base --is-ancestor "$target" "$cut"; then
			git -C "$repo" update-ref -d "$ref"
		fi
	done
}

# incremental_case NAME SRC BRANCH CUT [MUST_TRANSLATE]
incremental_case() {
	local name="$1" src="$2" branch="$3" cut="$4" must_translate="${5:-0}"
	local d="$SCRATCH/$name"
	mkdir -p "$d"

	# --- the reference: one full run ------------------------------------
	export_stream "$src" >"$d/full.fe"
	run_migrate --commit-map "$d/full.M" --source-repo "$src" \
		<"$d/full.fe" >"$d/full.fi" || die "$name: migrate failed on the full stream"
	import_stream "$d/full" "$d/full.X" <"$d/full.fi" ||
		die "$name: git fast-import rejected migrate's output (full run)"

	# --- part 1: the repository as it was --------------------------------
	local early="$d/early.git" new="$d/new"
	git clone -q --mirror "$src" "$early"
	restrict_to "$early" "$branch" "$cut"
	[ "$(git -C "$early" for-each-ref | wc -l)" -ge 2 ] || die "$name: part 1 has too few refs"
	export_stream "$early" >"$d/p1.fe"
	run_migrate --commit-map "$d/M" --ref-map "$d/R1" --export-marks "$d/MM1" \
		--source-repo "$early" <"$d/p1.fe" >"$d/p1.fi" || die "$name: migrate failed on part 1"
	import_stream "$new" "$d/X1" <"$d/p1.fi" ||
		die "$name: git fast-import rejected migrate's output (part 1)"
	check_ids "$d/p1.fe" "$d/MM1" "$d/X1" "$d/M" "$d/R1" "$new" --orig-repo "$early" ||
		die "$name: ids of part 1 differ from fast-import's"
	cp "$d/M" "$d/M.part1"

	# --- part 2: the rest, parents from part 1 named by their old ids ----
	local not_in_part2
	mapfile -t not_in_part2 < <(git -C "$early" for-each-ref --format='^%(objectname)')
	export_stream "$src" --reference-excluded-parents --all "${not_in_part2[@]}" \
		>"$d/p2.fe"
	grep -aqE '^(from|merge) [0-9a-f]{40}$' "$d/p2.fe" ||
		die "$name: part 2 names no parent by id: the test would prove nothing"
	run_migrate --commit-map "$d/M" --ref-map "$d/R2" --export-marks "$d/MM2" \
		--source-repo "$src" --target-repo "$new" <"$d/p2.fe" >"$d/p2.fi" ||
		die "$name: migrate failed on part 2"
	# No raw id in the output may be an old id that part 1 rewrote.
	local translated=0 kw id
	while read -r kw id; do
		if awk -v id="$id" 'NR > 1 && $1 == id && $2 != id { found = 1 } END { exit !found }' \
			"$d/M.part1"; then
			die "$name: part 2's output still says '$kw $id', an old id part 1 rewrote"
		fi
	done < <(grep -aE '^(from|merge) [0-9a-f]{40}$' "$d/p2.fi" || true)
	while read -r kw id; do
		if awk -v id="$id" 'NR > 1 && $1 == id && $2 != id { found = 1 } END { exit !found }' \
			"$d/M.part1"; then
			translated=$((translated + 1))
		fi
	done < <(grep -aE '^(from|merge) [0-9a-f]{40}$' "$d/p2.fe")
	if [ "$must_translate" = 1 ] && [ "$translated" -eq 0 ]; then
		die "$name: part 2 names no rewritten commit by id: the test would prove nothing"
	fi
	import_stream "$new" "$d/X2" <"$d/p2.fi" ||
		die "$name: git fast-import rejected migrate's output (part 2)"
	check_ids "$d/p2.fe" "$d/MM2" "$d/X2" "$d/M" "$d/R2" "$new" --orig-repo "$src" \
		--partial-refs --map-may-have-more ||
		die "$name: ids of part 2 differ from fast-import's"

	# --- the commit map was extended, not replaced -----------------------
	local part1_lines new_commits final_lines missing
	part1_lines="$(wc -l <"$d/M.part1")"
	new_commits="$(python3 "$HERE/stream_marks.py" marks "$d/p2.fe" | grep -c '^commit ' || true)"
	final_lines="$(wc -l <"$d/M")"
	[ "$final_lines" -eq $((part1_lines + new_commits)) ] ||
		die "$name: commit map has $final_lines lines; expected $part1_lines (part 1) + $new_commits (part 2)"
	missing="$(LC_ALL=C comm -23 <(LC_ALL=C sort "$d/M.part1") <(LC_ALL=C sort "$d/M") | wc -l)"
	[ "$missing" -eq 0 ] || die "$name: $missing lines of part 1's commit map are gone after part 2"
	tail -n +2 "$d/M" | LC_ALL=C sort >"$d/M.sorted"
	tail -n +2 "$d/full.M" | LC_ALL=C sort >"$d/full.M.sorted"
	diff -u "$d/full.M.sorted" "$d/M.sorted" >"$d/M.diff" || {
		head -n 20 "$d/M.diff"
		die "$name: the commit map of the two runs differs from the full run's"
	}

	# --- the final refs equal those of one full run ----------------------
	refs_of "$d/full" >"$d/refs.full"
	refs_of "$new" >"$d/refs.new"
	diff -u "$d/refs.full" "$d/refs.new" ||
		die "$name: refs after two incremental runs differ from one full run"
	info "$name: part 1 wrote $((part1_lines - 1)) map entries, part 2 added $new_commits" \
		"($translated raw parent ids of rewritten commits translated);" \
		"$(wc -l <"$d/refs.new") refs equal to the full run's"
}

