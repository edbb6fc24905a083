#!/usr/bin/env bash
# null_migrate.sh - a stand-in for migrate that ignores its options and
# copies the stream: run a test with MIGRATE=tests/integration/lib/null_migrate.sh
# to see that it fails clearly when no maps or marks are written (the checks
# can fail). Not a test itself.
exec cat
