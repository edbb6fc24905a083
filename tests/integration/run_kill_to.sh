#!/usr/bin/env bash
# run_kill_to.sh - run_kill.sh with `migrate run --to NEWDIR` and a
# replace-text rule (KILL_MODE=to): killed at any moment, from the target's
# making to its last repack beside the check-out, the next run finishes
# or starts over, and the target ends as an uninterrupted run leaves it,
# the source untouched.
# Its cases (test_case ... test_done) are run_kill.sh's, reported under
# this script's name. Six kills by default.
KILL_MODE=to KILL_TRIES="${KILL_TRIES:-6}" exec bash "$(dirname "$0")/run_kill.sh" "$@"
