#!/usr/bin/env bash
# lfs_pointer_oracle.sh - git-lfs is the oracle for pointerize/ (docs/FORMATS.md
# §7):
#   1. pointer bytes: ours == `git lfs pointer --file=F` for a set of files;
#   2. recognition: ptr_is_lfs_pointer == `git lfs pointer --check --strict`
#      (0 canonical, 2 valid but not canonical, 1 not a pointer);
#   3. the store: objects put into a real repository's .git/lfs/objects
#      with our pointers committed pass `git lfs fsck`, and a fresh
#      checkout smudges back the original bytes.
# Needs git, git-lfs and the ptr_probe CMake builds beside migrate
# ($(dirname "$MIGRATE")/ptr_probe, with MIGRATE_TESTS on; PTR_PROBE names
# another). A case fails on any mismatch, after saying every one it found.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

probe="${PTR_PROBE:-$(dirname "$MIGRATE")/ptr_probe}"
[ -x "$probe" ] || {
	printf 'FAIL: no %s: cmake --build %s --target ptr_probe\n' "$probe" "$(dirname "$MIGRATE")" >&2
	exit 1
}
tmp="$SCRATCH"
# the store's objects may be read-only
trap 'chmod -R u+w "$tmp" 2>/dev/null || true; cleanup_scratch' EXIT

# fail WHAT: one mismatch, said; a case with any fails when it ends
# (check_fails)
fails=0
fail() {
	printf 'FAIL: %s\n' "$*" >&2
	fails=$((fails + 1))
}
check_fails() {
	[ "$fails" -eq 0 ] || die "$fails failure(s)"
}

# git and git-lfs must not see the caller's configuration.
export HOME="$tmp/home"
mkdir -p "$HOME"
export GIT_CONFIG_NOSYSTEM=1
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE
export LC_ALL=C
export GIT_AUTHOR_NAME=Oracle GIT_AUTHOR_EMAIL=oracle@example.org
export GIT_COMMITTER_NAME=Oracle GIT_COMMITTER_EMAIL=oracle@example.org
git config --global init.defaultBranch main
git config --global advice.detachedHead false
git lfs install --skip-repo >/dev/null

# ---- 1. pointer bytes ----

files="$tmp/files"
mkdir -p "$files"
: >"$files/empty.bin"
printf 'x' >"$files/one.bin"
printf 'hello lfs\n' >"$files/hello.bin"
head -c 3000017 /dev/urandom >"$files/random.bin"
head -c 1048576 /dev/urandom >"$files/exactly 1 MiB.bin" # the put buffer
printf 'some text\nwith spaces in its name\n' >"$files/with spaces.bin"
# A file that is itself a pointer: its pointer is that of its bytes.
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 10\n' \
	4859402c258b836d02e955d1090e29f586e58b2040504d68afec3d8d43757bba \
	>"$files/pointer-text.bin"

test_case "our pointer bytes are git lfs pointer's for every file, and the documented example's (127 bytes, blob f9540322)" <<'EOF'
npointer=0
for f in "$files"/*; do
	git lfs pointer --file="$f" >"$tmp/want" 2>/dev/null
	"$probe" "$f" >"$tmp/got"
	if cmp -s "$tmp/want" "$tmp/got"; then
		npointer=$((npointer + 1))
	else
		fail "pointer bytes differ for '${f##*/}'"
		diff <(od -c "$tmp/want") <(od -c "$tmp/got") >&2 || true
	fi
done
# The documented example (docs/FORMATS.md §7): 127 bytes, blob f9540322....
"$probe" "$files/hello.bin" >"$tmp/hello.ptr"
[ "$(wc -c <"$tmp/hello.ptr")" -eq 127 ] || fail "hello pointer is not 127 bytes"
[ "$(git hash-object --no-filters "$tmp/hello.ptr")" = \
	f9540322dcfdbb08b8d0272a814c12d231c26848 ] || fail "hello pointer blob id"
echo "pointer bytes: $npointer/$(find "$files" -type f | wc -l) match git lfs pointer"
check_fails
EOF

# ---- 2. pointer recognition ----

H=4859402c258b836d02e955d1090e29f586e58b2040504d68afec3d8d43757bba
E=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
V='version https://git-lfs.github.com/spec/v1\n'
O="oid sha256:$H\\n"
cases=(
	"" "\\n" " " "hello lfs\\n" "$V"
	"$V${O}size 10\\n"
	"$V${O}size 10" "$V${O}size 10\\n\\n" "  $V${O}size 10\\n"
	"version https://git-lfs.github.com/spec/v1\\r\\noid sha256:$H\\r\\nsize 10\\r\\n"
	"$V\\n${O}size 10\\n" "$V${O}size +10\\n" "$V${O}size 010\\n"
	"$V${O}size -0\\n" "$V${O}size 0\\n" "$V${O}size -1\\n"
	"$V${O}size 1x\\n" "$V${O}size \\n" "$V${O}size\\n"
	"$V${O}size 9223372036854775807\\n" "$V${O}size 9223372036854775808\\n"
	"version https://hawser.github.com/spec/v1\\n${O}size 10\\n"
	"version http://git-media.io/v/2\\n${O}size 10\\n"
	"version https://git-lfs.github.com/spec/v2\\n${O}size 10\\n"
	"version  https://git-lfs.github.com/spec/v1\\n${O}size 10\\n"
	"${O}${V}size 10\\n" "$V${O}" "$V${O}size 10\\nextra line\\n"
	"$V${O}size 10\\nx"
	"${V}oid sha256:${H^^}\\nsize 10\\n"
	"${V}oid sha256:4859402c\\nsize 10\\n"
	"${V}oid sha1:$H\\nsize 10\\n"
	"${V}oid  sha256:$H\\nsize 10\\n"
	"${V}oid sha256:$H\\r\\r\\nsize 10\\n"
	"$V${O}size 10\\r\\r\\n"
	"$V${O}size 10\\n\\xc2\\xa0" "$V${O}size 10\\n\\xe3\\x80\\x80"
	"\\xc2\\x85$V${O}size 10\\n" "$V${O}size 10\\n\\t\\v\\f "
	"${V}ext-0-foo sha256:$E\\next-1-bar sha256:$E\\n${O}size 10\\n"
	"${V}ext-1-bar sha256:$E\\next-0-foo sha256:$E\\n${O}size 10\\n"
	"ext-0-foo sha256:$E\\n$V${O}size 10\\n"
	"${V}ext-0-foo junk\\next-0-foo sha256:$E\\n${O}size 10\\n"
	"${V}ext-0-foo sha256:$E\\next-0-bar sha256:$E\\n${O}size 10\\n"
	"${V}ext-0-foo junk\\n${O}size 10\\n"
	"${V}ext-10-foo sha256:$E\\n${O}size 10\\n"
	"${V}ext-0- sha256:$E\\n${O}size 10\\n"
	"${V}foo bar\\n${O}size 10\\n"
	"$V${O}size 10\\next-0-foo sha256:$E\\n"
)
# Two more oracles. The clean filter (what `git add` and `git lfs migrate
# import` run) passes a pointer through unchanged: for each case, "git-lfs
# kept the bytes" must equal "we say pointer". And `git lfs ls-files`
# lists a committed blob only if git-lfs's blob scanner takes it for a
# pointer (DecodePointerFromBlob: under 1024 bytes).
recog="$tmp/recog"
git init -q "$recog"
printf '*.bin filter=lfs diff=lfs merge=lfs -text\n' >"$recog/.gitattributes"

test_case "recognition agrees with git lfs pointer --check --strict and with the clean filter on every case" <<'EOF'
nstrict=0 nclean=0 i=0
for c in "${cases[@]}"; do
	printf '%b' "$c" >"$tmp/case"
	want=0 got=0
	"$probe" --check "$tmp/case" || got=$?
	git lfs pointer --check --strict --file="$tmp/case" >/dev/null 2>&1 || want=$?
	if [ "$want" = "$got" ]; then
		nstrict=$((nstrict + 1))
	else
		fail "check case $i ($(printf '%q' "$c")): git-lfs $want, ours $got"
	fi
	raw="$(git -C "$recog" hash-object --no-filters "$tmp/case")"
	cleaned="$(git -C "$recog" hash-object --path=case.bin "$tmp/case")"
	if [ "$raw" = "$cleaned" ] && [ "$got" != 1 ]; then
		nclean=$((nclean + 1))
	elif [ "$raw" != "$cleaned" ] && [ "$got" = 1 ]; then
		nclean=$((nclean + 1))
	else
		fail "clean filter disagrees on case $i ($(printf '%q' "$c")): ours $got"
	fi
	i=$((i + 1))
done
echo "pointer recognition: $nstrict/$i agree with git lfs pointer --check --strict"
echo "pointer recognition: $nclean/$i agree with the clean filter (pointer kept as is)"
check_fails
EOF

test_case "around the 1024-byte cutoff, the pointers are the blobs git lfs ls-files lists" <<'EOF'
# Around the 1024-byte cutoff (a pointer padded with LFs) the blob rule
# counts: `git lfs pointer --check --file` decodes only the first 1024
# bytes of a file, and the clean filter converts anything of 512 bytes or
# more, but blobs in history are pointers exactly when ls-files says so.
: >"$tmp/recog-ours"
for n in 127 511 512 1023 1024 1100; do
	{ printf '%b' "$V${O}size 10\\n"; head -c $((n - 127)) /dev/zero | tr '\0' '\n'; } >"$tmp/case"
	[ "$(wc -c <"$tmp/case")" -eq "$n" ] || fail "padded case is not $n bytes"
	blob="$(git -C "$recog" hash-object -w --no-filters "$tmp/case")"
	git -C "$recog" update-index --add --cacheinfo 100644 "$blob" "pad$n.bin"
	got=0
	"$probe" --check "$tmp/case" || got=$?
	[ "$got" = 1 ] || echo "pad$n.bin" >>"$tmp/recog-ours"
done
git -C "$recog" commit -q -m padded
git -C "$recog" lfs ls-files -n | sort >"$tmp/recog-lfs"
sort -o "$tmp/recog-ours" "$tmp/recog-ours"
if cmp -s "$tmp/recog-lfs" "$tmp/recog-ours"; then
	echo "pointer recognition: padded to 127..1100 bytes, pointers $(tr '\n' ' ' <"$tmp/recog-ours")as git lfs ls-files says"
else
	fail "padded pointers: ls-files $(tr '\n' ' ' <"$tmp/recog-lfs"), ours $(tr '\n' ' ' <"$tmp/recog-ours")"
fi
check_fails
EOF

# ---- 3. a real repository: store, fsck, smudge ----

repo="$tmp/repo"
test_case "our pointers and store in a real repository: a second put changes nothing, no temp file left" <<'EOF'
git init -q "$repo"
printf '*.bin filter=lfs diff=lfs merge=lfs -text\n' >"$repo/.gitattributes"
git -C "$repo" add .gitattributes
# Our pointers are staged as they are (--no-filters): the clean filter
# must not get a say in what is committed.
for f in "$files"/*; do
	name="${f##*/}"
	"$probe" --store "$repo/.git/lfs/objects" "$f" >"$tmp/ptr"
	blob="$(git -C "$repo" hash-object -w --no-filters "$tmp/ptr")"
	git -C "$repo" update-index --add --cacheinfo 100644 "$blob" "$name"
done
# Putting everything a second time must change nothing (dedup).
find "$repo/.git/lfs/objects" -type f -exec ls -li --time-style=+%s.%N {} + |
	sort >"$tmp/objs.before"
for f in "$files"/*; do
	"$probe" --store "$repo/.git/lfs/objects" "$f" >/dev/null
done
find "$repo/.git/lfs/objects" -type f -exec ls -li --time-style=+%s.%N {} + |
	sort >"$tmp/objs.after"
cmp -s "$tmp/objs.before" "$tmp/objs.after" || fail "a second put changed the store"
[ -z "$(ls -A "$repo/.git/lfs/objects/tmp")" ] || fail "temp files left in the store"
git -C "$repo" commit -q -m "pointers written by ptr_probe"
check_fails
EOF

# the cases below judge the repository the case above made
test_case "git lfs ls-files lists every pointer, and git lfs fsck (and --pointers) passes" <<'EOF'
git -C "$repo" lfs ls-files -n | sort >"$tmp/lsfiles"
(cd "$files" && find . -type f ! -name empty.bin | sed 's|^\./||' | sort) >"$tmp/expect-ls"
cmp -s "$tmp/lsfiles" "$tmp/expect-ls" || fail "git lfs ls-files does not list every pointer"

if git -C "$repo" lfs fsck >"$tmp/fsck.out" 2>&1; then
	echo "git lfs fsck: ok ($(tr '\n' ' ' <"$tmp/fsck.out"))"
else
	fail "git lfs fsck failed: $(cat "$tmp/fsck.out")"
fi
git -C "$repo" lfs fsck --pointers >/dev/null 2>&1 || fail "git lfs fsck --pointers failed"
check_fails
EOF

test_case "fresh checkouts (a worktree, a file:// clone) smudge back the original bytes" <<'EOF'
# Fresh checkouts smudge back the original bytes: a new worktree, and a
# clone that fetches the objects over file://.
git -C "$repo" worktree add -q "$tmp/wt" HEAD
git clone -q "file://$repo" "$tmp/clone" 2>"$tmp/clone.err" ||
	fail "clone failed: $(cat "$tmp/clone.err")"
nsmudge=0
for f in "$files"/*; do
	name="${f##*/}"
	for co in "$tmp/wt" "$tmp/clone"; do
		if cmp -s "$f" "$co/$name"; then
			nsmudge=$((nsmudge + 1))
		else
			fail "checkout in ${co##*/} of '$name' differs from the original"
		fi
	done
done
echo "smudged checkouts: $nsmudge/$((2 * $(find "$files" -type f | wc -l))) files identical"
check_fails
EOF

test_case "negative control: git lfs fsck notices a corrupt object" <<'EOF'
# Negative control: fsck must notice a corrupt object, or it proves nothing.
obj="$repo/.git/lfs/objects/48/59/$H"
chmod u+w "$obj"
printf 'hello LFS\n' >"$obj"
if git -C "$repo" lfs fsck >/dev/null 2>&1; then
	fail "git lfs fsck did not notice a corrupt object"
fi
check_fails
EOF

test_done
