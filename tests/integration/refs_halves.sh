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
#    fed the plain filter's stream) gives.
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
EOF

test_done
