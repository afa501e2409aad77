#!/usr/bin/env bash
# Public (and open) declarations per thousand lines of the library modules: every module under
# Sources/ but ResourcefulTesting and the command-line tool. A declaration is a line that starts,
# after indentation, with `public` or `open`; `public import` lines are imports, not declarations,
# and comments are not declarations, but both count as lines.
#
#   scripts/public-density.sh        prints: declarations, lines, declarations per 1,000 lines
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(find Sources -name '*.swift' -not -path 'Sources/ResourcefulTesting/*' -not -path 'Sources/resourceful/*' | sort)
declarations=$(cat $files | grep -E '^[[:space:]]*(public|open)[[:space:]]' | grep -cvE '^[[:space:]]*public[[:space:]]+import[[:space:]]' || true)
lines=$(cat $files | wc -l)
awk -v d="$declarations" -v l="$lines" 'BEGIN { printf "%d public declarations in %d lines: %.1f per 1,000 lines\n", d, l, d * 1000 / l }'
