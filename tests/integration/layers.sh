#!/usr/bin/env bash
# layers.sh - the house keeps its shape (docs/DESIGN.md, "The house").
#
# Folders are layered; a folder may use its own files and the contract
# header of a folder below it, never one above, never another folder's
# private header:
#
#   rewrite/cli > rewrite/run > rewrite/engine, rewrite/analyze > rewrite/blob
#     > rewrite/report
#     > rewrite/git > stream, rules, split, pointerize, replace > common
#
# Checked twice: in the sources (every #include), and in the built static
# libraries (every symbol a library needs from another one must come from
# a library below it; nm judges). Also: only rewrite/cli calls exit() or
# writes to stderr (besides
# rewrite/report, whose job that is; die() and warning() hand their text to
# routines the command line sets: common.h).
set -euo pipefail
. "$(dirname "$0")/lib/lib.sh"

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(dirname "$MIGRATE")"
cd "$ROOT"

test_case "every #include goes down the layers, to a folder's contract header" <<'CASE'
python3 - "$ROOT" <<'EOF'
import os, re, sys
root = sys.argv[1]
rank = {'common': 0, 'stream': 1, 'rules': 1, 'split': 1, 'pointerize': 1,
        'replace': 1,
        'rewrite/git': 2, 'rewrite/report': 3, 'rewrite/blob': 4,
        'rewrite/engine': 5, 'rewrite/analyze': 5, 'rewrite/run': 6,
        'rewrite/cli': 7}
contract = {'common': 'common.h', 'stream': 'stream.h', 'rules': 'rules.h',
            'split': 'split.h', 'pointerize': 'pointerize.h',
            'replace': 'replace.h',
            'rewrite/git': 'git.h', 'rewrite/report': 'report.h',
            'rewrite/blob': 'blob.h', 'rewrite/engine': 'engine.h',
            'rewrite/analyze': 'analyze.h', 'rewrite/run': 'run.h',
            'rewrite/cli': None}
bad = []
seen = 0
for folder in rank:
    d = os.path.join(root, folder)
    for name in sorted(os.listdir(d)):
        if not name.endswith(('.c', '.h')):
            continue
        path = os.path.join(d, name)
        for n, line in enumerate(open(path, encoding='utf-8'), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            seen += 1
            inc = m.group(1)
            target = os.path.normpath(os.path.join(d, inc))
            if not os.path.exists(target):
                target = os.path.normpath(os.path.join(root, inc))
            if not os.path.exists(target):
                continue  # generated (version.h)
            tfolder = os.path.relpath(os.path.dirname(target), root)
            where = '%s/%s:%d' % (folder, name, n)
            if tfolder == folder:
                continue
            if tfolder not in rank:
                bad.append('%s: includes %s, outside the folders' % (where, inc))
            elif rank[tfolder] >= rank[folder]:
                bad.append('%s: includes %s of %s, which is not below %s'
                           % (where, inc, tfolder, folder))
            elif os.path.basename(target) != contract[tfolder]:
                bad.append('%s: includes %s, a private header of %s (its '
                           'contract is %s)' % (where, inc, tfolder, contract[tfolder]))
for b in bad:
    print('FAIL: ' + b)
if bad:
    sys.exit(1)
print('info: %d includes across %d folders follow the layers' % (seen, len(rank)))
EOF
CASE

# the built libraries: a symbol defined in one library and needed by
# another must come from below ($tmp: their symbols, nm's lists)
libs=(common:0 stream:1 rules:1 split:1 pointerize:1 replace:1 git:2 report:3 blob:4 engine:5 analyze:5 run:6 cli:7)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"; cleanup_scratch' EXIT

test_case "the built libraries link downwards only (nm)" <<'EOF'
for l in "${libs[@]}"; do
	name="${l%%:*}"
	a="$BUILD/libmigrate_$name.a"
	[ -f "$a" ] || die "no $a: build first"
	nm -g --defined-only "$a" 2>/dev/null | awk 'NF==3 && $2 ~ /[TDBR]/ {print $3}' | sort -u >"$tmp/$name.def"
	nm -u "$a" 2>/dev/null | awk '{print $NF}' | sort -u >"$tmp/$name.und"
done
upward=0
for l in "${libs[@]}"; do
	name="${l%%:*}" r="${l##*:}"
	for m in "${libs[@]}"; do
		other="${m%%:*}" q="${m##*:}"
		[ "$other" = "$name" ] && continue
		[ "$q" -lt "$r" ] && continue
		while read -r sym; do
			echo "FAIL: libmigrate_$name needs $sym from libmigrate_$other, which is not below it"
			upward=1
		done < <(comm -12 "$tmp/$name.und" "$tmp/$other.def")
	done
done
[ "$upward" = 0 ] || exit 1
info "the ${#libs[@]} libraries link downwards only (nm)"
EOF

test_case "only rewrite/cli calls exit()" <<'EOF'
# one place that exits (one_spawner.sh: one place that starts a process)
exits="$(grep -nE '(^|[^_a-z])exit\s*\(' common/*.c stream/*.c rules/*.c split/*.c replace/*.c \
	pointerize/*.c rewrite/git/*.c rewrite/report/*.c rewrite/blob/*.c \
	rewrite/engine/*.c rewrite/analyze/*.c rewrite/run/*.c || true)"
[ -z "$exits" ] || die "exit() outside rewrite/cli:
$exits"
info "exit() is the command line's"
EOF

test_case "stderr is the command line's and the outputs' (progress, a report to -)" <<'EOF'
# stderr is the command line's, and the outputs' (progress, a report to -)
prints="$(grep -nE '(fprintf|vfprintf|fflush)\(stderr|, *stderr\)|perror\(' common/*.c stream/*.c rules/*.c split/*.c replace/*.c \
	pointerize/*.c rewrite/git/*.c rewrite/blob/*.c rewrite/engine/*.c \
	rewrite/analyze/*.c || true)"
[ -z "$prints" ] || die "stderr used below the command line:
$prints"
info "stderr is the command line's"
EOF

test_done
