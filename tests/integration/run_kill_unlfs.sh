#!/usr/bin/env bash
# run_kill_unlfs.sh - run_kill.sh on an LFS history whose files each run
# takes back (KILL_MODE=unlfs): the packs the filter writes for them
# survive no failed run, and no kill loses one a finished run needs.
# Its cases (test_case ... test_done) are run_kill.sh's, reported under
# this script's name.
KILL_MODE=unlfs exec bash "$(dirname "$0")/run_kill.sh" "$@"
