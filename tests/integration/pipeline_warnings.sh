#!/usr/bin/env bash
# pipeline_warnings.sh - the hand-built pipeline says what it cannot get
# right on its own (issue 12, item 6):
#  * an export without --show-original-ids gives a commit map that maps
#    nothing: a warning naming --show-original-ids (none with them);
#  * where the LFS objects went, every time some were stored: the default
#    store is the repository of the current directory, which need not be
#    the one fast-import writes; the directory named is the one holding
#    them (git lfs fsck judges it);
#  * --quiet silences both.
set -euo pipefail
. "$(dirname "$0")/lib/lib.sh"

cd "$SCRATCH"
git init -q src
printf 'text\n' >src/a.txt
head -c 3000 /dev/urandom >src/b.bin
git -C src add -A
git -C src commit -qm one
printf 'more\n' >>src/a.txt
git -C src commit -qam two
printf '*.bin lfs\n' >rules
git -C src fast-export --all >plain.fi
git -C src fast-export --all --show-original-ids >ids.fi

test_case "an export without original ids: the map maps nothing, and a warning names --show-original-ids" <<'EOF'
(cd src && "$MIGRATE" --rules ../rules --commit-map ../map1 <../plain.fi >../out1.fi 2>../err1) ||
	die "migrate failed: $(cat err1)"
[ "$(wc -l <map1)" = 1 ] || die "the map has entries: $(cat map1)"
grep -q -- '--show-original-ids' err1 || die "no warning about --show-original-ids: $(cat err1)"
grep -q 'maps none' err1 || die "the warning does not say the map is empty: $(cat err1)"
EOF

test_case "with original ids: no such warning, and the map holds both commits" <<'EOF'
(cd src && "$MIGRATE" --rules ../rules --commit-map ../map2 <../ids.fi >../out2.fi 2>../err2) ||
	die "migrate failed: $(cat err2)"
[ "$(wc -l <map2)" = 3 ] || die "map2: $(cat map2)"
! grep -q -- '--show-original-ids' err2 || die "a warning with original ids: $(cat err2)"
EOF

test_case "the default store is named, and it holds the objects the new repository needs (git lfs fsck)" <<'EOF'
# out2.fi and err2: the run of the case before
[ -s err2 ] || die "no messages from the run with original ids (the case before failed)"
want="$(cd src && git rev-parse --path-format=absolute --git-common-dir)/lfs/objects"
grep -qF "1 LFS object(s) stored in $want" err2 || die "the store is not named: $(cat err2)"
git init -q --bare new.git
git -C new.git fast-import --quiet <out2.fi
git clone -q new.git co 2>/dev/null
mkdir -p co/.git/lfs
cp -r "$want" co/.git/lfs/objects
(cd co && git lfs install --local >/dev/null && git lfs fsck >/dev/null) ||
	die "the objects named are not the ones the new repository needs"
EOF

test_case "--store DIR is named as given" <<'EOF'
(cd src && "$MIGRATE" --rules ../rules --store ../st <../ids.fi >/dev/null 2>../err3) ||
	die "migrate --store failed: $(cat err3)"
grep -qF "1 LFS object(s) stored in ../st" err3 || die "--store is not named: $(cat err3)"
EOF

test_case "--quiet says nothing" <<'EOF'
(cd src && "$MIGRATE" -q --rules ../rules --commit-map ../map4 <../plain.fi >/dev/null 2>../err4) ||
	die "migrate -q failed: $(cat err4)"
[ ! -s err4 ] || die "--quiet said something: $(cat err4)"
info "an empty map warns (naming --show-original-ids), the store is named each time, --quiet is silent"
EOF

test_done
