#!/usr/bin/env bash
# journey.sh - the user's whole journey, in an ordinary clone of a bare
# file:// server that speaks LFS through git-lfs itself (no mock):
#
#   preview (run --dry-run), convert in place, `migrate push`, a fresh
#   clone of the server checks out every converted file byte-identical on
#   every branch and tag and `git lfs fsck` is clean; a teammate with a
#   local commit follows with `migrate remap`; a teammate's push between
#   the run and `migrate push` is refused by name, nothing pushed.
#
# And the bug it replaces: `git push --force --all` after the run uploads
# no LFS object (git-lfs's pre-push hook believes the server has them,
# since the run rewrote refs/remotes/origin/*), so the fresh clone fails.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/lfs_lib.sh
. "$HERE/lfs_lib.sh"

# --- the project, on a server ----------------------------------------------
P="$SCRATCH/project"
git init -q "$P"
(
	cd "$P"
	mkdir -p art
	for i in 1 2 3 4 5; do
		printf 'release %s\n' "$i" >>notes.txt
		python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(3000 + 97 * $i))" >"art/pic$i.bin"
		git add -A && git commit -qm "release $i"
	done
	git branch feature HEAD~2
	git tag v1 HEAD~3
	git tag -a -m "annotated" v2 HEAD~1
)
SERVER="$SCRATCH/server.git"
git clone -q --bare "$P" "$SERVER"
printf 'art/*.bin lfs\n' >"$SCRATCH/rules"
URL="file://$SERVER"

# the teammate clones before the migration and commits locally
T="$SCRATCH/teammate"
git clone -q "$URL" "$T"
( cd "$T" && echo "teammate" >>notes.txt && git commit -qam "teammate's work" &&
	git branch side )	# the same work on a branch not checked out

C="$SCRATCH/clone"	# the user's clone, converted by the first case
test_case "the migration, in an ordinary clone" <<'EOF'
git clone -q "$URL" "$C"
git -C "$C" branch -q feature origin/feature
run_migrate run -q --rules "$SCRATCH/rules" --repo "$C" --in-place --dry-run \
	--report "$SCRATCH/preview.txt" || die "the preview failed"
grep -q 'art/\*.bin' "$SCRATCH/preview.txt" || die "the preview names no rule"
[ ! -e "$C/.git/migrate/tips" ] || die "the preview wrote a state"
refs_of "$C" >"$SCRATCH/c.before"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$C" --in-place || die "the run failed"
info "preview, then run --in-place in an ordinary clone"

# the bug: a plain forced push ships no LFS object (on a copy of the server)
cp -r "$SERVER" "$SCRATCH/plain.git"
cp -r "$C" "$SCRATCH/plain-clone"
git -C "$SCRATCH/plain-clone" remote set-url origin "file://$SCRATCH/plain.git"
git -C "$SCRATCH/plain-clone" push -q --force --all origin 2>/dev/null || true
n_plain=$(find "$SCRATCH/plain.git" -path '*lfs/objects/*' -type f | wc -l)
info "a plain 'git push --force --all' after the run uploaded $n_plain LFS object(s)"
EOF

# the server as it was, for the cases after this one
cp -r "$SERVER" "$SCRATCH/server.before-race"
test_case "migrate push: a teammate's push in between is refused" <<'EOF'
git clone -q "$URL" "$SCRATCH/racer"
( cd "$SCRATCH/racer" && echo race >>notes.txt && git commit -qam race && git push -q origin main )
git -C "$SERVER" for-each-ref >"$SCRATCH/server.raced"
rc=0
"$MIGRATE" push --repo "$C" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "a teammate's push in between: exit $rc, not 1"; }
grep -q "origin's refs/heads/main is at .*someone pushed to it since; nothing was pushed" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "a teammate's push in between: the ref is not named"; }
diff -u "$SCRATCH/server.raced" <(git -C "$SERVER" for-each-ref) || die "the refused push moved the server's refs"
info "a push to the server between run and migrate push: refused, named, nothing pushed"
EOF
rm -rf "$SERVER" && mv "$SCRATCH/server.before-race" "$SERVER"

test_case "migrate push" <<'EOF'
"$MIGRATE" push --repo "$C" --dry-run >"$SCRATCH/dry.out" 2>"$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "push --dry-run failed"; }
grep -q '^would push refs/heads/main refs/remotes/origin/main -> ' "$SCRATCH/dry.out" ||
	die "push --dry-run does not list main"
[ -z "$(find "$SERVER" -path '*lfs/objects/*' -type f)" ] || die "push --dry-run uploaded"
git -C "$SERVER" for-each-ref >"$SCRATCH/server.now"
run_migrate push --repo "$C" >/dev/null 2>"$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "migrate push failed"; }
for ref in refs/heads/main refs/heads/feature refs/tags/v1 refs/tags/v2; do
	local_ref=$ref
	case "$ref" in refs/heads/*) local_ref="refs/remotes/origin/${ref#refs/heads/}" ;; esac
	[ "$(git -C "$SERVER" rev-parse "$ref")" = "$(git -C "$C" rev-parse "$local_ref")" ] ||
		die "the server's $ref is not the new history's"
done
n_up=$(find "$SERVER" -path '*lfs/objects/*' -type f | wc -l)
[ "$n_up" = 5 ] || die "the server holds $n_up LFS objects, not 5"
info "migrate push: 4 refs moved, $n_up LFS objects uploaded ($(tail -1 "$SCRATCH/err" | sed 's/.*history, //'))"
EOF

test_case "a fresh clone of the server: every file real, on every branch and tag" <<'EOF'
F="$SCRATCH/fresh"
git clone -q "$URL" "$F" || die "a fresh clone of the server failed"
(cd "$F" && git lfs fsck >/dev/null) || die "git lfs fsck in the fresh clone"
for rev in main feature v1 v2; do
	git -C "$F" checkout -q "$rev" 2>/dev/null || die "checkout $rev in the fresh clone"
	git -C "$P" ls-tree -r --name-only "$rev" | while read -r path; do
		cmp -s "$F/$path" <(git -C "$P" show "$rev:$path") ||
			die "fresh clone, $rev: $path differs from the original"
	done
	[ -z "$(git -C "$F" status --porcelain)" ] || die "fresh clone, $rev: not clean"
	git -C "$F" show "$rev:art/pic1.bin" | grep -q '^version https://git-lfs' ||
		die "fresh clone, $rev: art/pic1.bin is not an LFS pointer"
done
info "a fresh clone: main, feature, v1, v2 check out byte-identical, git lfs fsck clean"
EOF

test_case "the teammate follows with migrate remap" <<'EOF'
(cd "$T" && git fetch -q --force origin '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*') ||
	die "the teammate's fetch failed"
cp "$C/.git/migrate/commit-map" "$SCRATCH/commit-map"
(cd "$T" && run_migrate remap --commit-map "$SCRATCH/commit-map" >/dev/null 2>"$SCRATCH/remap.err") ||
	{ cat "$SCRATCH/remap.err"; die "remap failed"; }
for b in main side; do
	[ "$(git -C "$T" rev-parse "$b~1")" = "$(git -C "$T" rev-parse origin/main)" ] ||
		die "the teammate's $b is not on the new history"
	[ "$(git -C "$T" log -1 --format=%s "$b")" = "teammate's work" ] || die "the teammate's commit on $b is gone"
done
if grep -E '^(fatal|error|warning):' "$SCRATCH/remap.err"; then
	die "remap succeeded but showed git's own complaints"
fi
info "the teammate's local commits (HEAD's branch and another) follow onto the new history with migrate remap"
EOF

test_case "migrate remap outside a clone's work tree says so in our words" <<'EOF'
mkdir -p "$SCRATCH/nowhere"
GIT_CEILING_DIRECTORIES="$SCRATCH" expect_refusal --one-message --in "$SCRATCH/nowhere" \
	--says 'is not a git repository' -- "$MIGRATE" remap --commit-map "$SCRATCH/commit-map"
expect_refusal --one-message --in "$SERVER" --says 'has no work tree here' \
	-- "$MIGRATE" remap --commit-map "$SCRATCH/commit-map"
info "outside a repository and in a bare one: one message of ours, no git 'fatal:'"
EOF

test_done
