#!/usr/bin/env bash
# hostile.sh - small typed streams where migrate once disagreed with git
# fast-import (issue 9, items 4-6). For each case git fast-import is the
# oracle: it imports the stream as it is, and migrate (without rules, and
# with rules that convert *.bin to LFS) must
#  - reject exactly the streams fast-import rejects: exit 2, a message
#    naming a byte offset, no commit map written;
#  - on the streams fast-import accepts: exit 0, an output that fast-import
#    imports, commit marks equal to the ones fast-import writes for that
#    output, and (for queries) the same answers as fast-import gives for the
#    original stream.
# feature date-format=rfc2822 (item 5): dates in many spellings, each id
# as fast-import computes it (git's parse_date); a date git refuses is
# refused. One format migrate refuses by design (ids cannot be known):
# date-format=now; fast-import takes it. Paths of
# more than 4,096 components are a limit of migrate's: refused naming the path.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

CASES="$SCRATCH/cases"
mkdir -p "$CASES"
printf '*.bin lfs\n' >"$SCRATCH/rules"

C='committer A U Thor <a@example.com> 1700000000 +0000'

# case NAME 'printf format' [args]: writes the stream $CASES/NAME
mk() {
	local name="$1"
	shift
	# shellcheck disable=SC2059
	printf "$@" >"$CASES/$name"
}

# The streams. Queries with rules (item 4):
mk q_in_commit 'blob\nmark :1\ndata 3\nabc\nblob\nmark :9\ndata 4\nxyzw\ncommit refs/heads/main\nmark :2\n%s\ndata 2\nm\nM 100644 :1 f\ncat-blob :9\nls "f"\nM 100644 :9 g.bin\n\nget-mark :9\n' "$C"
mk q_after_convert 'blob\nmark :1\ndata 5\nbig!!\ncommit refs/heads/main\nmark :2\n%s\ndata 2\nm\nM 100644 :1 a.bin\n\ncat-blob :1\nget-mark :1\n' "$C"
mk r_ls_blob 'blob\nmark :1\ndata 1\na\nls :1 f\n'
# Lines fast-import rejects (item 6):
mk r_mark_type 'commit refs/heads/main\nmark :1\n%s\ndata 0\n\ncommit refs/heads/main\nmark :2\n%s\ndata 0\nM 100644 :1 f\n\n' "$C" "$C"
mk r_gitlink_blob 'blob\nmark :1\ndata 1\na\ncommit refs/heads/main\nmark :2\n%s\ndata 0\nM 160000 :1 sub\n\n' "$C"
mk r_cr_ref 'commit refs/heads/main\r\nmark :1\n%s\ndata 0\n\n' "$C"
mk r_cr_ident 'commit refs/heads/main\nmark :1\n%s\r\ndata 0\n\n' "$C"
mk r_cr_reset 'reset refs/heads/x\r\n\n'
mk r_cr_tag 'commit refs/heads/main\nmark :1\n%s\ndata 0\n\ntag v1\r\nfrom :1\n%s\ndata 0\n' "$C" "${C/committer/tagger}"
mk r_refname_dots 'commit refs/heads/a..b\nmark :1\n%s\ndata 0\n\n' "$C"
mk r_tz_9999 'commit refs/heads/main\nmark :1\ncommitter A <a> 1700000000 +9999\ndata 0\n\n'
mk r_tz_1401 'commit refs/heads/main\nmark :1\nauthor A <a> 1700000000 -1401\n%s\ndata 0\n\n' "$C"
mk r_date_word 'commit refs/heads/main\nmark :1\ncommitter A <a> yesterday +0000\ndata 0\n\n'
mk r_tz_missing 'commit refs/heads/main\nmark :1\ncommitter A <a> 1700000000\ndata 0\n\n'
mk r_ident_nospace 'commit refs/heads/main\nmark :1\ncommitter A<a> 1700000000 +0000\ndata 0\n\n'
mk r_ident_nogt 'commit refs/heads/main\nmark :1\ncommitter A <a 1700000000 +0000\ndata 0\n\n'
mk r_ident_nolt 'commit refs/heads/main\nmark :1\ncommitter A a> 1700000000 +0000\ndata 0\n\n'
mk r_tagger_tz 'commit refs/heads/main\nmark :1\n%s\ndata 0\n\ntag v1\nfrom :1\ntagger T <t> 1 +2400\ndata 0\n' "$C"
mk r_feature_late 'blob\nmark :1\ndata 0\nfeature done\ndone\n'
mk r_feature_after_comment '# hello\nfeature done\ndone\n'
mk r_feature_unknown 'feature no-such-thing\n'
mk r_feature_unsafe 'feature export-marks=/tmp/x\n'
mk r_option_late 'blob\nmark :1\ndata 0\noption git quiet\n'
mk r_catblob_undeclared 'cat-blob :9\n'
mk r_getmark_undeclared 'get-mark :9\n'
mk r_catblob_commit 'commit refs/heads/main\nmark :1\n%s\ndata 0\n\ncat-blob :1\n' "$C"
# Refused by design (fast-import takes them; migrate cannot know the ids):
mk x_date_now 'feature date-format=now\ncommit refs/heads/main\nmark :1\ncommitter A <a> now\ndata 0\n\n'
# rfc2822 dates (item 5): DATES holds one date per line; each becomes a
# commit (author and committer), the last ones a tag's tagger too.
mk_rfc() {
	local name="$1" n=0 d
	shift
	{
		printf 'feature date-format=rfc2822\nblob\nmark :100\ndata 5\nbig!!\n'
		for d in "$@"; do
			n=$((n + 1))
			printf 'commit refs/heads/main\nmark :%d\nauthor B <b@example.com> %s\ncommitter C <c@example.com> %s\ndata 2\nm\nM 100644 :100 f%d.bin\n\n' "$n" "$d" "$d" "$n"
		done
		printf 'tag v1\nmark :200\nfrom :1\ntagger T <t> %s\ndata 2\nt\n' "$d"
	} >"$CASES/$name"
}
mk_rfc d_rfc_weekday 'Thu, 07 Apr 2005 22:13:13 +0200' 'Thu, 07 Apr 2005 22:13:13 +0200' 'Tue, 14 Nov 2023 22:13:20 +0100'
mk_rfc d_rfc_no_weekday '07 Apr 2005 22:13:13 +0200' '7 Apr 2005 22:13:13 -0130' '14 Nov 2023 22:13 +0000'
mk_rfc d_rfc_odd_tz 'Thu, 07 Apr 2005 22:13:13 EST' 'Thu, 07 Apr 2005 22:13:13 GMT' 'Thu, 07 Apr 2005 22:13:13 UT' \
	'Thu, 07 Apr 2005 22:13:13 +0545' 'Thu, 07 Apr 2005 22:13:13 -1200' 'Thu, 07 Apr 2005 22:13:13 +1400' \
	'Thu, 07 Apr 2005 22:13:13 -0000' 'Thu, 07 Apr 2005 22:13:13 +9999' 'Thu, 07 Apr 2005 22:13:13 PDT'
mk_rfc d_rfc_other_spellings '1112904793 +0200' '@1112904793 +0200' '2005-04-07T22:13:13+02:00' \
	'Thu,  7 Apr 2005 22:13:13 +0200 (CEST)' 'thu, 07 apr 2005 22:13:13 +0200' 'Thu, 07 Apr 2005 22:13:13'
mk_rfc r_rfc_bad 'Thu, 07 Apr 2005 22:13:13 +0200' 'not a date at all'
mk_rfc r_rfc_two_digit_year '7 Apr 2005 22:13:13 +0200' '14 Nov 23 22:13 +0000'
mk r_rfc_empty 'feature date-format=rfc2822\ncommit refs/heads/main\nmark :1\ncommitter A <a> \ndata 0\n\n'
mk r_rfc_tagger_bad 'feature date-format=rfc2822\ncommit refs/heads/main\nmark :1\ncommitter A <a> 7 Apr 2005 22:13:13 +0200\ndata 0\n\ntag v1\nfrom :1\ntagger T <t> yesterday-ish\ndata 0\n'

# A documented limit (fast-import takes it): over 4,096 path components is
# refused, and the message names the path.
python3 -c 'import sys; sys.stdout.write("blob\nmark :1\ndata 1\na\ncommit refs/heads/m\nmark :2\ncommitter A <a> 1 +0000\ndata 0\nM 100644 :1 " + "/".join(["deep"] * 4100) + "\n\n")' >"$CASES/y_deep_path"

# failcase WHAT WHY: one failure of the stream judge is judging, said; the
# case fails when judge is done, with every failure said
failcase() {
	info "FAIL $1: $2"
	bad=$((bad + 1))
}

# fast-import on STREAM in a fresh repository DIR: exit status; marks in
# DIR.marks, query answers in DIR.out
fi_run() {
	git init -q "$2"
	(cd "$2" && git fast-import --quiet --export-marks="$2.marks" <"$1" >"$2.out" 2>"$2.err")
}

# judge STREAM: fast-import the oracle, migrate without rules and with them
judge() {
	local s="$1" name W orc mode args mrc irc mk id bad=0
	name="$(basename "$s")"
	W="$SCRATCH/w-$name"
	mkdir -p "$W"
	orc=0
	fi_run "$s" "$W/oracle" || orc=$?
	for mode in plain rules; do
		args=(--commit-map "$W/$mode.map" --export-marks "$W/$mode.mmarks")
		[ "$mode" = rules ] && args+=(--rules "$SCRATCH/rules" --store "$W/store")
		mrc=0
		"$MIGRATE" "${args[@]}" <"$s" >"$W/$mode.fi" 2>"$W/$mode.err" || mrc=$?
		case "$name" in
		d_*)
			[ "$orc" = 0 ] || failcase "$name" "fast-import rejects it (rc $orc): the case is wrong" ;;
		y_*)
			[ "$mrc" = 2 ] || failcase "$name/$mode" "migrate exit $mrc, expected 2 (a limit)"
			grep -q "path 'deep/deep/.*4096 components" "$W/$mode.err" ||
				failcase "$name/$mode" "the message does not name the path: $(cut -c1-200 "$W/$mode.err")"
			[ ! -e "$W/$mode.map" ] || failcase "$name/$mode" "a commit map was written"
			continue ;;
		x_*)
			[ "$orc" = 0 ] || failcase "$name" "fast-import rejects it (rc $orc): the case is wrong"
			[ "$mrc" = 2 ] || failcase "$name/$mode" "migrate exit $mrc, expected 2 (refused by design)"
			[ ! -e "$W/$mode.map" ] || failcase "$name/$mode" "a commit map was written"
			continue ;;
		esac
		if [ "$orc" != 0 ]; then
			[ "$mrc" = 2 ] || failcase "$name/$mode" "fast-import rejects it ($(tail -n 1 "$W/oracle.err")) but migrate exit $mrc"
			grep -q 'byte offset [0-9]' "$W/$mode.err" ||
				failcase "$name/$mode" "no byte offset in: $(cat "$W/$mode.err")"
			[ ! -e "$W/$mode.map" ] || failcase "$name/$mode" "a commit map was written"
			continue
		fi
		if [ "$mrc" != 0 ]; then
			failcase "$name/$mode" "fast-import accepts it but migrate exit $mrc: $(cat "$W/$mode.err")"
			continue
		fi
		irc=0
		fi_run "$W/$mode.fi" "$W/$mode.import" || irc=$?
		if [ "$irc" != 0 ]; then
			failcase "$name/$mode" "migrate's output does not import: $(tail -n 1 "$W/$mode.import.err")"
			continue
		fi
		# every commit (and tag) mark fast-import wrote is the id migrate
		# computed
		while read -r mk id; do
			case "$(git -C "$W/$mode.import" cat-file -t "$id")" in
			commit | tag) ;;
			*) continue ;;
			esac
			grep -qx "$mk $id" "$W/$mode.mmarks" ||
				failcase "$name/$mode" "fast-import wrote $mk $id, migrate: $(grep "^$mk " "$W/$mode.mmarks")"
		done <"$W/$mode.import.marks"
		# the queries answer as for the original stream
		cmp -s "$W/oracle.out" "$W/$mode.import.out" ||
			failcase "$name/$mode" "query answers differ from fast-import's on the original stream"
		# without rules, the very ids fast-import gives the original stream
		if [ "$mode" = plain ] && ! cmp -s "$W/oracle.marks" "$W/plain.import.marks"; then
			failcase "$name/$mode" "marks differ from fast-import's on the original stream"
		fi
	done
	[ "$bad" = 0 ] || die "$bad failure(s) in $name"
}

# a case per stream, named by what its prefix says it is
for s in "$CASES"/*; do
	name="$(basename "$s")"
	case "$name" in
	q_*) what="queries with rules: migrate's output imports with fast-import's ids and answers" ;;
	d_*) what="rfc2822 dates: each id as fast-import computes it" ;;
	r_*) what="git fast-import rejects it, and so does migrate: exit 2, a byte offset, no commit map" ;;
	x_*) what="refused by design (fast-import takes it): exit 2, no commit map" ;;
	y_*) what="over 4,096 path components: exit 2, the path named, no commit map" ;;
	*) die "test setup: $name has no known prefix" ;;
	esac
	test_case "$name: $what" "judge \"\$CASES/$name\""
done

test_done
