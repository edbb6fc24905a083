#!/usr/bin/env bash
# malformed.sh - bad input ends in exit 2, a message naming the byte offset,
# and nothing half-written:
#  - truncated stream (inside a blob's data), wrong byte count (too small:
#    the rest is taken for a command; too large: the data runs past the
#    end), unknown command, an absurd data length, a bad quoted path;
#  - for each: exit status 2, stderr names a byte offset, no commit map, ref
#    map or marks file is created, and an existing commit map and ref map
#    are left byte-identical;
#  - git fast-import fed migrate's output of a truncated stream fails and
#    creates no ref (the output never ends with 'done').
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

ORIG="$SCRATCH/orig"
"$HERE/make_tricky_repo.sh" "$ORIG" >/dev/null
export_stream "$ORIG" >"$SCRATCH/good.fe"

# A good run first: its maps are the "existing" maps of the cases below.
test_case "a good run writes a commit map and a ref map (the existing maps below)" <<'EOF'
run_migrate --commit-map "$SCRATCH/good.M" --ref-map "$SCRATCH/good.R" \
	--source-repo "$ORIG" <"$SCRATCH/good.fe" >/dev/null ||
	die "migrate failed on the good stream"
[ -s "$SCRATCH/good.M" ] || die "migrate wrote no commit map for the good stream"
[ -s "$SCRATCH/good.R" ] || die "migrate wrote no ref map for the good stream"
EOF

# Payload offsets and lengths of every data command (honouring counts).
python3 "$HERE/stream_marks.py" data "$SCRATCH/good.fe" >"$SCRATCH/data.offsets"
size="$(wc -c <"$SCRATCH/good.fe")"
# The largest payload (a blob): cut in its middle.
read -r big_off big_len < <(sort -k2,2n "$SCRATCH/data.offsets" | tail -n 1)
[ "$big_len" -ge 2 ] || die "no payload to cut"

# Byte-level edits of the good stream, done with python (binary-safe).
edit() { # edit OUT PYTHON-EXPR-ON-s
	python3 -c 'import sys
s = open(sys.argv[1], "rb").read()
s = eval(sys.argv[3])
open(sys.argv[2], "wb").write(s)' "$SCRATCH/good.fe" "$1" "$2"
}

# 1. truncated inside the largest blob
head -c "$((big_off + big_len / 2))" "$SCRATCH/good.fe" >"$SCRATCH/truncated.fe"
# The first commit message's "data N" line: start, end, N.
MSG='(lambda i: (i, s.index(b"\n", i), int(s[i + 5:s.index(b"\n", i)])))(s.index(b"\ndata ", s.index(b"\ncommitter ")) + 1)'
# 2. a commit message's count 3 too small: its tail is taken for a command
edit "$SCRATCH/count-small.fe" \
	"(lambda m: s[:m[0]] + b'data %d' % (m[2] - 3) + s[m[1]:])($MSG)"
# 3. the last data count past the end of the stream
edit "$SCRATCH/count-large.fe" \
	'(lambda i: s[:i] + b"data %d" % (len(s) + 1000) + s[s.index(b"\n", i):])(s.rindex(b"\ndata ") + 1)'
# 4. an unknown command between two commands
edit "$SCRATCH/unknown.fe" \
	's.replace(b"\ncommit refs/heads/", b"\nfrobnicate the stream\ncommit refs/heads/", 1)'
# 5. an absurd data length
edit "$SCRATCH/absurd.fe" \
	"(lambda m: s[:m[0]] + b'data 99999999999999999999999' + s[m[1]:])($MSG)"
# 6. a quoted path that never ends
edit "$SCRATCH/badquote.fe" \
	's.replace(b"\nM 100644 ", b"\nM 100644 :1 \"unterminated\nM 100644 ", 1)'

# 7. a stream that declares 'feature done' and ends at a command boundary
#    without 'done' (cut before the last commit)
edit "$SCRATCH/nodone.fe" \
	'b"feature done\n" + s[:s.rindex(b"\ncommit ") + 1]'

for f in count-small count-large unknown absurd badquote nodone; do
	cmp -s "$SCRATCH/good.fe" "$SCRATCH/$f.fe" && die "$f: the edit did not apply"
done

# case_fails NAME, each case below: exit 2, the message names a byte offset,
# no map written, an existing map (the good run's) left as it was
case_fails() { # case_fails NAME
	local name="$1" in="$SCRATCH/$1.fe" rc=0
	local d="$SCRATCH/case-$1"
	mkdir -p "$d"

	# (a) no map files existed: none may exist afterwards
	"$MIGRATE" --commit-map "$d/M" --ref-map "$d/R" --export-marks "$d/MM" \
		--source-repo "$ORIG" <"$in" >"$d/out.fi" 2>"$d/err" || rc=$?
	[ "$rc" -eq 2 ] || {
		cat "$d/err" >&2
		die "$name: exit status $rc, expected 2 (malformed stream)"
	}
	grep -Eiq 'offset [0-9]+' "$d/err" || {
		cat "$d/err" >&2
		die "$name: the message names no byte offset"
	}
	[ "$(wc -l <"$d/err")" -le 3 ] || {
		cat "$d/err" >&2
		die "$name: more than one short message on stderr"
	}
	for f in M R; do
		[ ! -e "$d/$f" ] || die "$name: a failed run wrote $d/$f"
	done
	if [ "$(tail -n 1 "$d/out.fi")" = "done" ]; then
		die "$name: the output of a failed run ends with 'done'"
	fi
	# No temporary map files left behind either.
	if [ -n "$(find "$d" -mindepth 1 -maxdepth 1 ! -name out.fi ! -name err ! -name MM)" ]; then
		ls -la "$d" >&2
		die "$name: a failed run left files behind"
	fi

	# (b) existing maps are left byte-identical
	cp "$SCRATCH/good.M" "$d/M"
	cp "$SCRATCH/good.R" "$d/R"
	rc=0
	"$MIGRATE" --commit-map "$d/M" --ref-map "$d/R" \
		--source-repo "$ORIG" <"$in" >/dev/null 2>"$d/err2" || rc=$?
	[ "$rc" -eq 2 ] || die "$name: exit status $rc with existing maps, expected 2"
	cmp -s "$SCRATCH/good.M" "$d/M" || die "$name: the existing commit map was changed"
	cmp -s "$SCRATCH/good.R" "$d/R" || die "$name: the existing ref map was changed"
	info "$name: exit 2, '$(head -n 1 "$d/err")'"
}

test_case "truncated inside the largest blob: exit 2, the offset named, no map written or changed" <<'EOF'
case_fails truncated
EOF
test_case "a data count 3 too small (its tail taken for a command): exit 2, the offset named, no map written or changed" <<'EOF'
case_fails count-small
EOF
test_case "a data count past the end of the stream: exit 2, the offset named, no map written or changed" <<'EOF'
case_fails count-large
EOF
test_case "an unknown command: exit 2, the offset named, no map written or changed" <<'EOF'
case_fails unknown
EOF
test_case "an absurd data length: exit 2, the offset named, no map written or changed" <<'EOF'
case_fails absurd
EOF
test_case "a quoted path that never ends: exit 2, the offset named, no map written or changed" <<'EOF'
case_fails badquote
EOF
test_case "'feature done' and no 'done' at the end: exit 2, the offset named, no map written or changed" <<'EOF'
case_fails nodone
EOF

test_case "git fast-import fed migrate's output of a truncated stream fails and creates no ref" <<'EOF'
git init -q "$SCRATCH/imported"
rc=0
"$MIGRATE" --source-repo "$ORIG" <"$SCRATCH/truncated.fe" 2>/dev/null |
	git -C "$SCRATCH/imported" fast-import --quiet >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || die "git fast-import accepted migrate's output of a truncated stream"
[ -z "$(git -C "$SCRATCH/imported" for-each-ref)" ] ||
	die "git fast-import created refs from a truncated stream"
info "truncated at byte $((big_off + big_len / 2)) of $size: fast-import failed, no ref created"
EOF

test_done
