#!/usr/bin/env bash
# incremental.sh - a second run continues the history of the first
# (the two-part migration of incremental_lib.sh), on two histories of our
# own: the tricky repository (every construct; its ids do not change, so
# translation is the identity there) and the generated assets history cut
# 60 commits back on main (merges and feature branches across the cut).
# The same on git's real 2005 history, where ids change from the first
# commit on, is incremental_git2005.sh (it needs ../shared).
# shellcheck source=tests/integration/lib/lib.sh
. "$(dirname "$0")/lib/lib.sh"
# shellcheck source=tests/integration/lib/incremental_lib.sh
. "$HERE/incremental_lib.sh"

test_case "the tricky repository, main cut three commits back" <<'EOF'
"$HERE/make_tricky_repo.sh" "$SCRATCH/tricky" >/dev/null
incremental_case tricky "$SCRATCH/tricky" main 'refs/heads/main~3'
EOF

test_case "the generated assets history, main cut 60 commits back" <<'EOF'
make_history --only assets "$SCRATCH/h"
incremental_case assets "$SCRATCH/h/assets" main 'refs/heads/main~60'
EOF

test_done
