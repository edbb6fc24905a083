#!/usr/bin/env bash
# install.sh - migrate installs like a tool and says who it is (issue 11):
#  - `cmake --install` of the build under test into a temporary prefix puts
#    bin/migrate, the man pages (share/man/man1/migrate.1, migrate-CMD.1
#    for each command, share/man/man5/migrate-rules.5) and the bash
#    completion there;
#  - man reads the installed pages (man -l, and `man migrate-run` with
#    MANPATH), and `migrate help run` shows migrate-run(1) where man finds
#    it (`migrate help`, migrate(1)), as git help does;
#  - examples/ is installed whole in share/doc/migrate/examples, and each
#    installed rule file parses with the installed `migrate check-rules`
#    (the files a rule names beside it, such as secrets.txt, load too);
#  - the completion, sourced, completes `migrate r<TAB>` to remap and run,
#    options of run, and files or directories after the options that take
#    them;
#  - --version names the project version and, built from a clone, a commit
#    git knows; without man, or where man finds no page, `migrate help
#    [COMMAND]` equals `migrate [COMMAND] --help`;
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
# man finds no page (MANPATH: an empty folder), or there is no man at all
# (a PATH without it): the --help text
mkdir -p "$SCRATCH/nowhere"
for how in "MANPATH=$SCRATCH/nowhere" "PATH=$SCRATCH/nowhere"; do
	cmp -s <(env "$how" "$MIGRATE" help) <("$MIGRATE" --help) || die "migrate help ($how) differs from migrate --help"
	for c in run remap check-rules; do
		"$MIGRATE" "$c" --help >"$SCRATCH/$c.help" || die "migrate $c --help failed"
		grep -q "^usage: migrate $c" "$SCRATCH/$c.help" || die "migrate $c --help: $(head -1 "$SCRATCH/$c.help")"
		env "$how" "$MIGRATE" help "$c" | cmp -s - "$SCRATCH/$c.help" ||
			die "migrate help $c ($how) differs from migrate $c --help"
	done
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
PAGES="man1/migrate.1 man1/migrate-run.1 man1/migrate-push.1 man1/migrate-remap.1
	man1/migrate-analyze.1 man1/migrate-check-rules.1 man5/migrate-rules.5"
for f in bin/migrate share/bash-completion/completions/migrate $(printf 'share/man/%s ' $PAGES); do
	[ -f "$P/$f" ] || die "cmake --install did not install $f"
done
[ -x "$P/bin/migrate" ] || die "the installed migrate is not executable"
check_version "$P/bin/migrate"
for f in $PAGES; do
	page="$(basename "$f")"
	MANWIDTH=80 man -l "$P/share/man/$f" 2>"$SCRATCH/man.err" >"$SCRATCH/$page.txt" ||
		die "man -l $f failed: $(cat "$SCRATCH/man.err")"
	# man PAGE, as a user types it, with MANPATH the prefix's
	MANWIDTH=80 MANPATH="$P/share/man" man "${page%.*}" 2>/dev/null | cmp -s - "$SCRATCH/$page.txt" ||
		die "man ${page%.*} (MANPATH=$P/share/man) does not show the installed $f"
done
grep -q 'migrate help' "$SCRATCH/migrate.1.txt" && grep -q -- '--version' "$SCRATCH/migrate.1.txt" ||
	die "the man page does not document help and --version"
grep -q '^MIGRATE-RUN(1)' "$SCRATCH/migrate-run.1.txt" || die "man migrate-run: $(head -1 "$SCRATCH/migrate-run.1.txt")"
# migrate help CMD shows the page where man finds it, as git help does
MANWIDTH=80 MANPATH="$P/share/man" "$P/bin/migrate" help run >"$SCRATCH/help-run.txt" 2>"$SCRATCH/help.err" ||
	die "migrate help run (MANPATH=$P/share/man) failed: $(cat "$SCRATCH/help.err")"
cmp -s "$SCRATCH/help-run.txt" "$SCRATCH/migrate-run.1.txt" ||
	die "migrate help run (MANPATH=$P/share/man) is not the page: $(head -2 "$SCRATCH/help-run.txt")"
MANWIDTH=80 MANPATH="$P/share/man" "$P/bin/migrate" help | cmp -s - "$SCRATCH/migrate.1.txt" ||
	die "migrate help (MANPATH=$P/share/man) is not migrate(1)"
MANWIDTH=80 MANPATH="$P/share/man" "$P/bin/migrate" help check-rules | cmp -s - "$SCRATCH/migrate-check-rules.1.txt" ||
	die "migrate help check-rules (MANPATH=$P/share/man) is not migrate-check-rules(1)"
# CMD --help stays the plain text
MANPATH="$P/share/man" "$P/bin/migrate" run --help | grep -q '^usage: migrate run' ||
	die "migrate run --help is no longer the usage text"

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
info "installed: bin/migrate, 7 man pages (man -l, man migrate-run, migrate help run shows it), completion of r<TAB>: remap run"
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
for f in ./usr/bin/migrate ./usr/share/man/man1/migrate.1 ./usr/share/man/man1/migrate-run.1 \
	./usr/share/man/man5/migrate-rules.5 ./usr/share/bash-completion/completions/migrate \
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
