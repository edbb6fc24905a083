#!/usr/bin/env bash
# replace_text_re.sh - replace-text's regexes mean what Python's re means
# (issue 28, item 6), judged by git filter-repo itself: for each regex of a
# corpus (anchors in and out of multi-line mode, classes, a '[' inside a
# class, POSIX-looking classes, backreferences in pattern and template,
# empty matches, lookarounds, \Z, (?s), (?i)), one expressions file with
# that regex alone; git filter-repo --replace-text and the filter over the
# same history (LF text, CRLF text, text without a final newline, empty
# lines, a binary file) must give the same tree. Before: multi-line '^'
# did not match after a newline that ends the text, and [[:alpha:]] was a
# POSIX class (Python reads it as a set holding '[' and ':').
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

command -v git-filter-repo >/dev/null || die "git-filter-repo is not installed (scripts/lib.sh installs it)"

SRC="$SCRATCH/src"
git init -q "$SRC"
(
	cd "$SRC"
	printf 'line one\nline two\n' >a.txt
	printf 'no final newline' >b.txt
	printf 'crlf one\r\ncrlf two\r\n' >c.txt
	printf 'xaay aa bb\n\n\nend\n' >d.txt
	printf 'mail joe@example.com and ann@test.com\n' >e.txt
	printf 'Secret SECRET secret [x] :a:\n' >f.txt
	printf 'bin\000ary line one\n' >g.bin
	git add -A && git commit -qm init
)
export_stream "$SRC" >"$SCRATCH/src.fe"

# one case per expression (its body sees $line)
while IFS= read -r line; do
	[ -n "$line" ] || continue
	test_case "$line" <<'EOF'
printf '%s\n' "$line" >"$SCRATCH/expr"
rm -rf "$SCRATCH/fr" "$SCRATCH/mg"
git clone -q --no-local "$SRC" "$SCRATCH/fr"
(cd "$SCRATCH/fr" && git filter-repo --replace-text "$SCRATCH/expr" --force >/dev/null 2>&1) ||
	die "git filter-repo refused '$line'"
printf '* replace-text=%s\n' "$SCRATCH/expr" >"$SCRATCH/rules"
git init -q "$SCRATCH/mg"
(cd "$SRC" && run_migrate --rules "$SCRATCH/rules" <"$SCRATCH/src.fe" 2>"$SCRATCH/err") |
	git -C "$SCRATCH/mg" fast-import --quiet || die "migrate with '$line': $(cat "$SCRATCH/err")"
# the last commit's tree (filter-repo prunes a commit the
# replacement empties; migrate keeps it, with the same tree)
want=$(git -C "$SCRATCH/fr" rev-parse "HEAD^{tree}")
got=$(git -C "$SCRATCH/mg" rev-parse "HEAD^{tree}")
if [ "$want" != "$got" ]; then
	git -C "$SCRATCH/fr" ls-tree -r HEAD >"$SCRATCH/fr.ls"
	git -C "$SCRATCH/mg" ls-tree -r HEAD >"$SCRATCH/mg.ls"
	diff "$SCRATCH/fr.ls" "$SCRATCH/mg.ls" >&2 || true
	die "'$line': another tree than git filter-repo's"
fi
EOF
done <<'EXPRESSIONS'
regex:(?m)^==>> 
regex:(?m)$==>;
regex:(?m)^$==><empty>
regex:(?m)$^==><join>
regex:^==>START
regex:$==>END
regex:\Z==>EOF
regex:\A==>BOF
regex:\n$==><nl>
regex:(?m)^\r?$==><blank>
regex:(?m)\s*$==><trail>
regex:\r$==><cr>
regex:a*==>-
regex:x?==>.
regex:\b==>|
regex:\bline\b==>LINE
regex:o\b==>0
regex:(?<=e)\s==>_
regex:o(?=n)==>0
regex:(.)\1==><\1\1>
regex:(\w+)@(\w+)\.com==>\2 at \1
regex:(?P<user>\w+)@==>\g<user> at 
regex:(?i)secret==>REDACTED
regex:(?s)two.==>TWO
regex:[[:alpha:]]+==><posix>
regex:[^[]+==><nb>
regex:[a-z[]+==><lb>
regex:[\]x]==><rb>
regex:\d==>#
regex:line (one|two)==>L\1
literal line==>LINE
glob:*ne==>NE
EXPRESSIONS

test_done
