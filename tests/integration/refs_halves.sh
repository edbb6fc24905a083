#!/usr/bin/env bash
# refs_halves.sh - a run that moves many refs (64 or more) splits its ref
# transaction in two halves, each a `git update-ref --stdin` of its own,
# side by side, committed in two phases (both prepare, then both commit):
# the lock files and renames, most of a run's end on a repository of many
# refs, go on both cores. It must stay all or nothing:
#  - a ref locked by someone else (its .lock there) fails its half's
#    prepare: the other half aborts, no ref moved, no backup written, no
#    journal, the lock left as it was;
#  - then, unlocked: two update-ref processes (strace judges), and the
#    refs, backups and commit map are what the plain pipeline (fast-import
#    fed the plain filter's stream) gives;
#  - killed (strace) as it tells the second half to prepare, then to
#    commit: no lock left, no ref moved or some, and the journal's next
#    run ends as the whole run did.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

SRC="$SCRATCH/src"
NB=40	# 41 refs and 41 backups: over REFS_SPLIT (64) lines
git init -q -b main "$SRC" || die "git init failed"
python3 - "$NB" >"$SCRATCH/make.fi" <<'PY' || die "could not write the source's stream"
import sys
n = int(sys.argv[1])
out = sys.stdout
def data(s):
    out.write("data %d\n%s\n" % (len(s), s))
t = 1700000000
out.write("commit refs/heads/main\nmark :1\ncommitter A <a@example.org> %d +0000\n" % t)
data("root")
out.write("M 100644 inline keep.txt\n"); data("keep\n")
out.write("M 100644 inline drop.bin\n"); data("drop\n")
for i in range(n):
    out.write("commit refs/heads/b%03d\ncommitter A <a@example.org> %d +0000\n" % (i, t + i + 1))
    data("branch %d" % i)
    out.write("from :1\nM 100644 inline keep.txt\n"); data("keep %d\n" % i)
PY
git -C "$SRC" fast-import --quiet <"$SCRATCH/make.fi" || die "fast-import of the source failed"
git -C "$SRC" checkout -q main
cp -a "$SRC" "$SCRATCH/orig"	# as it was, for the killed runs
printf '/drop.bin drop\n' >"$SCRATCH/rules"

test_case "the plain pipeline" <<'EOF'
plain_pipeline "$SRC" "$SCRATCH/rules" plain
[ "$(wc -l <"$SCRATCH/plain.refs")" -eq $((NB + 1)) ] || die "plain pipeline: not $((NB + 1)) refs"
EOF

test_case "a ref locked by someone else: neither half moves a ref" <<'EOF'
: >"$SRC/.git/refs/heads/b025.lock"
expect_refusal --what "a half that cannot prepare" --status 3 --says 'b025.lock' \
	--says 'update-ref' --refs-unchanged "$SRC" --absent "$SRC/.git/migrate/journal" \
	-- "$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SRC" --in-place -q
[ -e "$SRC/.git/refs/heads/b025.lock" ] || die "someone else's b025.lock was removed"
rm -f "$SRC/.git/refs/heads/b025.lock"
EOF

test_case "unlocked: two update-ref side by side, the plain pipeline's refs" <<'EOF'
refs_of "$SRC" | sed 's# refs/# refs/migrate/original/refs/#' >"$SCRATCH/backups.want"
# LeakSanitizer cannot work under ptrace: leaks are looked for elsewhere
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -e trace=execve -e status=successful -e signal=none -o "$SCRATCH/trace" \
	"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SRC" --in-place -q </dev/null ||
	die "migrate run failed"
# whole lines (status=successful: never split by another process's call)
n=$(grep -c '"update-ref", "--stdin"\]' "$SCRATCH/trace")
info "git update-ref --stdin ran $n time(s) for $((2 * NB + 1)) refs and backups"
[ "$n" = 2 ] || die "git update-ref ran $n time(s), not 2"
refs_of "$SRC" | grep -v ' refs/migrate/' >"$SCRATCH/run.refs"
diff -u "$SCRATCH/plain.refs" "$SCRATCH/run.refs" || die "the run's refs differ from the plain pipeline's"
refs_of "$SRC" | grep ' refs/migrate/original/' >"$SCRATCH/backups"
diff -u "$SCRATCH/backups.want" "$SCRATCH/backups" || die "the backups are not the refs before"
diff -u <(sort "$SCRATCH/plain.map") <(sort "$SRC/.git/migrate/commit-map") || die "the commit maps differ"
refs_of "$SRC" >"$SCRATCH/done.refs"
EOF

# The run killed (kill -9, strace) on the write(2) to the second half of
# its `prepare` (both halves hold locks, neither committed: each aborts at
# the end of its input, no ref moved and no lock left) and of its
# `commit` (the first half committed, the second aborts: some refs
# moved). Either way the journal is there and the next run finishes it.
test_case "killed between the halves' prepare and commit: the journal finishes the run, no lock left" <<'EOF'
[ -s "$SCRATCH/done.refs" ] || die "no refs of a whole run (the case before failed)"
untraced() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$@"; }
rm -rf "$SCRATCH/w" && cp -a "$SCRATCH/orig" "$SCRATCH/w"
untraced strace -qq -s 12 -e trace=write -o "$SCRATCH/writes" \
	"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SCRATCH/w" --in-place -q </dev/null ||
	die "the traced run failed"
# the ordinal, among the main thread's writes, of the second half's
# prepare and of its commit (the last of each)
steps=$(grep '^write(' "$SCRATCH/writes" | awk '/"prepare\\n"/ { p = NR } /"commit\\n"/ { c = NR } END { print p, c }')
read -r kp kc <<<"$steps"
[ -n "$kc" ] && [ "$kp" -lt "$kc" ] || die "no prepare and commit writes in the trace: '$steps'"
said=()
for k in "$kp" "$kc"; do
	rm -rf "$SCRATCH/w" && cp -a "$SCRATCH/orig" "$SCRATCH/w"
	(untraced strace -qq -o /dev/null -e trace=write -e inject=write:signal=KILL:when="$k" \
		"$MIGRATE" run --rules "$SCRATCH/rules" --repo "$SCRATCH/w" --in-place -q </dev/null >/dev/null 2>&1) 2>/dev/null &&
		die "the run was not killed at write #$k"
	# the halves end once their input does
	for _ in $(seq 50); do pgrep -f "update-ref --stdin" >/dev/null || break; sleep 0.1; done
	[ -e "$SCRATCH/w/.git/migrate/journal" ] || die "killed at write #$k: no journal"
	moved=$(LC_ALL=C comm -13 <(refs_of "$SCRATCH/orig") <(refs_of "$SCRATCH/w") | grep -c ' refs/heads/' || true)
	locks=$(find "$SCRATCH/w/.git" -name '*.lock' | wc -l)
	[ "$locks" = 0 ] || die "killed at write #$k: $locks lock file(s) left"
	if [ "$k" = "$kp" ]; then
		[ "$moved" = 0 ] || die "killed before any commit: $moved branches moved"
	else
		[ "$moved" -gt 0 ] && [ "$moved" -le $NB ] || die "killed between the commits: $moved branches moved"
	fi
	run_migrate run --rules "$SCRATCH/rules" --repo "$SCRATCH/w" --in-place -q </dev/null 2>"$SCRATCH/err" ||
		die "killed at write #$k: the next run failed: $(cat "$SCRATCH/err")"
	diff -u "$SCRATCH/done.refs" <(refs_of "$SCRATCH/w") || die "killed at write #$k: the next run's refs differ"
	said+=("write #$k: $moved of $((NB + 1)) branches moved")
done
info "killed at the second half's prepare and commit: $(IFS=';'; echo "${said[*]}"); each finished by the next run"
EOF

test_done
