# shellcheck shell=bash
# scripts/lib.sh - shared by scripts/test and scripts/demo: the package list,
# the installer and the build steps. Source it; it defines, it runs nothing.

# Debian packages the project needs to build, test, fuzz and demo.
# One list, used by every script. (git-annex joins when its issue comes.)
MIGRATE_PACKAGES=(
	git git-lfs
	cmake make pkg-config gcc libc6-dev
	clang libclang-rt-14-dev
	zlib1g-dev libpcre2-dev libssl-dev uthash-dev libcmocka-dev
	python3 gnupg time
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

# build_release: build/ (RelWithDebInfo), the binary scripts/demo runs.
build_release() {
	say "build/ (RelWithDebInfo)"
	cmake -S "$MIGRATE_ROOT" -B "$MIGRATE_ROOT/build" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$MIGRATE_ROOT/build" -j2
}

# build_asan: build-asan/ with ASan+UBSan; the unit and integration tests
# run this one.
build_asan() {
	say "build-asan/ (ASan+UBSan)"
	cmake -S "$MIGRATE_ROOT" -B "$MIGRATE_ROOT/build-asan" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIGRATE_SANITIZE=ON >/dev/null
	cmake --build "$MIGRATE_ROOT/build-asan" -j2
}

# build_fuzz: build-fuzz/ with clang and libFuzzer, no unit tests.
build_fuzz() {
	say "build-fuzz/ (clang, libFuzzer)"
	CC=clang cmake -S "$MIGRATE_ROOT" -B "$MIGRATE_ROOT/build-fuzz" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIGRATE_FUZZ=ON \
		-DMIGRATE_TESTS=OFF >/dev/null
	cmake --build "$MIGRATE_ROOT/build-fuzz" -j2
}
