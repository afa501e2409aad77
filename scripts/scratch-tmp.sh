#!/usr/bin/env bash
# Runs a command with TMPDIR set to a folder of its own under /tmp, removed when the command ends,
# whatever way it ends: the test suites' scratch folders (configurations, cassettes, downloads,
# servers' files) go with it instead of piling up in /tmp run after run.
#
#   scripts/scratch-tmp.sh COMMAND [ARGS...]
#
# The folder is mode 1777, as /tmp is: servers started by the tests run as other users (nginx's
# workers, PostgreSQL) and reach their files under it. Its removal stays on its own file system,
# so a mount a test left behind is not descended into.
set -euo pipefail

# Short: Unix socket paths under it (a private bus's) have room for 107 bytes only.
scratch=$(mktemp -d /tmp/rt.XXXXXX)
chmod 1777 "$scratch"
cleanup() { rm -rf --one-file-system "$scratch" 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
status=0
TMPDIR="$scratch" "$@" || status=$?
exit "$status"
