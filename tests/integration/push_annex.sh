#!/usr/bin/env bash
# push_annex.sh - `migrate push` after a run with annex rules publishes the
# git-annex content too (issue 27, item 1): to a server that is a
# git-annex repository (`git annex init` in the bare repository), the keys
# and the git-annex branch go up before the refs, and a fresh clone gets
# every file byte-identical with `git annex get`; a server git-annex
# cannot store in is refused before any ref moves, naming it.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

P="$SCRATCH/project"
git init -q "$P"
(
	cd "$P"
	for i in 1 2 3; do
		printf 'release %s\n' "$i" >>notes.txt
		python3 -c "import os,sys; sys.stdout.buffer.write(os.urandom(2000 + 31 * $i))" >"pic$i.bin"
		git add -A && git commit -qm "release $i"
	done
	git branch feature HEAD~1
)
printf '*.bin annex\n' >"$SCRATCH/rules"

# publish SERVER: a clone of SERVER converted in place, then migrate push
publish() {
	local server="$1" clone="$2"
	git clone -q "file://$server" "$clone"
	git -C "$clone" branch -q feature origin/feature
	run_migrate run -q --rules "$SCRATCH/rules" --repo "$clone" --in-place 2>/dev/null ||
		die "the run in $clone failed"
}

test_case "an annex server: keys, git-annex branch and refs pushed; a fresh clone gets every file" <<'EOF'
# --- a server that is a git-annex repository ---------------------------------
S="$SCRATCH/server.git"
git clone -q --bare "$P" "$S"
(cd "$S" && git annex init -q server >/dev/null 2>&1) || die "git annex init on the server"
publish "$S" "$SCRATCH/clone"
run_migrate push --repo "$SCRATCH/clone" >/dev/null 2>"$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "migrate push to an annex server failed"; }
for b in main feature; do
	[ "$(git -C "$S" rev-parse "$b")" = "$(git -C "$SCRATCH/clone" rev-parse "origin/$b")" ] ||
		die "the server's $b is not the new history's"
done
n=$(find "$S/annex/objects" -type f | wc -l)
[ "$n" = 3 ] || die "the server holds $n git-annex keys, not 3"
F="$SCRATCH/fresh"
git clone -q "file://$S" "$F"
(cd "$F" && git annex get . >/dev/null 2>&1) || die "git annex get in a fresh clone failed"
for i in 1 2 3; do
	cmp -s "$F/pic$i.bin" "$P/pic$i.bin" || die "fresh clone: pic$i.bin differs"
done
(cd "$F" && git annex fsck --quiet >/dev/null 2>&1) || die "git annex fsck in the fresh clone"
info "an annex server: refs, $n keys and the git-annex branch pushed; a fresh clone gets every file back"
EOF

test_case "a server without git-annex: refused before any branch moves" <<'EOF'
# --- a server git-annex cannot store in: refused before any ref moves -----------
S2="$SCRATCH/plain.git"
git clone -q --bare "$P" "$S2"
publish "$S2" "$SCRATCH/clone2"
git -C "$S2" for-each-ref >"$SCRATCH/s2.before"
rc=0
"$MIGRATE" push --repo "$SCRATCH/clone2" >/dev/null 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "a server without git-annex: exit $rc, not 3"; }
grep -q "uploading the git-annex content to origin (nothing was pushed; is it a git-annex repository?" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "a server without git-annex: unclear message"; }
git -C "$S2" for-each-ref | grep -v ' refs/heads/synced/\| refs/heads/git-annex$' |
	diff -u <(grep -v ' refs/heads/git-annex$' "$SCRATCH/s2.before") - ||
	die "a refused push moved the server's branches"
info "a server without git-annex: refused before any branch moved ($(head -1 "$SCRATCH/err" | cut -c1-90)...)"
EOF

test_done
