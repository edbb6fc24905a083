#!/usr/bin/env bash
# convert_ahead.sh - conversion ahead of the stream (rewrite/blob/pool.c,
# issue 13): with --threads 2 and 4 the blobs that M lines further on will
# convert are read and stored by other threads, and the filter's output --
# the stream, the commit map, the LFS store, the messages -- is byte for
# byte what one thread writes, on a history where the same blob comes back
# in many commits, at other paths and on other branches, is renamed (R
# lines with fast-export -M), falls under a size condition on some
# versions only, is dropped by id, is empty, small, already a pointer, a
# symlink, or on a notes ref; in a dry run (no store at all); with a
# corrupt pack (the same single error, exit 3, nothing in the store); and
# with a stream that breaks after blobs further on were started (the
# same error; every temp file a worker made is removed: strace judges).
# replace-text (issue 29): the workers read the blobs a replace-text rule
# takes, the output is one thread's, and the summary line says the MB
# the other threads read ahead.
. "$(dirname "$0")/lib/lib.sh"

python3 - "$SCRATCH/h.fi" <<'PY'
import random, sys
r = random.Random(1313)
out = open(sys.argv[1], 'wb')
def data(b):
    out.write(b'data %d\n' % len(b) + b + b'\n')
def rnd(n):
    return bytes(r.getrandbits(8) for _ in range(n))
base = [rnd(r.randrange(300 << 10, 700 << 10)) for _ in range(6)]
pointer = (b'version https://git-lfs.github.com/spec/v1\n'
           b'oid sha256:' + b'ab' * 32 + b'\nsize 12345\n')
t = 1500000000
def commit(ref, msg, changes):
    global t
    t += 60
    out.write(b'commit %s\ncommitter T <t@x> %d +0000\n' % (ref, t))
    data(msg)
    for c in changes:
        out.write(c)
for i in range(30):
    ch = []
    k = i % 6
    if i % 5 != 4:            # a new version, near the last (a delta)
        v = bytearray(base[k]); v[r.randrange(len(v))] ^= 0xff; base[k] = bytes(v)
    ch.append(b'M 100644 inline assets/a%d.bin\n' % k); ch.append(base[k])
    # the same content again, elsewhere, and an old version coming back
    ch.append(b'M 100644 inline copies/c%d.bin\n' % (i % 3)); ch.append(base[(i + 2) % 6])
    # a size condition: converted from 100 KiB on only
    ch.append(b'M 100644 inline sized/s.dat\n'); ch.append(rnd((i % 4) * 60 << 10))
    if i == 3:
        ch += [b'M 100644 inline empty.bin\n', b'', b'M 100644 inline small.bin\n', rnd(700),
               b'M 100644 inline ptr.bin\n', pointer,
               b'M 120000 inline link.bin\n', b'assets/a0.bin',
               b'M 100644 inline .gitattributes\n', b'*.txt text\n',
               b'M 100644 inline "spaced name \\303\\251.bin"\n', rnd(40000)]
    flat = []
    for x in ch:
        if x.startswith(b'M '):
            flat.append(x)
        else:
            flat.append(b'data %d\n' % len(x) + x + b'\n')
    commit(b'refs/heads/main', b'c%d\n' % i, flat)
    if i == 10:
        commit(b'refs/heads/side', b'side\n', [b'from refs/heads/main\n',
               b'M 100644 inline side/s.bin\n', b'data %d\n' % len(base[1]) + base[1] + b'\n'])
    if i == 12:
        commit(b'refs/notes/extra', b'notes\n', [b'M 100644 inline n.bin\n',
               b'data %d\n' % len(base[2]) + base[2] + b'\n'])
out.close()
PY
git init -q "$SCRATCH/repo"
git -C "$SCRATCH/repo" fast-import --quiet <"$SCRATCH/h.fi"
# renames for fast-export -M: a .bin kept at a .bin, one moved to a .txt
( cd "$SCRATCH/repo" && git checkout -q main && mkdir -p moved &&
	git mv assets/a1.bin moved/a1.bin && git mv assets/a2.bin assets/a2.txt &&
	git commit -qm renames )
git -C "$SCRATCH/repo" repack -adfq --depth=50 --window=50
git -C "$SCRATCH/repo" verify-pack -v "$SCRATCH"/repo/.git/objects/pack/*.idx |
	awk '$2 == "blob" && NF >= 7 { print $1 }' |
	git -C "$SCRATCH/repo" cat-file --batch-check='%(objectsize)' |
	awk '$1 > 200000 { d = 1 } END { exit !d }' || die "no large blob is stored as a delta"

cat >"$SCRATCH/rules" <<'R'
*.bin            lfs
*.dat  size>=100KiB  lfs
R
# one converted blob dropped by its id wherever it is
git -C "$SCRATCH/repo" rev-parse main~20:copies/c1.bin >"$SCRATCH/strip"

# filter NAME STREAM THREADS [OPTIONS]: runs migrate in the repository; the
# output, commit map, store and stderr under SCRATCH/NAME.THREADS.*
filter() {
	local name="$1" fe="$2" t="$3" rc=0
	shift 3
	rm -rf "$SCRATCH/$name.$t.store"
	(cd "$SCRATCH/repo" && "$MIGRATE" --rules "$SCRATCH/rules" \
		--strip-blobs-with-ids "$SCRATCH/strip" --threads="$t" \
		--store "$SCRATCH/$name.$t.store" --commit-map "$SCRATCH/$name.$t.map" "$@" \
		<"$fe" >"$SCRATCH/$name.$t.out" 2>"$SCRATCH/$name.$t.err") || rc=$?
	echo "$rc" >"$SCRATCH/$name.$t.rc"
	sed -i "s|$SCRATCH/$name.$t.store|STORE|" "$SCRATCH/$name.$t.err"
}

# same NAME: threads 2 and 4 wrote what 1 wrote
same() {
	local t
	for t in 2 4; do
		cmp -s "$SCRATCH/$1.1.rc" "$SCRATCH/$1.$t.rc" || die "$1: exit status differs with $t threads"
		cmp -s "$SCRATCH/$1.1.out" "$SCRATCH/$1.$t.out" || die "$1: the stream differs with $t threads"
		cmp -s "$SCRATCH/$1.1.err" "$SCRATCH/$1.$t.err" || {
			diff "$SCRATCH/$1.1.err" "$SCRATCH/$1.$t.err" >&2; die "$1: the messages differ with $t threads"; }
		if [ -e "$SCRATCH/$1.1.map" ] || [ -e "$SCRATCH/$1.$t.map" ]; then
			cmp -s "$SCRATCH/$1.1.map" "$SCRATCH/$1.$t.map" || die "$1: the commit map differs with $t threads"
		fi
		if [ -e "$SCRATCH/$1.1.store" ] || [ -e "$SCRATCH/$1.$t.store" ]; then
			diff -r "$SCRATCH/$1.1.store" "$SCRATCH/$1.$t.store" >/dev/null ||
				die "$1: the store differs with $t threads"
		fi
	done
}

# no_objects DIR: a store with no object in it, and no temp file
no_objects() {
	[ ! -e "$1" ] && return 0
	[ -z "$(find "$1" -type f)" ] || { find "$1" -type f >&2; die "$1: files left in the store"; }
}

for export in plain renames; do
	flags=()
	[ "$export" = renames ] && flags=(-M)
	git -C "$SCRATCH/repo" fast-export --no-data "${EXPORT_FLAGS[@]}" "${flags[@]}" --all \
		>"$SCRATCH/$export.fe"
done
grep -q '^R ' "$SCRATCH/renames.fe" || die "the -M export has no R line"

# threads_agree EXPORT: the export through 1, 2 and 4 threads, the same
threads_agree() {
	local export="$1" t n
	for t in 1 2 4; do
		filter "$export" "$SCRATCH/$export.fe" "$t"
		[ "$(cat "$SCRATCH/$export.$t.rc")" = 0 ] || { cat "$SCRATCH/$export.$t.err" >&2; die "$export: failed"; }
	done
	same "$export"
	n=$(find "$SCRATCH/$export.1.store" -type f | wc -l)
	[ "$n" -ge 20 ] || die "$export: only $n objects stored"
	[ -z "$(ls -A "$SCRATCH/$export.4.store/tmp")" ] || die "$export: temp files left"
	info "$export export: $n objects; stream, map, store and messages equal on 1, 2 and 4 threads"
}

test_case "a plain export: stream, commit map, store and messages equal on 1, 2 and 4 threads" <<'EOF'
threads_agree plain
EOF

test_case "an export with renames (-M): stream, commit map, store and messages equal on 1, 2 and 4 threads" <<'EOF'
threads_agree renames
EOF

test_case "the 4-thread output has pointers where the rules say; the size condition and the id drop held (git judges)" <<'EOF'
# what each rule decided, judged on the result: git lfs sees the .bin
# files of main and side as pointers (the ids in the store), the .dat
# from 100 KiB on only, the notes ref's file as it was
git clone -q --mirror "$SCRATCH/repo" "$SCRATCH/imported"
git -C "$SCRATCH/imported" fast-import --quiet --force <"$SCRATCH/plain.4.out"
for spec in main:assets/a0.bin side:side/s.bin "main:spaced name é.bin"; do
	git -C "$SCRATCH/imported" cat-file -p "$spec" | grep -q '^oid sha256:' ||
		die "$spec is not a pointer"
done
output_has '^oid sha256:' -- git -C "$SCRATCH/imported" cat-file -p refs/notes/extra:n.bin &&
	die "the notes ref's file was converted"
for i in 0 1 2 3; do
	size=$(git -C "$SCRATCH/repo" cat-file -s "main~$((30 - i)):sized/s.dat")
	if output_has '^oid sha256:' -- git -C "$SCRATCH/imported" cat-file -p "main~$((30 - i)):sized/s.dat"; then
		[ "$size" -ge 102400 ] || die "s.dat of $size bytes converted"
	else
		[ "$size" -lt 102400 ] || die "s.dat of $size bytes not converted"
	fi
done
sha=$(git -C "$SCRATCH/repo" cat-file blob "$(cat "$SCRATCH/strip")" | sha256sum | cut -c1-64)
[ ! -e "$SCRATCH/plain.4.store/${sha:0:2}/${sha:2:2}/$sha" ] || die "the blob dropped by id was stored"
[ -e "$SCRATCH/plain.4.store/$(git -C "$SCRATCH/repo" cat-file blob main:assets/a0.bin | sha256sum |
	sed 's/^\(..\)\(..\)\([^ ]*\).*/\1\/\2\/\1\2\3/')" ] || die "main:assets/a0.bin was not stored"
info "pointers where the rules say, the size condition and the id drop held"
EOF

test_case "a dry run gives the real run's commit map on 1, 2 and 4 threads, and no store" <<'EOF'
for t in 1 2 4; do
	filter dry "$SCRATCH/plain.fe" "$t" --dry-run
	[ ! -e "$SCRATCH/dry.$t.store" ] || die "a dry run with $t threads made a store"
done
same dry
cmp -s "$SCRATCH/dry.1.map" "$SCRATCH/plain.1.map" || die "the dry run's commit map differs from the real one"
info "dry run: the real run's commit map on 1, 2 and 4 threads, no store"
EOF

test_case "a corrupt pack: the same single error on 1, 2 and 4 threads, exit 3, no done, nothing stored" <<'EOF'
# a corrupt pack: the same single error on every thread count, exit 3, no
# `done` (fast-import keeps nothing), nothing in the store
cp -r "$SCRATCH/repo" "$SCRATCH/good"
# the good copy back when the case ends, passed or not
trap 'rm -rf "$SCRATCH/repo"; mv "$SCRATCH/good" "$SCRATCH/repo"' EXIT
pack=$(ls "$SCRATCH"/repo/.git/objects/pack/*.pack)
chmod u+w "$pack"
off=$(($(stat -c %s "$pack") * 6 / 10))
b=$(od -An -tu1 -j "$off" -N1 "$pack" | tr -d ' ')
printf "\\$(printf %03o $(((b + 1) % 256)))" | dd of="$pack" bs=1 seek="$off" conv=notrunc 2>/dev/null
for t in 1 2 4; do
	filter corrupt "$SCRATCH/plain.fe" "$t"
	[ "$(cat "$SCRATCH/corrupt.$t.rc")" = 3 ] || { cat "$SCRATCH/corrupt.$t.err" >&2; die "corrupt: exit $(cat "$SCRATCH/corrupt.$t.rc") with $t threads"; }
	[ "$(wc -l <"$SCRATCH/corrupt.$t.err")" = 1 ] || { cat "$SCRATCH/corrupt.$t.err" >&2; die "corrupt: not one line"; }
	grep -q "pack-" "$SCRATCH/corrupt.$t.err" || die "corrupt: the pack is not named"
	tail -c 5 "$SCRATCH/corrupt.$t.out" | grep -q '^done$' && die "corrupt: the stream ends in done"
	no_objects "$SCRATCH/corrupt.$t.store"
done
same corrupt
info "corrupt pack: $(cat "$SCRATCH/corrupt.1.err")"
EOF

test_case "a stream that breaks after later blobs were started: the same error on 1, 2 and 4 threads, nothing stored" <<'EOF'
# a stream that breaks after the conversion of later blobs was started:
# the same error; no object stored; every temp file made is gone, and the
# workers (not the main thread) made some
python3 - "$SCRATCH/plain.fe" "$SCRATCH/broken.fe" <<'PY'
import sys
s = open(sys.argv[1], 'rb').read()
cut = 0
for _ in range(4):                      # after the fourth commit
    cut = s.index(b'\ncommit ', cut + 1)
open(sys.argv[2], 'wb').write(s[:cut + 1] + b'bogus command\n' + s[cut + 1:])
PY
for t in 1 2 4; do
	filter broken "$SCRATCH/broken.fe" "$t"
	[ "$(cat "$SCRATCH/broken.$t.rc")" = 2 ] || { cat "$SCRATCH/broken.$t.err" >&2; die "broken: exit $(cat "$SCRATCH/broken.$t.rc")"; }
	no_objects "$SCRATCH/broken.$t.store"
done
same broken
info "broken stream: $(cat "$SCRATCH/broken.1.err")"
EOF

test_case "the broken stream: the workers made temp files past the break, and none is left (strace)" <<'EOF'
[ -s "$SCRATCH/broken.fe" ] || die "no broken stream (the case before failed)"
# strace judges: more temp files made with 4 threads (blobs past the
# break), and none left
for t in 1 4; do
	rm -rf "$SCRATCH/broken.$t.store"
	(cd "$SCRATCH/repo" && strace -f -qq -e trace=openat,unlink,rename -o "$SCRATCH/trace.$t" \
		"$MIGRATE" --rules "$SCRATCH/rules" --threads="$t" --store "$SCRATCH/broken.$t.store" \
		<"$SCRATCH/broken.fe" >/dev/null 2>&1) && die "broken: succeeded under strace"
done
python3 - "$SCRATCH/trace.1" "$SCRATCH/trace.4" <<'PY' || die "broken: temp files"
import re, sys
def temps(path):
    made, gone = set(), set()
    for line in open(path):
        t = re.search(r'"([^"]*/tmp/put-[^"]*)"', line)
        if not t or '= -1' in line:
            continue
        if 'openat(' in line and 'O_CREAT' in line:
            made.add(t.group(1))
        elif 'unlink(' in line or 'rename(' in line:
            gone.add(t.group(1))
    return made, gone
(m1, g1), (m4, g4) = temps(sys.argv[1]), temps(sys.argv[2])
print('temp files: %d made on one thread, %d on four; %d and %d left'
      % (len(m1), len(m4), len(m1 - g1), len(m4 - g4)))
sys.exit(0 if m1 and len(m4) > len(m1) and not m1 - g1 and not m4 - g4 else 1)
PY
EOF

# rt_run NAME THREADS [OPTIONS]: the history of the replace-text case
# through its rule (RT_RULES=sp: the split case's), as filter does
rt_run() {
	local name="$1" t="$2" rc=0
	shift 2
	(cd "$SCRATCH/rt" && "$MIGRATE" --rules "$SCRATCH/${RT_RULES:-rt}.rules" --threads="$t" \
		--commit-map "$SCRATCH/$name.$t.map" "$@" \
		<"$SCRATCH/rt.fe" >"$SCRATCH/$name.$t.out" 2>"$SCRATCH/$name.$t.err") || rc=$?
	echo "$rc" >"$SCRATCH/$name.$t.rc"
}

test_case "replace-text: the workers read the blobs ahead; stream, map and messages equal on 1, 2 and 4 threads" <<'EOF'
# issue 29: a text file that changes at every commit, under a
# replace-text rule; a binary file the rule leaves alone once read (the
# read ahead is wasted); a version that comes back at another path
# (replaced once: no second read). The workers read the blobs whole, the
# main thread replaces: the output is one thread's, and the summary line
# says what the other threads read
python3 - "$SCRATCH/rt.fi" <<'PY'
import random, sys
r = random.Random(29)
out = open(sys.argv[1], 'wb')
def data(b):
    return b'data %d\n' % len(b) + b + b'\n'
lines = [b'%05d record key=%d token SECRET-%d\n' % (k, r.randrange(10**6), k % 7)
         for k in range(9000)]
binary = b'\0' + bytes(r.getrandbits(8) for _ in range(200000)) + b'SECRET-1'
t = 1500000000
versions = []
for i in range(24):
    t += 60
    for _ in range(40):
        lines[r.randrange(len(lines))] = b'%05d changed key=%d SECRET-%d\n' % (
            i, r.randrange(10**6), i % 7)
    text = b''.join(lines)
    versions.append(text)
    out.write(b'commit refs/heads/main\ncommitter T <t@x> %d +0000\n' % t)
    out.write(data(b'c%d\n' % i))
    out.write(b'M 100644 inline records.txt\n' + data(text))
    if i % 6 == 0:
        binary = binary[:-1] + bytes([48 + i % 10])
        out.write(b'M 100644 inline blob.bin\n' + data(binary))
    if i == 20:
        out.write(b'M 100644 inline old/records.txt\n' + data(versions[3]))
    out.write(b'M 100644 inline small.txt\n' + data(b'SECRET-%d small\n' % i))
out.close()
PY
git init -q "$SCRATCH/rt"
git -C "$SCRATCH/rt" fast-import --quiet <"$SCRATCH/rt.fi"
git -C "$SCRATCH/rt" repack -adfq --depth=50 --window=50
git -C "$SCRATCH/rt" fast-export --no-data "${EXPORT_FLAGS[@]}" --all >"$SCRATCH/rt.fe"
printf 'SECRET==>REDACTED\nregex:key=[0-9]+==>key=***\n' >"$SCRATCH/rt.exprs"
printf '* replace-text=%s\n' "$SCRATCH/rt.exprs" >"$SCRATCH/rt.rules"
for t in 1 2 4; do
	rt_run rt "$t"
	[ "$(cat "$SCRATCH/rt.$t.rc")" = 0 ] || { cat "$SCRATCH/rt.$t.err" >&2; die "rt: failed with $t threads"; }
done
same rt
# replaced in the text; the binary file left alone (named by its id)
[ "$(grep -ac 'REDACTED' "$SCRATCH/rt.1.out")" -gt 1000 ] || die "rt: little replaced"
grep -aq 'key=[0-9]' "$SCRATCH/rt.1.out" && die "rt: a key left"
grep -q '^M 100644 [0-9a-f]\{40\} blob.bin$' "$SCRATCH/rt.1.out" || die "rt: blob.bin was replaced"
# the summary line: the other threads read (the blobs: no LFS rule here)
for t in 1 2; do
	rt_run rtp "$t" --progress
	[ "$(cat "$SCRATCH/rtp.$t.rc")" = 0 ] || { cat "$SCRATCH/rtp.$t.err" >&2; die "rtp: failed"; }
	cmp -s "$SCRATCH/rtp.$t.out" "$SCRATCH/rt.1.out" || die "rtp: the stream differs with --progress"
done
grep -q 'done in' "$SCRATCH/rtp.1.err" || die "no summary line: $(cat "$SCRATCH/rtp.1.err")"
grep -q 'MB read ahead' "$SCRATCH/rtp.1.err" && die "one thread read ahead: $(tail -1 "$SCRATCH/rtp.1.err")"
# the workers race the main thread, which reads a blob itself when no
# worker has started on it: on a loaded machine a run may see none start
# in time, three in a row not (and without read-ahead none ever reads)
for try in 1 2 3; do
	ahead=$(sed -n 's/.*, \([0-9.]*\) MB read ahead, done in.*/\1/p' "$SCRATCH/rtp.2.err")
	[ -z "$ahead" ] || break
	rt_run rtp 2 --progress
done
[ -n "$ahead" ] || die "the workers read nothing ahead, three runs: $(tail -1 "$SCRATCH/rtp.2.err")"
info "replace-text on 1, 2 and 4 threads: the same stream, map and messages; 2 threads: $ahead MB read ahead"
EOF

test_case "split: the workers read the versions ahead; stream, map and messages equal on 1, 2 and 4 threads" <<'EOF'
# issue 29: the versions of records.txt (the replace-text case's history)
# split by the third digit of their lines; the workers read them whole,
# the main thread splits: the output is one thread's
[ -e "$SCRATCH/rt.fe" ] || die "no history (the replace-text case failed)"
printf "/records.txt split record='^\\d\\d(\\d)' into='parts/{1}.txt'\n" >"$SCRATCH/sp.rules"
for t in 1 2 4; do
	RT_RULES=sp rt_run sp "$t"
	[ "$(cat "$SCRATCH/sp.$t.rc")" = 0 ] || { cat "$SCRATCH/sp.$t.err" >&2; die "sp: failed with $t threads"; }
done
same sp
[ "$(grep -ac '^M 100644 inline parts/[0-9].txt$' "$SCRATCH/sp.1.out")" -gt 100 ] ||
	die "sp: few parts written: $(grep -c ' parts/' "$SCRATCH/sp.1.out")"
grep -aq ' records.txt$' "$SCRATCH/sp.1.out" && die "sp: records.txt left whole"
# the summary line of two threads says what they read ahead (three runs
# at most: the workers race the main thread)
for try in 1 2 3; do
	RT_RULES=sp rt_run spp 2 --progress
	cmp -s "$SCRATCH/spp.2.out" "$SCRATCH/sp.1.out" || die "spp: the stream differs with --progress"
	ahead=$(sed -n 's/.*, \([0-9.]*\) MB read ahead, done in.*/\1/p' "$SCRATCH/spp.2.err")
	[ -z "$ahead" ] || break
done
[ -n "$ahead" ] || die "the workers read nothing ahead for the split, three runs: $(tail -1 "$SCRATCH/spp.2.err")"
info "split on 1, 2 and 4 threads: the same stream, map and messages; 2 threads: $ahead MB read ahead"
EOF

test_done
