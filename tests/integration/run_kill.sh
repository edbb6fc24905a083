#!/usr/bin/env bash
# run_kill.sh - `migrate run --in-place` killed with SIGKILL (the whole
# process group: migrate, fast-export, fast-import, update-ref, reset) at a
# random moment, on a repository with a few thousand refs.
#
# After each kill: with no journal left, the refs are all old (exactly as
# before: no backup, no ref moved) or all new (the run had finished); with
# a journal, the next run finishes it (even-numbered tries) or --rollback
# undoes it (odd ones), and then the refs are all new (or all old), the
# work tree is clean at HEAD, no lock file, temp file, side repository or
# journal is left, and the commit map holds no identity (new -> new)
# entry. Every try ends with a run to completion, whose refs (backups
# included), commit map, ref map and tips equal those of an uninterrupted
# run.
#
# The kill moments are spread over the length of an uninterrupted run: try
# t of n dies at a random moment of the t-th n-th of it, so a few tries
# cover the whole run (before the journal, inside it, after it).
#
# With KILL_MODE=unlfs (run_kill_unlfs.sh) the repository is first made an
# LFS one and each run takes its files back (`*.bin unlfs`): the files'
# packs the filter writes are then at stake too, and after every next run
# no temp pack, no list of packs is left and git fsck finds every object.
#
# With KILL_MODE=split (run_kill_split.sh) each run splits data.bin (one
# part per first letter of its lines): the filter's writer thread stores
# the parts in packs of its own (issue 29), and after every next run no
# temp pack and no list of parts is left, no pack migrate made is left
# half (git verify-pack) and git fsck finds every object.
#
# With KILL_MODE=replace (run_kill_replace.sh) each run replaces text in
# data.bin: the writer thread stores the results, and the stream waits for
# their packs; the same checks as split.
#
# With KILL_MODE=to (run_kill_to.sh) each run is `migrate run --to NEWDIR`
# with the replace-text rule: the target is made, borrows the source's
# objects, gets the writer's packs, fast-import's, its refs, its work
# tree, and ends repacked on its own (git repack -a -d beside the
# check-out). The refs compared are the target's ("all old": it has none,
# or is not there); after every next run the target is as an
# uninterrupted run leaves it (one pack, no alternate, git fsck clean, the
# same refs and commit map) and the source's refs are as before.
#
# With KILL_MODE=wide (run_kill_wide.sh) the history also holds a
# directory of 600 files of long names, one changed at each commit (a
# tree of 70 KB at each), and each run drops
# one of them in place: the writer stores the trees and the commits in a
# pack of its own (fast-import writes nothing), listed until the refs
# moved; the same checks as split.
#
# In the modes whose packs a list names until the refs moved (wide,
# unlfs), strace also kills the run at its last steps: see "kills at the
# run's last steps" below.
#
# Knobs: KILL_REFS (600), KILL_COMMITS (60), KILL_TRIES (12), KILL_SEED
# (the bash RANDOM seed, default 1), KILL_MODE (lfs, unlfs, split,
# replace, to, wide).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# run_kill_unlfs.sh runs this script: its cases report under its own name
case "${KILL_MODE:-lfs}" in
unlfs | split | replace | to | wide) TEST_NAME=run_kill_$KILL_MODE ;;
esac

NREFS="${KILL_REFS:-600}"
NCOMMITS="${KILL_COMMITS:-60}"
TRIES="${KILL_TRIES:-12}"
RANDOM="${KILL_SEED:-1}"
MODE="${KILL_MODE:-lfs}"

printf '*.bin lfs\n' >"$SCRATCH/rules"

WIDE_PAD=$(printf '%0100d' 0)

# --- the repository: NCOMMITS commits on main, NREFS branches over them ----
P="$SCRATCH/pristine"
git init -q "$P"
{
	for ((c = 1; c <= NCOMMITS; c++)); do
		bin="binary content of commit $c $(printf '%0200d' "$c")"
		txt="line $c"
		printf 'blob\nmark :%d\ndata %d\n%s\n' $((2 * c - 1)) "${#bin}" "$bin"
		printf 'blob\nmark :%d\ndata %d\n%s\n' $((2 * c)) "${#txt}" "$txt"
		printf 'commit refs/heads/main\nmark :%d\n' $((100000 + c))
		printf 'committer T <t@example.org> %d +0000\ndata 9\ncommit %d\n' $((1700000000 + c)) $((c % 10))
		[ "$c" -gt 1 ] && printf 'from :%d\n' $((100000 + c - 1))
		printf 'M 100644 :%d data.bin\nM 100644 :%d dir%d/notes.txt\n' $((2 * c - 1)) $((2 * c)) $((c % 7))
		if [ "$MODE" = wide ]; then
			# long names: a large tree of few files (copies of the
			# work tree cost per file)
			if [ "$c" = 1 ]; then
				for ((f = 0; f < 600; f++)); do
					printf 'M 100644 inline wide/f%04d-%s\ndata 7\nfile %02d\n' "$f" "$WIDE_PAD" $((f % 100))
				done
			fi
			printf 'M 100644 inline wide/f%04d-%s\ndata 9\nchange %02d\n' $((c * 7 % 600)) "$WIDE_PAD" $((c % 100))
		fi
		printf '\n'
	done
	for ((i = 1; i <= NREFS; i++)); do
		printf 'reset refs/heads/b%04d\nfrom :%d\n\n' "$i" $((100000 + 1 + i % NCOMMITS))
	done
} | git -C "$P" fast-import --quiet || die "fast-import of the test repository failed"
git -C "$P" reset -q --hard main
git -C "$P" pack-refs --all
# no reflogs: copying thousands of small files would cost more than the run
git -C "$P" config core.logAllRefUpdates false
rm -rf "$P/.git/logs"
if [ "$MODE" = unlfs ]; then
	# an LFS history with no trace of the run that made it, nor of the
	# files' blobs: only the LFS store has them
	"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$P" --in-place -q || die "the lfs run failed"
	rm -rf "$P/.git/migrate"
	git -C "$P" for-each-ref --format='delete %(refname)' refs/migrate/ | git -C "$P" update-ref --stdin
	git -C "$P" gc -q --prune=now
	printf '*.bin unlfs\n' >"$SCRATCH/rules"
fi
if [ "$MODE" = split ]; then
	printf "data.bin split record='^(\\\\w)' into='parts/{1}.txt'\n" >"$SCRATCH/rules"
fi
if [ "$MODE" = wide ]; then
	printf '/wide/f0001-%s drop\n' "$WIDE_PAD" >"$SCRATCH/rules"
fi
if [ "$MODE" = replace ] || [ "$MODE" = to ]; then
	printf 'content==>CONTENT\nregex:commit (\\d+)==>change \\1\n' >"$SCRATCH/exprs"
	printf 'data.bin replace-text=%s\n' "$SCRATCH/exprs" >"$SCRATCH/rules"
fi
refs_of "$P" >"$SCRATCH/src.refs"
[ "$(wc -l <"$SCRATCH/src.refs")" -eq $((NREFS + 1)) ] || die "the test repository has $(wc -l <"$SCRATCH/src.refs") refs"
# the refs before: the repository's, or with --to the target's (none)
if [ "$MODE" = to ]; then
	: >"$SCRATCH/old.refs"
else
	cp "$SCRATCH/src.refs" "$SCRATCH/old.refs"
fi

# copy SRC DST: DST a copy of SRC (with --to, no target of an earlier try)
copy() { rm -rf "$2" "$2.to" && cp -a "$1" "$2"; }
# the repository a run on REPO writes: REPO, or with --to REPO.to
target() { if [ "$MODE" = to ]; then echo "$1.to"; else echo "$1"; fi; }
# the refs a run on REPO wrote (none when its target is not there)
refs_written() {
	local t
	t=$(target "$1")
	if [ -d "$t" ]; then refs_of "$t"; fi
}
# run_argv REPO: RUN_ARGV, the command of a run on REPO
run_argv() {
	RUN_ARGV=("$MIGRATE" run --rules "$SCRATCH/rules" --repo "$1" --in-place -q)
	[ "$MODE" != to ] || RUN_ARGV=("$MIGRATE" run --rules "$SCRATCH/rules" --repo "$1" --to "$1.to" -q)
}
run_in_place() {
	run_argv "$1"
	"${RUN_ARGV[@]}" "${@:2}"
}

# --- the uninterrupted run, and its time ----------------------------------------
test_case "an uninterrupted run (its refs, maps and tips are what every try must end with)" <<'EOF'
copy "$P" "$SCRATCH/ref"
start=$(date +%s%N)
run_in_place "$SCRATCH/ref" || die "the uninterrupted run failed"
took_ms=$((($(date +%s%N) - start) / 1000000))
refs_written "$SCRATCH/ref" >"$SCRATCH/new.refs"
for f in commit-map ref-map tips; do cp "$(target "$SCRATCH/ref")/.git/migrate/$f" "$SCRATCH/ref.$f"; done
echo "$took_ms" >"$SCRATCH/took_ms"
info "an uninterrupted run: ${took_ms} ms, $(wc -l <"$SCRATCH/new.refs") refs after (backups included)"
EOF

# the state must be that of the uninterrupted run (ref-map and tips only
# when the last run was a first one: a re-run has its own)
same_state() {
	local f files=(commit-map)
	[ "$3" = first ] && files+=(ref-map tips)
	for f in "${files[@]}"; do
		cmp -s "$SCRATCH/ref.$f" "$(target "$1")/.git/migrate/$f" || die "try $2: $f differs from an uninterrupted run's"
	done
	diff -u "$SCRATCH/new.refs" <(refs_written "$1") >/dev/null || die "try $2: refs differ from an uninterrupted run's"
	if [ "$MODE" = to ]; then
		diff -u "$SCRATCH/src.refs" <(refs_of "$1") >/dev/null || die "try $2: the source's refs changed"
	fi
}

# no identity entries, no leftovers, a clean work tree at HEAD (of the
# repository REPO's run writes)
sane() {
	local w try="$2"
	w=$(target "$1")
	# --to rolled back: the target has no ref, nothing to check in it
	[ -n "$(refs_written "$1")" ] || [ "$MODE" != to ] || return 0
	if [ -e "$w/.git/migrate/commit-map" ]; then
		awk 'NR > 1 && $1 == $2 { bad = 1 } END { exit bad }' "$w/.git/migrate/commit-map" ||
			die "try $try: the commit map holds an identity entry"
	fi
	for f in journal import.git commit-map.new tips.new; do
		[ ! -e "$w/.git/migrate/$f" ] || die "try $try: $f is left"
	done
	[ -z "$(find "$w/.git" -name '*.lock' -o -name '*.tmp-*' -o -path '*/lfs/objects/tmp/put-*')" ] ||
		die "try $try: left: $(find "$w/.git" -name '*.lock' -o -name '*.tmp-*' -o -path '*/lfs/objects/tmp/put-*' | head -3)"
	[ -z "$(git -C "$w" status --porcelain)" ] ||
		die "try $try: the work tree is not clean at HEAD: $(git -C "$w" status --porcelain | head -3)"
	if [ "$MODE" = unlfs ]; then
		[ ! -e "$w/.git/migrate/unlfs-packs" ] || die "try $try: the list of packs is left"
		[ -z "$(find "$w/.git/objects/pack" -name 'tmp_migrate_*')" ] ||
			die "try $try: a temp pack is left"
		git -C "$w" fsck --connectivity-only >/dev/null 2>&1 ||
			die "try $try: fsck: $(git -C "$w" fsck --connectivity-only 2>&1 | head -3)"
	fi
	if [ "$MODE" = to ]; then
		# on its own and packed: the source's objects copied, one pack
		[ ! -e "$w/.git/objects/info/alternates" ] ||
			die "try $try: the target still borrows: $(cat "$w/.git/objects/info/alternates")"
		[ "$(find "$w/.git/objects/pack" -name '*.pack' | wc -l)" -eq 1 ] ||
			die "try $try: the target has $(find "$w/.git/objects/pack" -name '*.pack' | wc -l) packs, not one"
	fi
	if [ "$MODE" = split ] || [ "$MODE" = replace ] || [ "$MODE" = to ] || [ "$MODE" = wide ]; then
		local idx
		[ ! -e "$w/.git/migrate/new-blobs" ] || die "try $try: the list of parts is left"
		[ -z "$(find "$w/.git/objects/pack" -name 'tmp_migrate_*')" ] ||
			die "try $try: a temp pack is left"
		for idx in "$w"/.git/objects/pack/*.idx; do
			git verify-pack "$idx" || die "try $try: git verify-pack $idx"
		done
		git -C "$w" fsck --connectivity-only >/dev/null 2>&1 ||
			die "try $try: fsck: $(git -C "$w" fsck --connectivity-only 2>&1 | head -3)"
		[ ! -e "$w/.git/migrate/made-packs" ] || die "try $try: the list of the writer's packs is left"
		# converted (not rolled back): HEAD has the part, the text replaced
		if [ "$MODE" = split ] && [ "$(git -C "$w" rev-parse HEAD)" != "$(git -C "$P" rev-parse HEAD)" ]; then
			git -C "$w" ls-tree -r --name-only HEAD | grep -q '^parts/b.txt$' ||
				die "try $try: HEAD has no part parts/b.txt"
		fi
		if { [ "$MODE" = replace ] || [ "$MODE" = to ]; } &&
			[ "$(git -C "$w" rev-parse HEAD)" != "$(git -C "$P" rev-parse HEAD)" ]; then
			git -C "$w" show HEAD:data.bin | grep -q 'binary CONTENT of change 60' ||
				die "try $try: HEAD's data.bin is not replaced: $(git -C "$w" show HEAD:data.bin | head -c 60)"
		fi
	fi
}

W="$SCRATCH/work"

# kill_try T DELAY_MS: try T, killed DELAY_MS into the run (the delays are
# drawn outside the cases, from the seeded RANDOM, as before)
kill_try() {
	local t="$1" delay_ms="$2" pid state kind
	[ -s "$SCRATCH/took_ms" ] || die "no uninterrupted run to compare with (the first case failed)"
	copy "$P" "$W"
	run_argv "$W"
	setsid "${RUN_ARGV[@]}" 2>/dev/null &
	pid=$!
	sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
	kill -9 -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	# no journal: nothing moved yet, or everything did
	if [ ! -e "$(target "$W")/.git/migrate/journal" ]; then
		if diff -q "$SCRATCH/old.refs" <(refs_written "$W") >/dev/null; then
			state=old
		elif diff -q "$SCRATCH/new.refs" <(refs_written "$W") >/dev/null; then
			state=new
		else
			die "try $t (killed after ${delay_ms} ms): no journal, but the refs are mixed"
		fi
	else
		state=journal
	fi
	echo "$state" >>"$SCRATCH/states"
	kind=again
	[ "$state" = old ] && kind=first
	if [ "$state" = journal ] && [ $((t % 2)) = 1 ]; then
		kind=first
		run_in_place "$W" --rollback 2>"$SCRATCH/err" || die "try $t: --rollback failed: $(cat "$SCRATCH/err")"
		diff -u "$SCRATCH/old.refs" <(refs_written "$W") >/dev/null || die "try $t: the refs are not all old after --rollback"
		[ ! -e "$(target "$W")/.git/migrate/commit-map" ] || die "try $t: --rollback left the commit map of the run"
		[ "$MODE" = to ] || [ "$(git -C "$W" rev-parse HEAD)" = "$(git -C "$P" rev-parse HEAD)" ] ||
			die "try $t: HEAD is not old after --rollback"
		sane "$W" "$t"
	fi
	# the next run: finishes an interrupted one, or runs (again) to the end
	run_in_place "$W" 2>"$SCRATCH/err" || die "try $t ($state): the next run failed: $(cat "$SCRATCH/err")"
	sane "$W" "$t"
	same_state "$W" "$t" "$kind"
	info "try $t, killed after ${delay_ms} ms: $state; $([ "$kind" = first ] && [ "$state" = journal ] && echo 'rolled back, ')the next run equals an uninterrupted one"
}

# --- kills at chosen steps (strace -e inject) ---------------------------------
# (LeakSanitizer cannot work under ptrace: off for these runs)
untraced_leaks() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }
# killed_run STRACE-ARGS...: a run on a fresh copy W of the repository
# under strace, which must kill it (its stderr in killed.err)
killed_run() {
	copy "$P" "$W"
	run_argv "$W"
	(untraced_leaks strace -qq "$@" "${RUN_ARGV[@]}" >/dev/null 2>"$SCRATCH/killed.err") 2>/dev/null &&
		die "the run was not killed (strace $*)"
	return 0
}
# next_equal WHAT KIND: the next run on W succeeds and leaves what an
# uninterrupted one does (KIND: first or again, as same_state)
next_equal() {
	run_in_place "$W" 2>"$SCRATCH/err" || die "$1: the next run failed: $(cat "$SCRATCH/err")"
	sane "$W" "$1"
	same_state "$W" "$1" "$2"
}

# The run's last steps. Once the journal is written the run renames its
# state files into place, removes the lists of the packs it wrote (a run
# that moved no ref drops what they name) and then the journal. The run
# is killed on entering a chosen unlink(2) of its main thread: the
# journal's, the one after it, and each list of packs removed after the
# journal was written. Killed anywhere there, the next run must keep
# every object the refs name.
# list_steps TRACE: "<ordinal among the unlinks> <path>" of those steps
list_steps() {
	awk '
		/^unlink\(/ { n++ }
		/^rename\(.*\/migrate\/journal"\)/ { journal = 1; next }
		!journal || !/^unlink\(/ { next }
		{ path = $0; sub(/^unlink\("/, "", path); sub(/".*/, "", path) }
		after { print n, path; after = 0 }
		path ~ /\/migrate\/journal$/ { print n, path; after = 1; next }
		path ~ /\/migrate\/(made|unlfs)-packs$/ && / = 0$/ { print n, path }
	' "$1"
}
# step_try K PATH: the run killed on entering its K-th unlink (of PATH)
step_try() {
	local k="$1" what="$2" state
	killed_run -o /dev/null -e trace=unlink -e inject=unlink:signal=KILL:when="$k"
	state=journal
	if [ ! -e "$(target "$W")/.git/migrate/journal" ]; then
		diff -q "$SCRATCH/new.refs" <(refs_written "$W") >/dev/null ||
			die "killed at the unlink of $what: no journal, and the refs are not all new"
		state=new
	fi
	next_equal "killed at the unlink of $what ($state)" again
	echo "${what##*/} ($state)"
}
if [ "$MODE" = wide ] || [ "$MODE" = unlfs ]; then
	test_case "killed at the run's last steps (strace): at the journal's removal, the step after it, each list of packs removed (unlfs: the step after alone); the next run keeps every object" <<'EOF'
command -v strace >/dev/null || die "strace is not installed (scripts/lib.sh installs it)"
copy "$P" "$W"
run_argv "$W"
untraced_leaks strace -qq -o "$SCRATCH/steps.trace" -e trace=unlink,rename "${RUN_ARGV[@]}" || die "the run under strace failed"
list_steps "$SCRATCH/steps.trace" >"$SCRATCH/steps"
grep -q '/migrate/journal$' "$SCRATCH/steps" || die "no unlink of the journal in the run's trace"
# unlfs (whose runs take longest): the step after the journal's removal
# alone, where a list left behind would be found with no journal
if [ "$MODE" = unlfs ]; then
	tail -n 1 "$SCRATCH/steps" >"$SCRATCH/steps.last" && mv "$SCRATCH/steps.last" "$SCRATCH/steps"
fi
done_steps=()
while read -r k path; do
	done_steps+=("$(step_try "$k" "$path")") || exit 1
done <"$SCRATCH/steps"
info "killed at ${#done_steps[@]} unlinks: $(IFS=','; echo "${done_steps[*]}")"
EOF
fi

# git's ref transaction is atomic only while git lives: git update-ref
# killed while it renames its lock files leaves some refs moved, some
# not. The run must keep its journal (and the packs its refs name), and
# the next run finish it.
if [ "$MODE" = lfs ]; then
	test_case "git update-ref killed in the middle of its renames (strace): the run keeps its journal, the next run finishes it" <<'EOF'
command -v strace >/dev/null || die "strace is not installed (scripts/lib.sh installs it)"
mid="$W/.git/refs/heads/b$(printf '%04d' $((NREFS / 2)))"
# the run is not killed itself: it fails, git update-ref having died
copy "$P" "$W"
run_argv "$W"
(untraced_leaks strace -f -qq -o "$SCRATCH/mid.trace" -P "$mid.lock" -e trace=rename -e inject=rename:signal=KILL \
	"${RUN_ARGV[@]}" >/dev/null 2>"$SCRATCH/err.first") 2>/dev/null && die "the run succeeded with its update-ref killed"
grep -q 'killed by SIGKILL' "$SCRATCH/mid.trace" || die "no process was killed at the rename of $mid: $(head -3 "$SCRATCH/mid.trace")"
[ -e "$W/.git/migrate/journal" ] || die "the run dropped its journal with some refs moved: $(cat "$SCRATCH/err.first")"
moved=$(LC_ALL=C comm -13 "$SCRATCH/old.refs" <(refs_of "$W") | grep -c ' refs/heads/' || true)
[ "$moved" -gt 0 ] && [ "$moved" -lt "$NREFS" ] || die "expected some refs moved, not $moved of $NREFS"
grep -q 'finishes it' "$SCRATCH/err.first" || die "the run did not say how to finish: $(cat "$SCRATCH/err.first")"
next_equal "update-ref killed" again
info "$moved of $NREFS branches had moved when git update-ref died; the run said: $(grep -o 'the run is journaled.*' "$SCRATCH/err.first" | head -1 | sed "s|$SCRATCH|…|")"
EOF
fi

# --to: the run that makes the target, killed at its first steps that
# leave something in it (the mkdir of its state folder: .git is there;
# the rename of its mark: its temp file is there; git init before it
# made objects/: HEAD is there); the next run takes the target as its
# own and makes it whole
if [ "$MODE" = to ]; then
	test_case "killed while making the target (strace: at the mkdir of its state folder, at the mark's rename, git init before objects/ and holding config.lock); the next run takes it as its own" <<'EOF'
command -v strace >/dev/null || die "strace is not installed (scripts/lib.sh installs it)"
copy "$P" "$W"
run_argv "$W"
untraced_leaks strace -qq -o "$SCRATCH/make.trace" -e trace=mkdir,rename "${RUN_ARGV[@]}" || die "the run under strace failed"
# "<syscall> <ordinal among its kind>" of each step under the target, up to the mark
awk -v to="$W.to" '
	/^(mkdir|rename)\(/ { s = substr($0, 1, index($0, "(") - 1); n[s]++ }
	index($0, "mkdir(\"" to "/.git/migrate\"") == 1 { print "mkdir", n["mkdir"] }
	/^rename\(.*\/migrate\/source"\)/ { print "rename", n["rename"]; exit }
' "$SCRATCH/make.trace" >"$SCRATCH/make.steps"
[ "$(grep -c . "$SCRATCH/make.steps")" -eq 2 ] || die "not the two steps expected: $(cat "$SCRATCH/make.steps")"
left=()
while read -r sc k; do
	killed_run -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when="$k"
	left+=("$sc #$k: $(if [ -d "$W.to" ]; then (cd "$W.to" && find . -mindepth 1 | sort | tr '\n' ' ' |
		sed 's/source\.tmp-[^ ]*/source.tmp-*/'); else echo "no target"; fi)")
	next_equal "killed at $sc #$k" first
done <"$SCRATCH/make.steps"
# git init killed half-way (before objects/), and the run killed too
# while it took the target back (at the unlink of HEAD): the mark, HEAD,
# no objects/
killed_run -f -o /dev/null -P "$W.to/.git/objects" -P "$W.to/.git/HEAD" \
	-e trace=mkdir,unlink -e inject=mkdir:signal=KILL -e inject=unlink:signal=KILL
[ -e "$W.to/.git/HEAD" ] && [ ! -e "$W.to/.git/objects" ] || die "git init was not killed before objects/"
[ -e "$W.to/.git/migrate/source" ] || die "the mark went before HEAD while the run took the target back"
left+=("git init killed before objects/, the run at the unlink of HEAD: $(cd "$W.to" && find . -mindepth 1 | wc -l) entries")
next_equal "git init killed" first
# git init killed as it put its config in place (the rename of its
# config.lock), and the run at the unlink of that lock while it took the
# target back: the next git init dies on a config.lock left
killed_run -f -o /dev/null -P "$W.to/.git/config.lock" \
	-e trace=rename,unlink -e inject=rename:signal=KILL -e inject=unlink:signal=KILL
[ -e "$W.to/.git/config.lock" ] || die "git init was not killed holding config.lock"
[ -e "$W.to/.git/migrate/source" ] || die "the mark went before config.lock while the run took the target back"
left+=("git init killed holding config.lock: $(cd "$W.to" && find . -mindepth 1 | wc -l) entries")
next_equal "git init killed holding config.lock" first
info "left by each kill: $(IFS=';'; echo "${left[*]}")"
EOF
fi

took_ms=$(cat "$SCRATCH/took_ms" 2>/dev/null || echo 0)
for ((t = 1; t <= TRIES; t++)); do
	delay_ms=$((((t - 1) * took_ms + RANDOM % (took_ms + 1)) / TRIES))
	test_case "kill $t of $TRIES (${delay_ms} ms in): all old, all new or a journal; the next run (after --rollback on odd tries) equals an uninterrupted one" \
		"kill_try $t $delay_ms"
done
seen() { grep -cx "$1" "$SCRATCH/states" 2>/dev/null || true; }
info "$TRIES kills: $(seen old) before the journal (all old), $(seen journal) with a journal (finished or rolled back), $(seen new) after (all new)"

test_done
