#!/usr/bin/env bash
# run_kill_wide.sh - run_kill.sh with a directory of 600 files (a tree of
# 70 KB) changed at every commit and a rule that drops one of them in place
# (KILL_MODE=wide): the writer stores the trees and the commits in a pack
# of its own, listed until the refs moved; a kill at any moment leaves
# nothing the next run does not finish or drop.
# Its cases (test_case ... test_done) are run_kill.sh's, reported under
# this script's name. Six kills of runs over 120 commits by default.
KILL_MODE=wide KILL_TRIES="${KILL_TRIES:-6}" KILL_COMMITS="${KILL_COMMITS:-120}" KILL_REFS="${KILL_REFS:-100}" \
	exec bash "$(dirname "$0")/run_kill.sh" "$@"
