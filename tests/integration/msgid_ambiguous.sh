#!/usr/bin/env bash
# msgid_ambiguous.sh - the filter and `migrate remap` give the same verdict
# on an abbreviated id in a commit message (issue 10: one tokenizer).
#
# Two old commits X and Y whose ids start with the same 7 hex digits or
# more (found by brute force over their messages, a few ten thousand
# SHA-1s; git writes them and confirms their ids). X is not changed by the
# migration, Y is (it adds the file the rules drop, and one they keep, so
# it is not left empty: a commit left empty would be pruned). A later commit on
# main, and a collaborator's unpushed commit on top of it, name both:
#   - by their shared prefix: git calls it ambiguous in the old repository,
#     so it must stay as written, in the filter's output and after remap
#     (remap once judged it among changed commits only, found Y alone and
#     rewrote it);
#   - Y by 12 digits, unique: rewritten to the new Y in both (the control);
#   - (remap only) the base commit, which the map given to remap marks
#     dropped: it has no new id and stays (remap once wrote zeros).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

O="$SCRATCH/orig"
git init -q "$O"
export GIT_AUTHOR_DATE="1700000000 +0000" GIT_COMMITTER_DATE="1700000000 +0000"
printf 'base\n' >"$O/a.txt"
git -C "$O" add a.txt && git -C "$O" commit -qm base
base="$(git -C "$O" rev-parse HEAD)"

# the trees of X (x.txt, kept), Y (secret.txt, dropped by the rules, and
# y.txt, kept) and of their merge
tree_of() { # NAME FILE CONTENT [FILE CONTENT...]: base's tree and the files
	local idx="$SCRATCH/index.$1" blob
	shift
	GIT_INDEX_FILE="$idx" git -C "$O" read-tree "$base"
	while [ "$#" -gt 0 ]; do
		blob="$(printf '%s\n' "$2" | git -C "$O" hash-object -w --stdin)"
		GIT_INDEX_FILE="$idx" git -C "$O" update-index --add --cacheinfo "100644,$blob,$1"
		shift 2
	done
	GIT_INDEX_FILE="$idx" git -C "$O" write-tree
}
tx="$(tree_of x x.txt kept)"
ty="$(tree_of y secret.txt dropped y.txt kept)"
tm="$(tree_of m x.txt kept secret.txt dropped y.txt kept)"

# Brute force: 2^15 messages for X, then messages for Y until one's id
# shares its first 7 digits with an X (about 2^13 tries expected; the
# messages are fixed, so the same pair every run).
python3 - "$tx" "$ty" "$base" "$SCRATCH" <<'EOF' || die "no colliding pair found"
import hashlib, sys
tx, ty, base, out = sys.argv[1:5]
who = "Migrate Tester <tester@example.org> 1700000000 +0000"
def body(tree, msg):
    return ("tree %s\nparent %s\nauthor %s\ncommitter %s\n\n%s\n"
            % (tree, base, who, who, msg)).encode()
def oid(b):
    return hashlib.sha1(b"commit %d\0" % len(b) + b).hexdigest()
xs = {}
for i in range(1 << 15):
    b = body(tx, "x: kept, try %d" % i)
    xs.setdefault(oid(b)[:7], b)
for j in range(1 << 20):
    b = body(ty, "y: secret, try %d" % j)
    x = xs.get(oid(b)[:7])
    if x:
        open(out + "/x.body", "wb").write(x)
        open(out + "/y.body", "wb").write(b)
        print("tries for y: %d" % (j + 1))
        sys.exit(0)
sys.exit(1)
EOF
X="$(git -C "$O" hash-object -t commit -w --stdin <"$SCRATCH/x.body")"
Y="$(git -C "$O" hash-object -t commit -w --stdin <"$SCRATCH/y.body")"
[ "${X:0:7}" = "${Y:0:7}" ] && [ "$X" != "$Y" ] || die "test setup: $X and $Y do not share 7 digits"
amb="${X:0:7}"
while [ "${X:0:$((${#amb} + 1))}" = "${Y:0:$((${#amb} + 1))}" ]; do
	amb="${X:0:$((${#amb} + 1))}"
done
[ "${X:0:12}" != "${Y:0:12}" ] || die "test setup: X and Y share 12 digits"
y12="${Y:0:12}"
# git's own verdict in the old repository: ambiguous; the 12 digits: Y
! git -C "$O" rev-parse -q --verify "$amb^{commit}" >/dev/null 2>&1 ||
	die "git does not call $amb ambiguous"
git -C "$O" rev-parse --disambiguate="$amb" | grep -qx "$X" &&
	git -C "$O" rev-parse --disambiguate="$amb" | grep -qx "$Y" ||
	die "git does not list X and Y for $amb"
[ "$(git -C "$O" rev-parse --verify "$y12^{commit}")" = "$Y" ] || die "git: $y12 is not Y"
info "X $X and Y $Y share '$amb' (git: ambiguous)"

# main: base, X and Y merged, then C naming both
m="$(printf 'merge x and y\n' | git -C "$O" commit-tree "$tm" -p "$X" -p "$Y")"
git -C "$O" update-ref refs/heads/main "$m"
git -C "$O" reset -q --hard main
printf 'c\n' >>"$O/a.txt"
git -C "$O" commit -qam "C: fixes $amb; see $y12"

# a collaborator's commit on top, not pushed
ORIGIN="$SCRATCH/origin.git"
git clone -q --bare "$O" "$ORIGIN"
B="$SCRATCH/bob"
git clone -q "$ORIGIN" "$B"
git -C "$B" checkout -q -b work
printf 'bob\n' >"$B/bob.txt"
git -C "$B" add bob.txt && git -C "$B" commit -qm "bob: after $amb and $y12, on ${base:0:12}"

# --- the filter (migrate run --in-place) -------------------------------------------
printf 'secret.txt drop\n' >"$SCRATCH/rules"
MAP="$ORIGIN/migrate/commit-map"

test_case "migrate run --in-place keeps X and changes Y (the commit map)" <<'EOF'
run_migrate run --rules "$SCRATCH/rules" --repo "$ORIGIN" --in-place -q ||
	die "migrate run --in-place failed"
grep -q "^$X $X\$" "$MAP" || die "X was changed or is not in the map"
newY="$(awk -v o="$Y" '$1 == o { print $2 }' "$MAP")"
[ -n "$newY" ] && [ "$newY" != "$Y" ] || die "Y was not changed: '$newY'"
[ "${newY:0:${#amb}}" != "$amb" ] || die "test setup: the new Y still starts with $amb"
EOF

# the cases below read the run's commit map and the rewritten origin
test_case "the filter keeps the prefix X and Y share as written and rewrites Y's 12 digits" <<'EOF'
newY="$(awk -v o="$Y" '$1 == o { print $2 }' "$MAP")"
[ -n "$newY" ] || die "Y is not in the run's commit map (the case before failed)"
msg="$(git -C "$ORIGIN" log -1 --format=%s main)"
[ "$msg" = "C: fixes $amb; see ${newY:0:12}" ] ||
	die "filter: '$msg', expected 'C: fixes $amb; see ${newY:0:12}'"
info "filter: '$amb' (ambiguous) kept, '$y12' (Y) rewritten to '${newY:0:12}'"
EOF

test_case "remap gives the filter's verdicts on a collaborator's commit, and keeps a dropped commit's digits" <<'EOF'
# with the base commit marked dropped in the map (40 zeros, as a map of
# git-filter-repo's has it for a pruned commit): no new id, so its digits
# stay, as the filter keeps them (report_dryrun.sh)
newY="$(awk -v o="$Y" '$1 == o { print $2 }' "$MAP")"
[ -n "$newY" ] || die "Y is not in the run's commit map (the first case failed)"
zeros=0000000000000000000000000000000000000000
sed "s/^$base $base\$/$base $zeros/" "$MAP" >"$SCRATCH/map"
grep -q "^$base $zeros\$" "$SCRATCH/map" || die "test setup: could not mark base dropped"
git -C "$B" fetch -q --all --prune
(cd "$B" && "$MIGRATE" remap --commit-map "$SCRATCH/map") 2>"$SCRATCH/remap.err" ||
	die "remap failed: $(cat "$SCRATCH/remap.err")"
[ "$(git -C "$B" rev-parse work~1)" = "$(git -C "$ORIGIN" rev-parse main)" ] ||
	die "work is not on the new main"
msg="$(git -C "$B" log -1 --format=%s work)"
[ "$msg" = "bob: after $amb and ${newY:0:12}, on ${base:0:12}" ] ||
	die "remap: '$msg', expected 'bob: after $amb and ${newY:0:12}, on ${base:0:12}' (the filter's verdicts)"
info "remap: the same verdicts: '$amb' kept, '$y12' rewritten; a dropped commit's '${base:0:12}' kept"
EOF

test_done
