#!/usr/bin/env bash
# run_last_mile.sh - what comes around a correct `migrate run` in an
# ordinary clone (issue 27): nothing the user did is lost, nothing the run
# made is thrown away, an interruption says what is left.
#
# - --restart in a clone (refs/remotes/origin/HEAD is a symbolic ref):
#   converts again; the symbolic ref still names its branch, no
#   "multiple updates" from update-ref.
# - An edit made in the work tree while an in-place run works: the run
#   stops before any ref moves, names the file, and the file keeps the
#   edit (git's reference-transaction hook of the side repository, where
#   fast-import writes, makes the edit mid-run).
# - A --to run whose final `git repack -a -d` fails: the new history is
#   kept in NEWDIR (it was deleted), the message says where.
# - SIGINT while the run works: one line saying nothing moved and what the
#   next run does, exit 130; the next run finishes the conversion.
# - A run killed while its refs move, rolled back: refs and reports as
#   before it.
# - No rules: refused before anything is written (a run that converted
#   nothing kept its empty rules, and the real run was then refused);
#   --allow-no-rules runs it.
# - --undo: a finished in-place run taken back (every ref, the work tree),
#   refused when a ref moved since; --to says what to delete.
# - git-annex --to: the work tree is clean after the first run and after
#   an incremental one (a file of the second run was a staged deletion).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

# --- a server and an ordinary clone of it ---------------------------------
SERVER="$SCRATCH/server.git"
W="$SCRATCH/work"
git init -q "$W"
(
	cd "$W"
	for i in 1 2 3 4; do
		printf 'line %s\n' "$i" >>notes.txt
		head -c $((2000 * i)) /dev/zero | tr '\0' "$i" >"art$i.bin"
		git add -A && git commit -qm "commit $i"
	done
	git branch feature HEAD~1
	git tag v1 HEAD~2
)
git clone -q --bare "$W" "$SERVER"
printf '*.bin lfs\n' >"$SCRATCH/rules"

test_case "--restart in an ordinary clone" <<'EOF'
C="$SCRATCH/clone"
git clone -q "file://$SERVER" "$C"
git -C "$C" branch -q feature origin/feature
[ "$(git -C "$C" symbolic-ref refs/remotes/origin/HEAD)" = refs/remotes/origin/main ] ||
	die "the clone has no symbolic origin/HEAD"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$C" --in-place || die "the first run failed"
first=$(git -C "$C" rev-parse main)
printf '*.bin lfs\nnotes.txt lfs\n' >"$SCRATCH/rules2"
run_migrate run -q --rules "$SCRATCH/rules2" --repo "$C" --in-place --restart 2>"$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "--restart in an ordinary clone failed"; }
[ "$(git -C "$C" rev-parse main)" != "$first" ] || die "--restart did not convert again"
git -C "$C" show main:notes.txt | grep -q '^version https://git-lfs' ||
	die "--restart: notes.txt is not a pointer under the new rules"
[ "$(git -C "$C" symbolic-ref refs/remotes/origin/HEAD)" = refs/remotes/origin/main ] ||
	die "--restart: origin/HEAD is no longer a symbolic ref to origin/main"
[ "$(git -C "$C" rev-parse origin/HEAD)" = "$(git -C "$C" rev-parse origin/main)" ] ||
	die "--restart: origin/HEAD and origin/main differ"
git -C "$C" for-each-ref --format='%(refname)' refs/migrate/original/ |
	grep -q 'origin/HEAD' && die "a symbolic ref got a backup"
info "--restart in an ordinary clone: converted again, origin/HEAD still names origin/main"
EOF

test_case "an edit made while the run works" <<'EOF'
E="$SCRATCH/edit"
git clone -q "file://$SERVER" "$E"
refs_of "$E" >"$SCRATCH/e.refs"
mid_run_hook "echo 'my edit' >>'$E/notes.txt'"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$E" --in-place 2>"$SCRATCH/err" || rc=$?
no_hook
[ -e "$SCRATCH/hook.done" ] || die "the hook did not run during the run"
[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "an edit during the run: exit $rc, not 1"; }
grep -q "notes.txt in .* changed while the run worked; nothing was changed" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "an edit during the run: unclear message"; }
[ "$(tail -1 "$E/notes.txt")" = "my edit" ] || die "the edit made during the run is gone"
diff -u "$SCRATCH/e.refs" <(refs_of "$E") || die "refs moved although the work tree changed"
[ ! -e "$E/.git/migrate/journal" ] || die "a journal was left"
git -C "$E" checkout -q -- notes.txt
run_migrate run -q --rules "$SCRATCH/rules" --repo "$E" --in-place || die "the run after the edit failed"
info "an edit during an in-place run: $(sed "s|$SCRATCH|…|" "$SCRATCH/err" | head -1)"
EOF
no_hook

test_case "a --to run whose final repack fails" <<'EOF'
# repack.writeBitmaps is read by `git repack` only: an invalid value makes
# it fail after the refs moved, and nothing else.
git config --global repack.writeBitmaps maybe
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$W" --to "$SCRATCH/new" 2>"$SCRATCH/err" || rc=$?
git config --global --unset repack.writeBitmaps
[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "a failing repack: exit $rc, not 3"; }
grep -q "the new history is in $SCRATCH/new" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "a failing repack: the message does not say where the result is"; }
[ -d "$SCRATCH/new/.git" ] || die "a failing repack deleted the result"
git -C "$SCRATCH/new" show main:art1.bin | grep -q '^version https://git-lfs' ||
	die "the kept result is not the conversion"
[ "$(git -C "$SCRATCH/new" rev-parse main)" = "$(awk '$3 == "refs/heads/main" {print $2}' "$SCRATCH/new/.git/migrate/ref-map")" ] ||
	die "the kept result's main is not the ref map's"
git -C "$SCRATCH/new" repack -a -d -q && rm "$SCRATCH/new/.git/objects/info/alternates"
git -C "$SCRATCH/new" fsck --no-progress --strict >/dev/null 2>&1 || die "the kept result is not whole after the repack the message asks for"
info "a failing repack after the refs moved: the result stays in NEWDIR, as the message says"
EOF
git config --global --unset repack.writeBitmaps || true

test_case "SIGINT while the run works" <<'EOF'
I="$SCRATCH/int"
git clone -q "file://$SERVER" "$I"
refs_of "$I" >"$SCRATCH/i.refs"
mid_run_hook "kill -INT \$(cat '$SCRATCH/run.pid')"
rc=0
# a background job of a script starts with SIGINT ignored (and migrate
# leaves an ignored signal ignored): python gives it back its default
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' \
	"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$I" --in-place 2>"$SCRATCH/err" &
echo $! >"$SCRATCH/run.pid"
wait $! || rc=$?
no_hook
[ -e "$SCRATCH/hook.done" ] || die "the hook did not run during the run"
[ "$rc" = 130 ] || { cat "$SCRATCH/err" >&2; die "SIGINT: exit $rc, not 130"; }
grep -q "interrupted before any ref moved: .* is as it was; the next \`migrate run\` removes what this one left" \
	"$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "SIGINT: no word of what is left"; }
diff -u "$SCRATCH/i.refs" <(refs_of "$I") || die "SIGINT: refs moved"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$I" --in-place || die "the run after SIGINT failed"
git -C "$I" show main:art1.bin | grep -q '^version https://git-lfs' || die "the run after SIGINT did not convert"
info "SIGINT during a run: $(grep interrupted "$SCRATCH/err" | sed "s|$SCRATCH|…|")"
EOF
no_hook

test_case "a rolled-back run takes its reports back with it" <<'EOF'
# A second run is killed (SIGKILL) while its refs move: git's
# reference-transaction hook of the repository kills migrate when the
# transaction that moves main is prepared; the journal is left, and
# --rollback must give back the refs and the first run's reports.
B="$SCRATCH/rollback"
git clone -q "file://$SERVER" "$B"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$B" --in-place || die "rollback: the first run failed"
cp "$B/.git/migrate/report.txt" "$SCRATCH/report.first"
cp "$B/.git/migrate/report.json" "$SCRATCH/json.first"
( cd "$B" && head -c 5000 /dev/zero | tr '\0' 9 >art9.bin && git add art9.bin && git commit -qm "commit 9" )
refs_of "$B" >"$SCRATCH/b.refs"
rm -rf "$SCRATCH/hooks" "$SCRATCH/hook.done"
mkdir -p "$SCRATCH/hooks"
cat >"$SCRATCH/hooks/reference-transaction" <<HOOK
#!/bin/sh
[ "\$(git rev-parse --absolute-git-dir)" = "$B/.git" ] || exit 0
[ "\$1" = prepared ] || exit 0
grep -q ' refs/heads/main\$' || exit 0
[ -e "$SCRATCH/hook.done" ] && exit 0
: >"$SCRATCH/hook.done"
kill -KILL \$(cat "$SCRATCH/run.pid")
exit 1
HOOK
chmod +x "$SCRATCH/hooks/reference-transaction"
git config --global core.hooksPath "$SCRATCH/hooks"
rc=0
"$MIGRATE" run -q --rules "$SCRATCH/rules" --repo "$B" --in-place 2>"$SCRATCH/err" &
echo $! >"$SCRATCH/run.pid"
wait $! || rc=$?
no_hook
[ "$rc" = 137 ] || { cat "$SCRATCH/err" >&2; die "rollback: the second run was not killed (exit $rc)"; }
[ -e "$B/.git/migrate/journal" ] || die "rollback: no journal left by the killed run"
run_migrate run -q --repo "$B" --in-place --rollback || die "--rollback failed"
diff -u "$SCRATCH/b.refs" <(refs_of "$B") || die "--rollback: the refs are not those before the run"
cmp -s "$SCRATCH/report.first" "$B/.git/migrate/report.txt" || die "--rollback: report.txt is the rolled-back run's"
cmp -s "$SCRATCH/json.first" "$B/.git/migrate/report.json" || die "--rollback: report.json is the rolled-back run's"
output_has '\.new$' -- ls "$B/.git/migrate/" && die "--rollback: working copies left"
info "--rollback of a run killed while its refs moved: refs and reports as before it"
EOF
no_hook

test_case "no rules: refused before anything is written" <<'EOF'
N="$SCRATCH/norules"
git clone -q "file://$SERVER" "$N"
refs_of "$N" >"$SCRATCH/n.refs"
for where in "--in-place" "--to $SCRATCH/norules-new" "--in-place --dry-run"; do
	rc=0
	# shellcheck disable=SC2086
	"$MIGRATE" run -q --repo "$N" $where 2>"$SCRATCH/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "no rules ($where): exit $rc, not 1"; }
	grep -q "no rules: say what to convert with --rules FILE" "$SCRATCH/err" ||
		{ cat "$SCRATCH/err" >&2; die "no rules ($where): unclear message"; }
done
[ ! -e "$N/.git/migrate" ] || die "no rules: a state folder was written"
[ ! -e "$SCRATCH/norules-new" ] || die "no rules: the --to target was made"
diff -u "$SCRATCH/n.refs" <(refs_of "$N") || die "no rules: refs moved"
run_migrate run -q --repo "$N" --in-place --allow-no-rules || die "--allow-no-rules failed"
[ -s "$N/.git/migrate/commit-map" ] || die "--allow-no-rules: no commit map"
printf '*.bin lfs\n*.wav lfs\n' >"$SCRATCH/rules.wav"
run_migrate run --rules "$SCRATCH/rules.wav" --repo "$N" --to "$SCRATCH/norules-new" 2>"$SCRATCH/err" ||
	die "no rules: the run with rules after the refusal failed"
grep -q "warning: 1 rule(s) matched no file in the commits of this run: .*rules.wav:2 \*.wav" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "a rule that matched nothing: no warning"; }
info "no rules: refused before anything is written; --allow-no-rules writes only the maps; a rule that matches nothing is warned of"
EOF

test_case "--undo: a finished in-place run taken back" <<'EOF'
U="$SCRATCH/undo"
git clone -q "file://$SERVER" "$U"
git -C "$U" branch -q feature origin/feature
refs_of "$U" >"$SCRATCH/u.before"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$U" --in-place || die "undo: the run failed"
refs_of "$U" | grep -v ' refs/migrate/' >"$SCRATCH/u.converted"
# a commit made on the converted history since: refused by name, nothing moved
( cd "$U" && echo more >>notes.txt && git commit -qam "after the run" )
refs_of "$U" >"$SCRATCH/u.moved"
rc=0
"$MIGRATE" run -q --repo "$U" --in-place --undo 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || { cat "$SCRATCH/err" >&2; die "--undo over a moved ref: exit $rc, not 1"; }
grep -q "refs/heads/main is not the conversion of its backup any more (it moved since the run" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "--undo over a moved ref: the ref is not named"; }
diff -u "$SCRATCH/u.moved" <(refs_of "$U") || die "a refused --undo moved refs"
git -C "$U" reset -q --hard HEAD~1
# the undo: every ref back, the backups gone, the files real again
run_migrate run -q --repo "$U" --in-place --undo || die "--undo failed"
diff -u "$SCRATCH/u.before" <(refs_of "$U") || die "--undo: the refs are not those before the run"
[ -z "$(git -C "$U" status --porcelain)" ] || die "--undo: the work tree is not clean"
cmp -s "$U/art1.bin" <(git -C "$W" show main:art1.bin) || die "--undo: art1.bin is not its content again"
[ -s "$U/.git/migrate/before-undo/commit-map" ] || die "--undo: the run's state was not kept"
[ ! -e "$U/.git/migrate/tips" ] || die "--undo: the next run would not start from the start"
run_migrate run -q --rules "$SCRATCH/rules" --repo "$U" --in-place || die "the run after --undo failed"
diff -u "$SCRATCH/u.converted" <(refs_of "$U" | grep -v ' refs/migrate/') ||
	die "the run after --undo differs from the first conversion"
rc=0
"$MIGRATE" run -q --repo "$W" --to "$SCRATCH/new" --undo 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] && grep -q "never wrote to its source; to take it back, delete $SCRATCH/new" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "--undo with --to: exit $rc, no word of what to delete"; }
info "--undo: refused over a ref moved since; then every ref back, backups gone, files real, the state kept, a new run equals the first"
EOF

test_case "git-annex: the work tree clean after every run, incremental too" <<'EOF'
A="$SCRATCH/annex-src"
git clone -q "file://$SERVER" "$A"
printf 'art*.bin annex\n' >"$SCRATCH/annex.rules"
run_migrate run -q --rules "$SCRATCH/annex.rules" --repo "$A" --to "$SCRATCH/annex-new" 2>"$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "annex --to failed"; }
[ -z "$(git -C "$SCRATCH/annex-new" status --porcelain)" ] ||
	die "annex --to: the work tree is not clean: $(git -C "$SCRATCH/annex-new" status --porcelain | head -3)"
( cd "$A" && head -c 4000 /dev/zero | tr '\0' 7 >art7.bin && git add art7.bin && git commit -qm "commit 7" )
run_migrate run -q --rules "$SCRATCH/annex.rules" --repo "$A" --to "$SCRATCH/annex-new" 2>"$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "annex --to, second run failed"; }
[ -z "$(git -C "$SCRATCH/annex-new" status --porcelain)" ] ||
	die "annex, second run: the work tree is not clean: $(git -C "$SCRATCH/annex-new" status --porcelain | head -3)"
cmp -s "$SCRATCH/annex-new/art7.bin" "$A/art7.bin" || die "annex, second run: art7.bin is not its content"
grep -q 'has local changes' "$SCRATCH/err" && die "annex, second run: the work tree was left behind"
info "git-annex --to: the work tree clean after the first run and after an incremental one (no staged deletion)"
EOF

test_done
