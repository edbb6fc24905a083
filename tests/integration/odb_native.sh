#!/usr/bin/env bash
# odb_native.sh - migrate's own object reader (rewrite/git/pack.c), judged
# by git: every object of the test histories, read through `migrate
# cat-object --object-reader=native`, equals `git cat-file --batch`'s bytes
#  - after `git repack -adf --depth=250 --window=250` (deep delta chains,
#    a 3 MB blob stored as a delta, a 2 MB one inflated in chunks),
#  - with loose objects only, with several packs plus loose objects, with
#    a multi-pack-index, through an alternate (and an alternate's own);
# a corrupt pack (a flipped byte, a truncated file) is an error naming it
# and nothing wrong is printed before it; what the reader does not read
# (an .idx of another version, a sha256 repository) goes to git cat-file
# with a one-line note under auto and is an error under native; and the
# filter writes the same stream, byte for byte, with either reader.
. "$(dirname "$0")/lib/lib.sh"

test_case "the histories: the tricky repository and one of deep chains" <<'EOF'
bash "$HERE/make_tricky_repo.sh" "$SCRATCH/tricky" >/dev/null 2>&1
python3 - "$SCRATCH/deep.fi" <<'PY'
import random, sys
r = random.Random(13)
big = bytearray(r.getrandbits(8) for _ in range(3 << 20))
rnd = bytes(r.getrandbits(8) for _ in range(2 << 20))
out = open(sys.argv[1], 'wb')
def blob(data):
    out.write(b'data %d\n' % len(data) + bytes(data) + b'\n')
lines = []
for i in range(300):
    lines.insert(r.randrange(len(lines) + 1), b'line %d %s\n' % (i, b'x' * r.randrange(40)))
    out.write(b'commit refs/heads/main\ncommitter T <t@x> %d +0000\n' % (1000000000 + i))
    out.write(b'data 3\nc%d\n' % (i % 10))
    out.write(b'M 100644 inline log.txt\n'); blob(b''.join(lines))
    if i % 50 == 0:
        big[r.randrange(len(big))] ^= 0xff
        out.write(b'M 100644 inline big.bin\n'); blob(big)
    if i == 7:
        out.write(b'M 100644 inline rand.bin\n'); blob(rnd)
out.close()
PY
git init -q "$SCRATCH/deep"
git -C "$SCRATCH/deep" fast-import --quiet <"$SCRATCH/deep.fi"

# compare REPO [READER]: every object of REPO (alternates included) read
# by migrate equals git's bytes
compare() {
	local repo="$1" reader="${2:-native}"
	git -C "$repo" cat-file --batch-all-objects --batch-check='%(objectname)' >"$SCRATCH/ids"
	[ -s "$SCRATCH/ids" ] || die "$repo: no objects"
	git -C "$repo" cat-file --batch <"$SCRATCH/ids" >"$SCRATCH/want"
	"$MIGRATE" cat-object --repo "$repo" --object-reader="$reader" \
		<"$SCRATCH/ids" >"$SCRATCH/got" 2>"$SCRATCH/err" ||
		{ cat "$SCRATCH/err" >&2; die "$repo: cat-object ($reader) failed"; }
	cmp -s "$SCRATCH/want" "$SCRATCH/got" || die "$repo: $reader differs from git cat-file"
	[ ! -s "$SCRATCH/err" ] || { cat "$SCRATCH/err" >&2; die "$repo: $reader said something"; }
	echo "$(wc -l <"$SCRATCH/ids")"
}

for r in tricky deep; do
	git -C "$SCRATCH/$r" repack -adfq --depth=250 --window=250
	n=$(compare "$SCRATCH/$r" native)
	n=$(compare "$SCRATCH/$r" auto)
	info "$r, repacked with --depth=250: $n objects equal git's"
done
depth=$(git -C "$SCRATCH/deep" verify-pack -v "$SCRATCH"/deep/.git/objects/pack/*.idx |
	sed -n 's/^chain length = \([0-9]*\):.*/\1/p' | sort -n | tail -1)
[ "$depth" -ge 100 ] || die "the deep history has chains of $depth only"
git -C "$SCRATCH/deep" verify-pack -v "$SCRATCH"/deep/.git/objects/pack/*.idx |
	awk '$2 == "blob" && NF >= 7 { print $1 }' |
	git -C "$SCRATCH/deep" cat-file --batch-check='%(objectsize)' |
	awk '$1 > 3000000 { d = 1 } END { exit !d }' ||
	die "the 3 MB blob is not stored as a delta"
info "the longest delta chain is $depth, a 3 MB blob is a delta"

# loose objects only
git init -q "$SCRATCH/loose"
git -C "$SCRATCH/loose" unpack-objects -q <"$(ls "$SCRATCH"/tricky/.git/objects/pack/*.pack)"
git -C "$SCRATCH/loose" unpack-objects -q <"$(ls "$SCRATCH"/deep/.git/objects/pack/*.pack)"
[ -z "$(ls "$SCRATCH/loose/.git/objects/pack")" ] || die "loose: has packs"
n=$(compare "$SCRATCH/loose")
info "loose only: $n objects equal git's"

# several packs and loose objects, then a multi-pack-index over them
git clone -q --no-local "$SCRATCH/tricky" "$SCRATCH/multi"
git -C "$SCRATCH/multi" fetch -q "$SCRATCH/deep" main:deep
( cd "$SCRATCH/multi" && for i in 1 2 3; do
	echo "more $i" >>more.txt && git add more.txt && git commit -qm "more $i"
done )
npacks=$(ls "$SCRATCH"/multi/.git/objects/pack/*.idx | wc -l)
[ "$npacks" -ge 2 ] || die "multi: $npacks pack(s)"
n=$(compare "$SCRATCH/multi")
info "$npacks packs and loose objects: $n objects equal git's"
git -C "$SCRATCH/multi" multi-pack-index write
[ -f "$SCRATCH/multi/.git/objects/pack/multi-pack-index" ] || die "no multi-pack-index"
git -C "$SCRATCH/multi" multi-pack-index verify
n=$(compare "$SCRATCH/multi")
info "with a multi-pack-index: $n objects equal git's"

# alternates: A borrows from multi, B from A (recursive)
git clone -q -s "$SCRATCH/multi" "$SCRATCH/alt"
( cd "$SCRATCH/alt" && echo alt >alt.txt && git add alt.txt && git commit -qm alt )
git clone -q -s "$SCRATCH/alt" "$SCRATCH/alt2"
( cd "$SCRATCH/alt2" && echo alt2 >alt2.txt && git add alt2.txt && git commit -qm alt2 )
[ -s "$SCRATCH/alt2/.git/objects/info/alternates" ] || die "no alternates"
n=$(compare "$SCRATCH/alt2")
info "through two alternates: $n objects equal git's"
EOF

test_case "what the reader does not read: git cat-file, with a note" <<'EOF'
cp -r "$SCRATCH/tricky" "$SCRATCH/v3"
idx=$(ls "$SCRATCH"/v3/.git/objects/pack/*.idx)
chmod u+w "$idx"
printf '\003' | dd of="$idx" bs=1 seek=7 conv=notrunc 2>/dev/null
git -C "$SCRATCH/tricky" cat-file --batch-all-objects --batch-check='%(objectname)' |
	head -20 >"$SCRATCH/ids"
git -C "$SCRATCH/tricky" cat-file --batch <"$SCRATCH/ids" >"$SCRATCH/want"
# git itself cannot read that pack any more: the objects are missing to it
"$MIGRATE" cat-object --repo "$SCRATCH/v3" <"$SCRATCH/ids" >"$SCRATCH/got" 2>"$SCRATCH/err" || true
grep -q "note: repository .*git cat-file (.*idx version 3 is not known)" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "no note for an .idx of version 3"; }
[ "$(grep -c note "$SCRATCH/err")" = 1 ] || die "more than one note"
rc=0
"$MIGRATE" cat-object --repo "$SCRATCH/v3" --object-reader=native \
	<"$SCRATCH/ids" >/dev/null 2>"$SCRATCH/err" || rc=$?
# repository data this reader cannot read is status 3, never 1 (usage)
[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "native, .idx version 3: exit $rc, not 3"; }
grep -q "idx version 3" "$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "native: no reason"; }
info "an .idx of version 3: a note under auto, an error under native (exit 3)"

# a truncated .idx is said to be truncated (not "another version"), with
# its name, status 3
cp -r "$SCRATCH/tricky" "$SCRATCH/short-idx"
idx=$(ls "$SCRATCH"/short-idx/.git/objects/pack/*.idx)
chmod u+w "$idx"
truncate -s 500 "$idx"
rc=0
"$MIGRATE" cat-object --repo "$SCRATCH/short-idx" --object-reader=native \
	<"$SCRATCH/ids" >/dev/null 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "truncated .idx: exit $rc, not 3"; }
grep -q "${idx##*/}: truncated .idx: 500 bytes" "$SCRATCH/err" ||
	{ cat "$SCRATCH/err" >&2; die "truncated .idx: unclear message"; }
info "a truncated .idx: $(head -1 "$SCRATCH/err" | sed 's/.*pack-[0-9a-f]*/pack-.../')"

git init -q --object-format=sha256 "$SCRATCH/sha256"
( cd "$SCRATCH/sha256" && echo a >a && git add a && git commit -qm a )
git -C "$SCRATCH/tricky" rev-parse HEAD >"$SCRATCH/ids"
"$MIGRATE" cat-object --repo "$SCRATCH/sha256" <"$SCRATCH/ids" >"$SCRATCH/got" 2>"$SCRATCH/err"
grep -q "note: .*object format sha256" "$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "sha256: no note"; }
grep -q "missing" "$SCRATCH/got" || die "sha256: git cat-file did not answer"
info "a sha256 repository: a note, then git cat-file's answer"
EOF

test_case "corrupt packs: an error naming the pack, nothing wrong before it" <<'EOF'
corrupt() {
	local what="$1" repo="$SCRATCH/c-$1"
	rm -rf "$repo"
	cp -r "$SCRATCH/deep" "$repo"
	pack=$(ls "$repo"/.git/objects/pack/*.pack)
	chmod u+w "$pack"
	size=$(stat -c %s "$pack")
	case "$what" in
	flip-*) off=$((size * ${what#flip-} / 100))
		b=$(od -An -tu1 -j "$off" -N1 "$pack" | tr -d ' ')
		printf "\\$(printf %03o $(((b + 1) % 256)))" |
			dd of="$pack" bs=1 seek="$off" conv=notrunc 2>/dev/null ;;
	truncated) truncate -s $((size / 2)) "$pack" ;;
	esac
	git -C "$SCRATCH/deep" cat-file --batch-all-objects --batch-check='%(objectname)' >"$SCRATCH/ids"
	git -C "$SCRATCH/deep" cat-file --batch <"$SCRATCH/ids" >"$SCRATCH/want"
	rc=0
	"$MIGRATE" cat-object --repo "$repo" --object-reader=native \
		<"$SCRATCH/ids" >"$SCRATCH/got" 2>"$SCRATCH/err" || rc=$?
	[ "$rc" = 3 ] || { cat "$SCRATCH/err" >&2; die "$what: exit $rc, not 3"; }
	grep -qE "corrupt|not as long|does not hash" "$SCRATCH/err" ||
		{ cat "$SCRATCH/err" >&2; die "$what: unclear message"; }
	grep -q "pack-" "$SCRATCH/err" || { cat "$SCRATCH/err" >&2; die "$what: the pack is not named"; }
	# every object that came out whole before the error is git's (one
	# streamed in chunks is checked at its end: it may stop short)
	python3 - "$SCRATCH/want" "$SCRATCH/got" <<'PY' || die "$what: wrong bytes before the error"
import sys
want, got = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
pos = 0
while True:
    nl = got.find(b'\n', pos)
    if nl < 0:
        break
    size = int(got[pos:nl].split()[2])
    end = nl + 1 + size + 1
    if end > len(got) or got[end - 1:end] != b'\n':
        break                      # the object the error stopped
    if want[pos:end] != got[pos:end]:
        print('object at byte %d differs' % pos)
        sys.exit(1)
    pos = end
PY
	echo "$(head -1 "$SCRATCH/err")"
}
for what in flip-20 flip-50 flip-90 truncated; do
	msg=$(corrupt "$what")
	info "corrupt pack ($what): $msg"
done
EOF

test_case "the filter: the same stream with either reader" <<'EOF'
cat >"$SCRATCH/rules" <<'R'
*.bin lfs
log.txt lfs
R
for r in tricky deep; do
	git -C "$SCRATCH/$r" fast-export --no-data "${EXPORT_FLAGS[@]}" --all >"$SCRATCH/$r.fe"
	for how in git:1 native:1 native:2 auto:2; do
		reader=${how%:*} threads=${how#*:}
		(cd "$SCRATCH/$r" && "$MIGRATE" --rules "$SCRATCH/rules" --object-reader=$reader \
			--threads="$threads" \
			--store "$SCRATCH/store-$how" --commit-map "$SCRATCH/map-$how" \
			<"$SCRATCH/$r.fe" >"$SCRATCH/$r.$how.out")
		[ "$how" = git:1 ] && continue
		cmp -s "$SCRATCH/$r.git:1.out" "$SCRATCH/$r.$how.out" || die "$r: the stream differs ($how)"
		cmp -s "$SCRATCH/map-git:1" "$SCRATCH/map-$how" || die "$r: the commit map differs ($how)"
		diff -r "$SCRATCH/store-git:1" "$SCRATCH/store-$how" >/dev/null || die "$r: the stores differ ($how)"
	done
done
info "the filter writes the same stream, map and store with git cat-file, the reader on one thread and on two (convert_ahead.sh: more)"
EOF
test_done
