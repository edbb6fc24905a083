#!/usr/bin/env bash
# install.sh - migrate installs like a tool and says who it is (issue 11):
#  - `cmake --install` of the build under test into a temporary prefix puts
#    bin/migrate, share/man/man1/migrate.1 and the bash completion there;
#  - man reads the installed page (man -l, and `man migrate` with MANPATH);
#  - examples/ is installed whole in share/doc/migrate/examples, and each
#    installed rule file parses with the installed `migrate check-rules`
#    (the files a rule names beside it, such as secrets.txt, load too);
#  - the completion, sourced, completes `migrate r<TAB>` to remap and run,
#    options of run, and files or directories after the options that take
#    them;
#  - --version names the project version and, built from a clone, a commit
#    git knows; `migrate help [COMMAND]` equals `migrate [COMMAND] --help`;
#  - `cpack -G DEB` makes a .deb whose control fields dpkg-deb reads, and
#    whose binary, unpacked with dpkg -x, gives the refs of the plain
#    fast-export | fast-import pipeline when it runs without rules.
# Needs the CMake build directory of $MIGRATE (skipped, exit 77, without).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

BUILD="$(cd "$(dirname "$MIGRATE")" && pwd)"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
	echo "SKIP: $MIGRATE is not in a CMake build directory: nothing to install"
	exit 77
fi
version="$(sed -n 's/^project(migrate VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")"
[ -n "$version" ] || die "no project version in CMakeLists.txt"

# check_version BINARY: --version is the project's, with git describe in a clone
check_version() { # BINARY
	local out id
	out="$("$1" --version)" || die "$1 --version failed"
	case "$out" in
	"migrate $version" | "migrate $version ("*")") ;;
	*) die "--version says '$out', not 'migrate $version [(describe)]'" ;;
	esac
	if [ -d "$ROOT/.git" ] || [ -f "$ROOT/.git" ]; then
		# built from a clone: git describe of a commit this clone has
		id="${out#*(}"
		id="${id%)}"
		id="${id%-dirty}"
		id="${id##*-g}"
		[ "$out" != "migrate $version" ] || die "built from a clone, but --version has no describe: $out"
		git -C "$ROOT" rev-parse -q --verify "$id^{commit}" >/dev/null ||
			die "--version names '$id', which is no commit of $ROOT"
	fi
}

test_case "--version, help" <<'EOF'
check_version "$MIGRATE"
cmp -s <("$MIGRATE" help) <("$MIGRATE" --help) || die "migrate help differs from migrate --help"
for c in run remap; do
	"$MIGRATE" "$c" --help >"$SCRATCH/$c.help" || die "migrate $c --help failed"
	grep -q "^usage: migrate $c" "$SCRATCH/$c.help" || die "migrate $c --help: $(head -1 "$SCRATCH/$c.help")"
	"$MIGRATE" help "$c" | cmp -s - "$SCRATCH/$c.help" || die "migrate help $c differs from migrate $c --help"
done
"$MIGRATE" check-rules --help | grep -q 'check-rules' || die "migrate check-rules --help"
rc=0
"$MIGRATE" help frobnicate >"$SCRATCH/out" 2>"$SCRATCH/err" || rc=$?
[ "$rc" = 1 ] || die "migrate help frobnicate: exit $rc, not 1"
grep -q "no command 'frobnicate'" "$SCRATCH/err" || die "migrate help frobnicate: $(cat "$SCRATCH/err")"
[ ! -s "$SCRATCH/out" ] || die "migrate help frobnicate wrote to standard output"
info "--version: $("$MIGRATE" --version); help [run|remap] = --help; help of no command: exit 1"
EOF

test_case "cmake --install" <<'EOF'
P="$SCRATCH/prefix"
cmake --install "$BUILD" --prefix "$P" >"$SCRATCH/install.log" || die "cmake --install failed"
for f in bin/migrate share/man/man1/migrate.1 share/bash-completion/completions/migrate; do
	[ -f "$P/$f" ] || die "cmake --install did not install $f"
done
[ -x "$P/bin/migrate" ] || die "the installed migrate is not executable"
check_version "$P/bin/migrate"
man -l "$P/share/man/man1/migrate.1" 2>"$SCRATCH/man.err" >"$SCRATCH/man.txt" ||
	die "man -l failed: $(cat "$SCRATCH/man.err")"
grep -q 'migrate help' "$SCRATCH/man.txt" && grep -q -- '--version' "$SCRATCH/man.txt" ||
	die "the man page does not document help and --version"
MANPATH="$P/share/man" man migrate 2>/dev/null | cmp -s - "$SCRATCH/man.txt" ||
	die "man migrate (MANPATH=$P/share/man) does not show the installed page"

# the completion, as bash-completion loads it: sourced, then its function
complete_words() { # WORD... (the last one is being completed)
	(cd "$SCRATCH/cwd" && bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_migrate; printf "%s\n" "${COMPREPLY[@]}"' sh \
		"$P/share/bash-completion/completions/migrate" "$@") | LC_ALL=C sort
}
mkdir -p "$SCRATCH/cwd/rules.d" && : >"$SCRATCH/cwd/rules.txt"
[ "$(complete_words migrate r | tr '\n' ' ')" = "remap run " ] ||
	die "migrate r<TAB> gives '$(complete_words migrate r)', not remap and run"
[ "$(complete_words migrate run --ru)" = "--rules" ] || die "migrate run --ru<TAB>: $(complete_words migrate run --ru)"
[ "$(complete_words migrate run --rules r | tr '\n' ' ')" = "rules.d rules.txt " ] ||
	die "migrate run --rules r<TAB>: $(complete_words migrate run --rules r)"
[ "$(complete_words migrate run --to r)" = "rules.d" ] || die "migrate run --to r<TAB> offers files"
[ "$(complete_words migrate help c)" = "check-rules" ] || die "migrate help c<TAB>"
[ "$(complete_words migrate --vers)" = "--version" ] || die "migrate --vers<TAB>"
info "installed: bin/migrate, the man page (man -l, man migrate), completion of r<TAB>: remap run"
EOF

test_case "the installed examples" <<'EOF'
P="$SCRATCH/prefix"
[ -x "$P/bin/migrate" ] || die "needs the prefix the case 'cmake --install' installed"
E="$P/share/doc/migrate/examples"
[ -d "$E" ] || die "cmake --install did not install share/doc/migrate/examples"
diff -u <(cd "$ROOT/examples" && find . -type f | LC_ALL=C sort) \
	<(cd "$E" && find . -type f | LC_ALL=C sort) ||
	die "the installed examples are not the files of examples/"
n=0
for f in "$E"/*.rules; do
	"$P/bin/migrate" check-rules --rules "$f" >/dev/null 2>"$SCRATCH/cr.err" ||
		die "installed $(basename "$f"): check-rules failed: $(cat "$SCRATCH/cr.err")"
	[ ! -s "$SCRATCH/cr.err" ] || die "installed $(basename "$f"): check-rules says $(cat "$SCRATCH/cr.err")"
	# a rule naming a file (replace-text=FILE, relative to the rule file):
	# the filter loads it, on a stream with nothing in it
	if grep -q 'replace-text=' "$f"; then
		(cd "$SCRATCH" && printf 'done\n' | "$P/bin/migrate" --rules "$f" --dry-run \
			-o "$SCRATCH/empty.fi") 2>"$SCRATCH/cr.err" ||
			die "installed $(basename "$f"): what it names does not load: $(cat "$SCRATCH/cr.err")"
	fi
	n=$((n + 1))
done
[ "$n" -gt 0 ] || die "no rule file among the installed examples"
info "$n installed example rule files parse with the installed check-rules ($E)"
EOF

test_case "the Debian package" <<'EOF'
mkdir -p "$SCRATCH/pkg"
(cd "$SCRATCH/pkg" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$SCRATCH/pkg") \
	>"$SCRATCH/cpack.log" 2>&1 || die "cpack failed: $(tail -5 "$SCRATCH/cpack.log")"
deb="$(find "$SCRATCH/pkg" -maxdepth 1 -name 'migrate_*.deb')"
[ -n "$deb" ] && [ "$(printf '%s\n' "$deb" | wc -l)" = 1 ] || die "cpack made no single migrate_*.deb"
[ "$(dpkg-deb -f "$deb" Package)" = migrate ] || die "the package is not called migrate"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || die "package version $(dpkg-deb -f "$deb" Version)"
dpkg-deb -f "$deb" Depends | grep -q 'libc6' || die "no shared-library dependencies: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -f "$deb" Depends | grep -qw git || die "the package does not depend on git"
dpkg-deb -c "$deb" >"$SCRATCH/deb.list"
for f in ./usr/bin/migrate ./usr/share/man/man1/migrate.1 ./usr/share/bash-completion/completions/migrate \
	./usr/share/doc/migrate/examples/binaries-by-extension.rules; do
	grep -q " $f\$" "$SCRATCH/deb.list" || die "the package lacks $f"
done
dpkg -x "$deb" "$SCRATCH/x" || die "dpkg -x failed"
check_version "$SCRATCH/x/usr/bin/migrate"
# the unpacked binary at work: without rules, the plain pipeline's refs
"$HERE/make_tricky_repo.sh" "$SCRATCH/tricky" >/dev/null
export_stream "$SCRATCH/tricky" >"$SCRATCH/in.fe"
(cd "$SCRATCH/tricky" && "$SCRATCH/x/usr/bin/migrate" --commit-map "$SCRATCH/map") \
	<"$SCRATCH/in.fe" >"$SCRATCH/out.fi" || die "the packaged migrate failed"
import_stream "$SCRATCH/new" "$SCRATCH/marks" <"$SCRATCH/out.fi" || die "fast-import failed"
import_stream "$SCRATCH/plain" "$SCRATCH/plain.marks" <"$SCRATCH/in.fe" || die "plain fast-import failed"
diff -u <(refs_of "$SCRATCH/plain") <(refs_of "$SCRATCH/new") ||
	die "the packaged migrate gave other refs than fast-export | fast-import"
info "$(basename "$deb"): Depends $(dpkg-deb -f "$deb" Depends); unpacked, its migrate gives the refs of the plain pipeline"
EOF
test_done
