# shellcheck shell=bash
# scripts/lib.sh - shared by scripts/test and scripts/demo: the package list,
# the installer and the build steps. Source it; it defines, it runs nothing.

# Debian packages the project needs to build, test, fuzz and demo (man-db
# reads the installed man pages and serves `migrate help`, groff-base's
# groff checks that they render without a warning, dpkg-dev and file serve
# cpack -G DEB).
# One list, used by every script.
MIGRATE_PACKAGES=(
	git git-lfs git-annex git-filter-repo
	cmake make pkg-config gcc libc6-dev
	clang libclang-rt-14-dev
	zlib1g-dev libpcre2-dev libssl-dev uthash-dev libcmocka-dev
	python3 gnupg time strace
	man-db groff-base dpkg-dev file
)

# The repository root, whatever the caller's cwd.
MIGRATE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

say() { printf '==> %s\n' "$*"; }

# install_packages: apt-get install whatever of MIGRATE_PACKAGES is missing.
# Idempotent: asks dpkg-query first and touches apt only when needed.
install_packages() {
	local missing=() p status
	for p in "${MIGRATE_PACKAGES[@]}"; do
		status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
		case "$status" in
		*" installed") ;;
		*) missing+=("$p") ;;
		esac
	done
	if [ "${#missing[@]}" -eq 0 ]; then
		say "packages: all ${#MIGRATE_PACKAGES[@]} present"
		return 0
	fi
	say "installing: ${missing[*]}"
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		sudo=(sudo)
	fi
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# run_logged NAME CMD...: run a build step with its output in
# ${TMPDIR:-/tmp}/migrate-NAME.log; on failure show the end of it.
run_logged() {
	local name="$1" log
	shift
	log="${TMPDIR:-/tmp}/migrate-$name.log"
	if ! "$@" >"$log" 2>&1; then
		grep -E 'error|Error|warning' "$log" | head -n 40 >&2 || true
		echo "---- last lines of $log:" >&2
		tail -n 25 "$log" >&2
		echo "$name failed: $*" >&2
		return 1
	fi
}

# build_release: build/ (RelWithDebInfo), the binary scripts/demo runs.
build_release() {
	say "build/ (RelWithDebInfo)"
	run_logged build-configure cmake -S "$MIGRATE_ROOT" -B "$MIGRATE_ROOT/build" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo
	run_logged build cmake --build "$MIGRATE_ROOT/build" -j2
}

# build_asan: build-asan/ with ASan+UBSan; the unit and integration tests
# run this one.
build_asan() {
	say "build-asan/ (ASan+UBSan)"
	run_logged build-asan-configure cmake -S "$MIGRATE_ROOT" -B "$MIGRATE_ROOT/build-asan" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIGRATE_SANITIZE=ON
	run_logged build-asan cmake --build "$MIGRATE_ROOT/build-asan" -j2
}

# build_fuzz: build-fuzz/ with clang, libFuzzer and ASan+UBSan, no unit
# tests. Only the fuzz_* targets are built: the migrate binary is not a
# fuzzer and does not link libFuzzer's coverage hooks.
build_fuzz() {
	say "build-fuzz/ (clang, libFuzzer, ASan+UBSan)"
	CC=clang run_logged build-fuzz-configure cmake -S "$MIGRATE_ROOT" \
		-B "$MIGRATE_ROOT/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DMIGRATE_FUZZ=ON -DMIGRATE_SANITIZE=ON -DMIGRATE_TESTS=OFF
	local targets
	mapfile -t targets < <(cmake --build "$MIGRATE_ROOT/build-fuzz" --target help |
		sed -n 's/^\.\.\. \(fuzz_[A-Za-z0-9_]*\).*/\1/p')
	if [ "${#targets[@]}" -eq 0 ]; then
		say "no fuzz_* targets"
		return 0
	fi
	run_logged build-fuzz cmake --build "$MIGRATE_ROOT/build-fuzz" -j2 \
		--target "${targets[@]}"
}
