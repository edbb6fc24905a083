#!/usr/bin/env bash
# run_kill_split.sh - run_kill.sh with a split rule (KILL_MODE=split): the
# run packs fast-import's new parts again and removes its pack (issue 29);
# a kill at any moment leaves no pack half written and loses no object a
# finished run needs.
# Its cases (test_case ... test_done) are run_kill.sh's, reported under
# this script's name. Six kills by default (the suite's time; the other
# modes cover the phases every run has).
KILL_MODE=split KILL_TRIES="${KILL_TRIES:-6}" exec bash "$(dirname "$0")/run_kill.sh" "$@"
