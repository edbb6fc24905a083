#!/usr/bin/env bash
# outputs_device.sh - an output named on the command line that is a
# character device is written into, never renamed over.
#
# Run as root (CI containers, most Docker images), a rename over
# /dev/null makes the machine's /dev/null a regular file. A node like
# /dev/null (1,3), made with mknod in the scratch folder, given as every
# output of the filter and of `migrate run`: after each run it is still a
# character device with the same numbers, no temp file is left beside it
# nor in TMPDIR. Needs root (mknod): skipped with the reason otherwise.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"

DEV="$SCRATCH/dev"
mkdir -p "$DEV"
if [ "$(id -u)" != 0 ] || ! mknod "$DEV/null" c 1 3 2>/dev/null; then
	echo "SKIP: mknod of a character device needs root (running as uid $(id -u))"
	exit 77
fi
chmod 666 "$DEV/null"
export TMPDIR="$SCRATCH/tmp"
mkdir -p "$TMPDIR"

is_null_device() {
	[ -c "$DEV/null" ] || die "$1: $DEV/null is now a $(stat -c %F "$DEV/null")"
	[ "$(stat -c '%t,%T' "$DEV/null")" = "1,3" ] || die "$1: the device numbers changed"
	[ "$(ls "$DEV")" = null ] || die "$1: left beside the device: $(ls "$DEV")"
	[ -z "$(ls -A "$TMPDIR")" ] || die "$1: left in TMPDIR: $(ls -A "$TMPDIR")"
}

R="$SCRATCH/repo"
git init -q "$R"
(
	cd "$R"
	for i in 1 2 3; do
		echo "$i" >"f$i.txt"
		head -c 3000 /dev/zero | tr '\0' "$i" >"a$i.bin"
		git add -A && git commit -qm "commit $i"
	done
)
printf '*.bin lfs\n' >"$SCRATCH/rules"
export_stream "$R" >"$SCRATCH/s.fe"

test_case "the filter: every output into a character device, twice" <<'EOF'
(cd "$R" && run_migrate --rules "$SCRATCH/rules" --store "$SCRATCH/store" \
	--commit-map "$DEV/null" --ref-map "$DEV/null" --export-marks "$DEV/null" \
	--report "$DEV/null" --report-json "$DEV/null" \
	<"$SCRATCH/s.fe" >"$SCRATCH/out") || die "the filter into a device failed"
grep -q '^commit refs/heads/main' "$SCRATCH/out" || die "no stream came out"
is_null_device "the filter"
# a second run: the "existing map" is the device, never read back
(cd "$R" && run_migrate --rules "$SCRATCH/rules" --store "$SCRATCH/store" \
	--commit-map "$DEV/null" <"$SCRATCH/s.fe" >"$SCRATCH/out2") ||
	die "the filter, again, into a device failed"
cmp -s "$SCRATCH/out" "$SCRATCH/out2" || die "the second run's stream differs"
is_null_device "the filter, again"
info "filter: every output into a character device: still the device (1,3), nothing left"
EOF

test_case "--dry-run -o into a character device" <<'EOF'
(cd "$R" && run_migrate --rules "$SCRATCH/rules" --dry-run -o "$DEV/null" \
	<"$SCRATCH/s.fe" >/dev/null) || die "--dry-run -o DEVICE failed"
is_null_device "--dry-run -o"
EOF

test_case "analyze --json into a character device" <<'EOF'
run_migrate analyze --repo "$R" --json "$DEV/null" >/dev/null || die "analyze --json DEVICE failed"
is_null_device "analyze --json"
EOF

test_case "run --to: its copies into a character device" <<'EOF'
run_migrate run -q --rules "$SCRATCH/rules" --repo "$R" --to "$SCRATCH/new" \
	--commit-map "$DEV/null" --ref-map "$DEV/null" --report "$DEV/null" \
	--report-json "$DEV/null" || die "run --to into a device failed"
is_null_device "run --to"
[ -s "$SCRATCH/new/.git/migrate/commit-map" ] || die "run --to: the state's map is missing"
info "--dry-run -o, analyze --json, run --to: still the device, nothing left"
EOF

test_done
