#!/usr/bin/env bash
# incremental_git2005.sh - the two-part migration of incremental_lib.sh on
# git's history up to v1.0.0 from the 2008 corpus, cut at v0.99.5: ids
# change from the first commit on (2005-era modes), so part 2 only works if
# the old ids are translated. Needs ../shared/corpus/git-history-2008.bundle;
# skipped (exit 77) without it.
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/incremental_lib.sh
. "$HERE/incremental_lib.sh"

need_shared corpus/git-history-2008.bundle
git clone -q --mirror "$SHARED/corpus/git-history-2008.bundle" "$SCRATCH/git2005.git"
restrict_to "$SCRATCH/git2005.git" master v1.0.0

test_case "git's history to v1.0.0 in two runs, cut at v0.99.5, gives one full run's refs and commit map (the old ids translated)" <<'EOF'
incremental_case git2005 "$SCRATCH/git2005.git" master v0.99.5 1
EOF

test_done
