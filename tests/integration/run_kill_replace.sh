#!/usr/bin/env bash
# run_kill_replace.sh - run_kill.sh with a replace-text rule
# (KILL_MODE=replace): the filter's writer thread stores the replaced
# versions in packs of its own and the stream to fast-import waits for
# them (issue 29); a kill at any moment leaves no pack half written and
# loses no object a finished run needs.
# Its cases (test_case ... test_done) are run_kill.sh's, reported under
# this script's name. Six kills by default.
KILL_MODE=replace KILL_TRIES="${KILL_TRIES:-6}" exec bash "$(dirname "$0")/run_kill.sh" "$@"
