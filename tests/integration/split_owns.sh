#!/usr/bin/env bash
# split_owns.sh - a split owns its parts and nothing else (issue 9, items 1
# and 2, and R/C of a directory holding a split file), on small typed
# streams; `git fast-import` and `git fsck` judge every accepted output:
#  - only parts the split wrote are deleted: other files in the part
#    directory survive, in the same commit and inherited from parents;
#  - a part onto an existing file or directory, an M/R/C/D onto a part's
#    name: exit 2 naming the byte offset, the commit, the path and the rule;
#  - reserved names (.git and its aliases, .gitmodules, ...) and components
#    over 255 bytes are refused as keys;
#  - parts keep the split file's mode (the exec bit);
#  - R and C of a directory holding a split file move or copy its parts.
. "$(dirname "$0")/lib/lib.sh"

W="$SCRATCH/w"
git init -q "$W"
cd "$W"

LIST=$'head\nCVE-2023-1 a\nCVE-2024-2 b\n'
LIST2=$'head\nCVE-2024-2 b\nCVE-2025-3 c\n'

# blob MARK CONTENT (also in the repository migrate runs in, where a blob
# needed again after its commit is read back)
blob() {
	printf '%s\n' "$2" | git hash-object -w --stdin >/dev/null
	printf 'blob\nmark :%s\ndata %d\n%s\n' "$1" "$(($(printf '%s' "$2" | wc -c) + 1))" "$2"
}
# commit MARK [from MARK]: a header; the file changes follow
commit() {
	printf 'commit refs/heads/main\nmark :%s\ncommitter T <t@e> 1 +0000\ndata 2\nc\n' "$1"
	[ -z "${2:-}" ] || printf 'from :%s\n' "$2"
}
rules() { printf 'data/CVE/list split record=%s into=%s head=data/CVE/list.head\n' \
	"'^CVE-(\d{4})-(\d+)'" "'$1'" >"$SCRATCH/rules"; }

# ok NAME: migrate accepts the stream, fast-import and fsck accept the output
ok() {
	local rc=0
	"$MIGRATE" --rules "$SCRATCH/rules" <"$SCRATCH/$1.fe" >"$SCRATCH/$1.fi" \
		2>"$SCRATCH/$1.err" || rc=$?
	[ "$rc" = 0 ] || die "$1: migrate exited $rc: $(cat "$SCRATCH/$1.err")"
	rm -rf "$SCRATCH/$1.git"
	git init -q --bare "$SCRATCH/$1.git"
	git -C "$SCRATCH/$1.git" fast-import --quiet <"$SCRATCH/$1.fi" ||
		die "$1: fast-import refused the output"
	git -C "$SCRATCH/$1.git" fsck --strict --no-dangling >/dev/null 2>&1 ||
		die "$1: git fsck: $(git -C "$SCRATCH/$1.git" fsck --strict 2>&1 | head -3)"
}
# refused NAME RC PATTERN...: migrate exits RC, its message matches each
refused() {
	local name="$1" want="$2" p says=()
	shift 2
	for p in "$@"; do
		says+=(--says "$p")
	done
	expect_refusal --what "$name" --status "$want" "${says[@]}" --one-message \
		--stdin "$SCRATCH/$name.fe" -- "$MIGRATE" --rules "$SCRATCH/rules"
}
tree() { git -C "$SCRATCH/$1.git" ls-tree -r --format='%(objectmode) %(path)' "${2:-main}"; }
has() { tree "$1" "${3:-main}" | grep -qx "$2" || die "$1: ${3:-main} lacks '$2': $(tree "$1" "${3:-main}")"; }
lacks() { output_lacks "$2" -- tree "$1" "${3:-main}" || die "$1: ${3:-main} has '$2'"; }

test_case "a split in data/CVE/ keeps README and NOTES beside its parts and deletes only its own" <<'EOF'
# 1. into='data/CVE/{1}': README beside the parts survives, in the same
# commit and inherited; a later version deletes only the vanished part
rules 'data/CVE/{1}'
{ blob 1 readme; blob 2 "$LIST"; blob 3 "$LIST2"; blob 4 notes
  commit 10; printf 'M 100644 :1 data/CVE/README\nM 100644 :2 data/CVE/list\n\n'
  commit 11 10; printf 'M 100644 :4 data/CVE/NOTES\nM 100644 :3 data/CVE/list\n\n'
  commit 12 11; printf 'D data/CVE/list\n\n'; } >"$SCRATCH/same.fe"
ok same
has same '100644 data/CVE/README' main~2
has same '100644 data/CVE/2023' main~2
has same '100644 data/CVE/README' main~1
has same '100644 data/CVE/NOTES' main~1
lacks same 'data/CVE/2023' main~1
has same '100644 data/CVE/2025' main~1
has same '100644 data/CVE/README'
has same '100644 data/CVE/NOTES'
lacks same 'data/CVE/20'
lacks same 'list.head'
info "a split in data/CVE/ keeps README and NOTES and deletes only its parts"
EOF

test_case "a per-record split (into data/CVE/{1}/{2}) keeps an existing data/CVE/2023/notes.txt" <<'EOF'
rules 'data/CVE/{1}/{2}'
{ blob 1 notes; blob 2 "$LIST"; blob 3 "$LIST2"
  commit 10; printf 'M 100644 :1 data/CVE/2023/notes.txt\n\n'
  commit 11 10; printf 'M 100644 :2 data/CVE/list\n\n'
  commit 12 11; printf 'M 100644 :3 data/CVE/list\n\n'; } >"$SCRATCH/deep.fe"
ok deep
has deep '100644 data/CVE/2023/notes.txt'
lacks deep 'data/CVE/2023/1'
has deep '100644 data/CVE/2025/3'
info "a per-record split keeps data/CVE/2023/notes.txt"
EOF

# 2. collisions: exit 2 naming offset, commit, path and rule
test_case "a part onto an existing file: exit 2 naming the offset, the path and the rule" <<'EOF'
rules 'data/CVE/list.{1}'
{ blob 1 real; blob 2 "$LIST"
  commit 10; printf 'M 100644 :1 data/CVE/list.2023\n\n'
  commit 11 10; printf 'M 100644 :2 data/CVE/list\n\n'; } >"$SCRATCH/onto-file.fe"
refused onto-file 2 'byte offset' 'data/CVE/list.2023' 'rules:1' 'would overwrite a file'
EOF

test_case "an M onto a part's name in the split's commit: exit 2, naming it" <<'EOF'
rules 'data/CVE/list.{1}'
{ blob 1 real; blob 2 "$LIST"
  commit 10; printf 'M 100644 :2 data/CVE/list\nM 100644 :1 data/CVE/list.2023\n\n'; } >"$SCRATCH/m-onto-part.fe"
refused m-onto-part 2 'byte offset' "M 'data/CVE/list.2023'" 'is a part of data/CVE/list' 'rules:1'
EOF

test_case "an M onto a part's name in a later commit: exit 2, naming it" <<'EOF'
rules 'data/CVE/list.{1}'
{ blob 1 real; blob 2 "$LIST"
  commit 10; printf 'M 100644 :2 data/CVE/list\n\n'
  commit 11 10; printf 'M 100644 :1 data/CVE/list.2024\n\n'; } >"$SCRATCH/m-later.fe"
refused m-later 2 "M 'data/CVE/list.2024'" 'rules:1'
EOF

test_case "an R onto a part's name: exit 2, naming it" <<'EOF'
rules 'data/CVE/list.{1}'
{ blob 1 real; blob 2 "$LIST"
  commit 10; printf 'M 100644 :2 data/CVE/list\nM 100644 :1 data/x\n\n'
  commit 11 10; printf 'R data/x data/CVE/list.2023\n\n'; } >"$SCRATCH/r-onto-part.fe"
refused r-onto-part 2 "R 'data/CVE/list.2023'" 'rules:1'
EOF

test_case "a D of a part: exit 2, naming it" <<'EOF'
rules 'data/CVE/list.{1}'
{ blob 2 "$LIST"
  commit 10; printf 'M 100644 :2 data/CVE/list\n\n'
  commit 11 10; printf 'D data/CVE/list.2023\n\n'; } >"$SCRATCH/d-part.fe"
refused d-part 2 "D 'data/CVE/list.2023'" 'rules:1'
EOF

test_case "an M through a part (the part as a directory): exit 2, naming it" <<'EOF'
rules 'data/CVE/list.{1}'
{ blob 2 "$LIST"
  commit 10; printf 'M 100644 :2 data/CVE/list\n\n'
  commit 11 10; printf 'M 100644 :2 data/CVE/list.2023/x\n\n'; } >"$SCRATCH/through-part.fe"
refused through-part 2 "M 'data/CVE/list.2023/x'" 'rules:1'
EOF

test_case "a part onto an existing directory: exit 2, naming it" <<'EOF'
rules 'data/CVE/{1}'
{ blob 1 real; blob 2 "$LIST"
  commit 10; printf 'M 100644 :1 data/CVE/2023/x\nM 100644 :2 data/CVE/list\n\n'; } >"$SCRATCH/onto-dir.fe"
refused onto-dir 2 "data/CVE/2023" 'is a directory' 'rules:1'
EOF

test_case "a part through an existing file: exit 2, naming it" <<'EOF'
rules 'data/CVE/{1}/{2}'
{ blob 1 real; blob 2 "$LIST"
  commit 10; printf 'M 100644 :1 data/CVE/2023\nM 100644 :2 data/CVE/list\n\n'; } >"$SCRATCH/through-file.fe"
refused through-file 2 "data/CVE/2023/1" "file 'data/CVE/2023' into a directory"
info "parts and files never take each other's place: exit 2, offset, commit, path, rule"
EOF

test_case "reserved names (.git and its aliases, .gitmodules, ...) and components over 255 bytes are refused as keys" <<'EOF'
# 2b. reserved names and long components as keys: refused like '..'
printf 'data/CVE/list split record=%s into=%s\n' "'^CVE-(\d{4})-(.+) a$'" \
	"'data/CVE/{1}/{2}'" >"$SCRATCH/rules"
for key in .git .Git .GIT. '.git ' git~1 .gitmodules .gitattributes GITMOD~1 \
	.lfsconfig $'.g\xe2\x80\x8cit' "$(printf 'x%.0s' $(seq 256))"; do
	printf 'key %q\n' "$key" >>"$SCRATCH/keys.log"
	{ blob 2 "$(printf 'CVE-2023-%s a\n' "$key")"
	  commit 10; printf 'M 100644 :2 data/CVE/list\n\n'; } >"$SCRATCH/key.fe"
	refused key 1 'data/CVE/list in commit' 'line 1: key'
done
info "reserved keys (.git, .Git, .git., git~1, .gitmodules, HFS, 256 bytes) refused"
EOF

test_case "parts keep the split file's mode (the exec bit), and follow a change of it" <<'EOF'
# 2c. parts keep the exec bit, and follow a change of mode
rules 'data/CVE/list.{1}'
{ blob 2 "$LIST"
  commit 10; printf 'M 100755 :2 data/CVE/list\n\n'
  commit 11 10; printf 'M 100644 :2 data/CVE/list\n\n'; } >"$SCRATCH/mode.fe"
ok mode
has mode '100755 data/CVE/list.2023' main~1
has mode '100755 data/CVE/list.head' main~1
has mode '100644 data/CVE/list.2023'
info "parts keep the split file's mode"
EOF

test_case "R and C of a directory holding a split file move and copy its parts" <<'EOF'
# 3. R and C of a directory holding a split file
rules 'data/CVE/list.{1}'
printf 'old/CVE/list split record=%s into=%s head=old/CVE/list.head\n' \
	"'^CVE-(\d{4})-'" "'old/CVE/list.{1}'" >>"$SCRATCH/rules"
{ blob 1 readme; blob 2 "$LIST"
  commit 10; printf 'M 100644 :1 data/CVE/README\nM 100644 :2 data/CVE/list\n\n'
  commit 11 10; printf 'C data copy\n\n'
  commit 12 11; printf 'R data old\n\n'; } >"$SCRATCH/rdir.fe"
ok rdir
has rdir '100644 copy/CVE/list' main~1
has rdir '100644 copy/CVE/README' main~1
has rdir '100644 data/CVE/list.2024' main~1
has rdir '100644 old/CVE/list.2024'
has rdir '100644 old/CVE/list.head'
has rdir '100644 old/CVE/README'
lacks rdir '^100644 data/'
[ "$(git -C "$SCRATCH/rdir.git" cat-file -p main:copy/CVE/list)" = "${LIST%$'\n'}" ] ||
	die "rdir: the copy is not the file"
info "R and C of a directory holding a split file carry the file"
EOF

test_case "D of a directory takes its split file's parts along, elsewhere too" <<'EOF'
# 3b. D of a directory takes its split file along (parts elsewhere too);
# R of a directory holding parts but not their split file: exit 2 (the next case)
printf 'src/list split record=%s into=%s head=parts/list.head\n' \
	"'^CVE-(\d{4})-'" "'parts/list.{1}'" >"$SCRATCH/rules"
{ blob 1 readme; blob 2 "$LIST"
  commit 10; printf 'M 100644 :1 parts/README\nM 100644 :2 src/list\n\n'
  commit 11 10; printf 'D src\n\n'; } >"$SCRATCH/ddir.fe"
ok ddir
has ddir '100644 parts/list.2023' main~1
has ddir '100644 parts/README'
lacks ddir 'list'
info "D of a directory deletes its split file's parts"
EOF

test_case "R of a directory holding parts but not their split file: exit 2, naming a part" <<'EOF'
printf 'src/list split record=%s into=%s head=parts/list.head\n' \
	"'^CVE-(\d{4})-'" "'parts/list.{1}'" >"$SCRATCH/rules"
{ blob 1 readme; blob 2 "$LIST"
  commit 10; printf 'M 100644 :1 parts/README\nM 100644 :2 src/list\n\n'
  commit 11 10; printf 'R parts moved\n\n'; } >"$SCRATCH/rparts.fe"
refused rparts 2 "R 'parts'" "'parts/list.2023' is a part of src/list" 'rules:1'
info "R of parts alone: exit 2"
EOF

# 4. an incremental run learns the parts of the earlier run's commits from
# the original parent: it keeps the files beside them, deletes only the
# vanished parts, and ends where a single run ends
R="$SCRATCH/inc-src"
git init -q "$R"
mkdir -p "$R/data/CVE"
printf 'readme\n' >"$R/data/CVE/README"
printf '%s' "$LIST" >"$R/data/CVE/list"
git -C "$R" add -A && git -C "$R" commit -qm A
git -C "$R" branch part1
printf 'notes\n' >"$R/data/CVE/NOTES"
printf '%s' "$LIST2" >"$R/data/CVE/list"
git -C "$R" add -A && git -C "$R" commit -qm B
inc_run() { # NAME TARGET EXPORT-ARGS...
	local name="$1" target="$2"
	shift 2
	git -C "$R" fast-export --show-original-ids --reference-excluded-parents "$@" |
		sed 's#^commit refs/heads/part1$#commit refs/heads/main#; s#^reset refs/heads/part1$#reset refs/heads/main#' \
			>"$SCRATCH/$name.fe"
	(cd "$R" && "$MIGRATE" --rules "$SCRATCH/rules" --commit-map "$SCRATCH/inc.map" \
		--target-repo "$target") <"$SCRATCH/$name.fe" >"$SCRATCH/$name.fi" 2>"$SCRATCH/$name.err" ||
		die "$name: migrate failed: $(cat "$SCRATCH/$name.err")"
	git -C "$target" fast-import --quiet <"$SCRATCH/$name.fi" || die "$name: fast-import failed"
}

test_case "an incremental run keeps the files beside the earlier run's parts and deletes only the vanished ones" <<'EOF'
rules 'data/CVE/{1}'
git init -q --bare "$SCRATCH/inc.git"
inc_run inc1 "$SCRATCH/inc.git" part1
inc_run inc2 "$SCRATCH/inc.git" part1..main
git -C "$SCRATCH/inc.git" fsck --strict --no-dangling >/dev/null 2>&1 || die "inc: git fsck"
has inc '100644 data/CVE/README'
has inc '100644 data/CVE/NOTES'
has inc '100644 data/CVE/2025'
lacks inc 'data/CVE/2023'
EOF

test_case "the incremental run ends where a single run ends (the same commit ids)" <<'EOF'
# the incremental result of the case before, split
has inc '100644 data/CVE/2025'
lacks inc 'data/CVE/list$'
rules 'data/CVE/{1}'
git init -q --bare "$SCRATCH/single.git"
rm -f "$SCRATCH/inc.map"
inc_run single "$SCRATCH/single.git" main
[ "$(git -C "$SCRATCH/inc.git" rev-parse main)" = "$(git -C "$SCRATCH/single.git" rev-parse main)" ] ||
	die "the incremental run differs from the single run"
info "incremental: the earlier run's parts are known, README kept, same ids as one run"
EOF

test_done
