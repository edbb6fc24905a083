#!/usr/bin/env bash
# make_tricky_repo.sh DIR - build, with real git, a repository holding every
# construct issue 2 lists: linear and merge history, an octopus merge,
# lightweight and annotated tags, a tag of a tag, a tag of a blob, a signed
# tag, an empty commit, an ISO-8859-1 commit with an encoding header, a
# message without final newline, paths with spaces, quotes, backslashes,
# tabs, newlines and non-ASCII bytes, an executable, a symlink, a submodule
# gitlink, a notes ref, a rename, a file deleted and re-added, branches
# sharing blobs, a directory replaced by a file, tree-order corner cases,
# and a second unrelated root.
#
# Dates are fixed (one tick per commit), so the repository is the same on
# every run except for the signature bytes and the random binary.
set -euo pipefail

if [ "$#" -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 1
fi
DIR="$1"
if [ -e "$DIR" ]; then
	echo "$0: $DIR exists" >&2
	exit 1
fi

export GIT_CONFIG_NOSYSTEM=1
export LC_ALL=C
export GIT_AUTHOR_NAME="A U Thor" GIT_AUTHOR_EMAIL="author@example.org"
export GIT_COMMITTER_NAME="C O Mitter" GIT_COMMITTER_EMAIL="committer@example.org"
T=1112911993
tick() {
	T=$((T + 60))
	export GIT_AUTHOR_DATE="$T +0200" GIT_COMMITTER_DATE="$T +0200"
}
tick

git init -q -b main "$DIR"
cd "$DIR"
git config commit.gpgsign false
git config tag.gpgsign false
git config core.symlinks true
git config advice.detachedHead false
git config advice.nestedTag false

commit() { tick; git commit -q "$@"; }

# --- root commit: odd paths, an executable, a symlink, a binary ----------
printf 'hello\n' >README
printf '#!/bin/sh\necho run\n' >run.sh
chmod +x run.sh
ln -s README link
printf 'space\n' >'sp ace.txt'
printf 'quote\n' >'quo"te.txt'
printf 'backslash\n' >'back\slash'
printf 'tab\n' >"$(printf 'ta\tb.txt')"
printf 'newline\n' >"$(printf 'new\nline')"
printf 'utf8\n' >"$(printf 'h\303\251llo.txt')"
printf 'latin1\n' >"$(printf 'lat\351n.txt')"
mkdir -p 'dir with space/sub' deep/a/b
printf 'deep\n' >deep/a/b/c.txt
printf 'in dir\n' >'dir with space/sub/f'
: >empty
head -c 70000 /dev/urandom >data.bin
git add -A
commit -m 'root: odd paths, executable, symlink, binary'

# --- linear history: modify, chmod only, rename --------------------------
printf 'hello\nworld\n' >README
commit -am 'modify README'
chmod -x run.sh
commit -am 'chmod -x run.sh (mode change only)'
git mv 'sp ace.txt' 'renamed space.txt'
commit -m 'rename a file with a space'

# --- delete and re-add the same content ----------------------------------
git rm -q deep/a/b/c.txt
commit -m 'delete deep file (prunes empty dirs)'
mkdir -p deep/a/b
printf 'deep\n' >deep/a/b/c.txt
git add deep
commit -m 're-add the deep file'

# --- directory replaced by a file, and tree-order corner cases -----------
git rm -q -r 'dir with space/sub'
mkdir -p 'dir with space'
printf 'now a file\n' >'dir with space/sub'
mkdir -p sort/bar- sort/foo
for f in sort/bar-/x sort/bar.c sort/foo-bar sort/foo.c sort/foo/x sort/foo0; do
	printf '%s\n' "$f" >"$f"
done
git add -A
commit -m 'directory becomes a file; names around foo/ and bar-'

# --- a submodule gitlink (no .gitmodules needed for the stream) ----------
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD~2),sort/bar"
git update-index --add --cacheinfo "160000,$(git rev-parse HEAD~1),sub"
commit -m 'gitlinks sub and sort/bar'

# --- an empty commit --------------------------------------------------------
commit --allow-empty -m 'an empty commit'

# --- ISO-8859-1 message with an encoding header ------------------------------
printf 'latin-1 message: caf\351 cr\350me\n\nbody \351t\351\n' >.git/tricky-msg
tick
git -c i18n.commitEncoding=ISO-8859-1 commit -q --allow-empty -F .git/tricky-msg
rm -f .git/tricky-msg
if ! git cat-file commit HEAD | grep -q '^encoding ISO-8859-1$'; then
	echo "$0: no encoding header written" >&2
	exit 1
fi

# --- a message without final newline (commit-tree keeps it verbatim) -----
tick
printf 'no final newline' >.git/tricky-msg
c="$(git commit-tree "HEAD^{tree}" -p HEAD -F .git/tricky-msg)"
rm -f .git/tricky-msg
git update-ref refs/heads/main "$c"
if [ "$(git cat-file commit HEAD | tail -c 1 | od -An -c | tr -d ' ')" = '\n' ]; then
	echo "$0: commit-tree added a final newline" >&2
	exit 1
fi

# --- a branch that shares blobs with main, merged back -------------------
git checkout -q -b feature HEAD~3
printf 'hello\nworld\n' >shared-copy         # same blob as README on main
printf 'feature work\n' >feature.txt
git add -A
commit -m 'feature: shares a blob with main'
printf 'more feature\n' >>feature.txt
commit -am 'feature: second commit'
git checkout -q main
tick
git merge -q --no-ff -m 'merge feature' feature

# --- an octopus merge of three branches ----------------------------------
for b in o1 o2 o3; do
	git checkout -q -b "$b" main
	printf '%s\n' "$b" >"$b.txt"
	git add "$b.txt"
	commit -m "octopus leg $b"
done
git checkout -q main
tick
git merge -q --no-ff -m 'octopus merge' o1 o2 o3 >/dev/null
if [ "$(git cat-file commit HEAD | grep -c '^parent ')" -ne 4 ]; then
	echo "$0: octopus merge does not have 4 parents" >&2
	exit 1
fi
git branch -q -D o2 # its commit stays reachable through the merge

printf 'after octopus\n' >after.txt
git add after.txt
commit -m 'after the octopus'
printf 'last\n' >>after.txt
commit -am 'last commit on main'

# --- a second, unrelated root that shares a blob -------------------------
git checkout -q --orphan other
git rm -q -r --cached .
git clean -q -fdx
printf 'hello\n' >README                      # same blob as main's first README
printf 'other root\n' >other.txt
git add README other.txt
commit -m 'unrelated root commit'
printf 'other 2\n' >>other.txt
commit -am 'second commit on the unrelated branch'
git checkout -q -f main

# --- tags ----------------------------------------------------------------
tick
git tag light HEAD~1                                   # lightweight
git tag -a ann -m 'annotated tag' HEAD~2               # annotated
git tag -a outer -m 'a tag of a tag' ann               # tag of a tag
git tag -a blobtag -m 'a tag of a blob' "$(git rev-parse 'HEAD:README')"
git tag -a ann-other -m 'annotated on the unrelated root' other
git update-ref refs/custom/keep HEAD~4                 # a ref outside heads/tags

# A signed tag: a real throwaway GPG key when gpg can make one quickly,
# otherwise a tag object whose message holds a signature block (fast-export
# only looks for "\n-----BEGIN PGP SIGNATURE-----\n").
signed=0
if command -v gpg >/dev/null 2>&1; then
	GNUPGHOME="$(mktemp -d "${TMPDIR:-/tmp}/migrate-gpg.XXXXXX")"
	export GNUPGHOME
	if timeout 60 gpg --batch --quiet --passphrase '' --quick-gen-key \
		'Tag Signer <signer@example.org>' ed25519 sign never >/dev/null 2>&1 &&
		timeout 60 git -c user.signingkey=signer@example.org \
			tag -s signed -m 'a signed tag' HEAD~3 >/dev/null 2>&1; then
		signed=1
	fi
	gpgconf --kill all >/dev/null 2>&1 || true
	rm -rf "$GNUPGHOME"
	unset GNUPGHOME
fi
if [ "$signed" = 0 ]; then
	git tag -d signed >/dev/null 2>&1 || true
	tag="$(printf '%s\n' \
		"object $(git rev-parse HEAD~3)" \
		'type commit' \
		'tag signed' \
		"tagger C O Mitter <committer@example.org> $T +0200" \
		'' \
		'a signed tag (forged signature block)' \
		'-----BEGIN PGP SIGNATURE-----' \
		'' \
		'iHUEABYKAB0WIQRmb3JnZWQgc2lnbmF0dXJlIGJsb2NrAAAAAAAKCRBmb3JnZWQ=' \
		'=abcd' \
		'-----END PGP SIGNATURE-----' | git mktag)"
	git update-ref refs/tags/signed "$tag"
fi
if ! git cat-file tag signed | grep -q '^-----BEGIN PGP SIGNATURE-----$'; then
	echo "$0: the signed tag has no signature block" >&2
	exit 1
fi

# --- notes ---------------------------------------------------------------
tick
git notes add -m 'a note on the octopus' HEAD~2
tick
git notes add -m 'a note on the root' "$(git rev-list --max-parents=0 main)"

git gc -q --auto
echo "made $DIR: $(git rev-list --all | wc -l) commits, $(git for-each-ref | wc -l) refs, signed tag: $([ "$signed" = 1 ] && echo gpg || echo forged)"
