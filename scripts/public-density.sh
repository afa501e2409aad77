#!/usr/bin/env bash
# Public (and open) declarations per thousand lines of the library modules: every module under
# Sources/ but ResourcefulTesting and the command-line tool. A declaration is a line that starts,
# after indentation, with `public` or `open` (doc comments and other comments are not counted as
# declarations, but count as lines).
#
#   scripts/public-density.sh        prints: declarations, lines, declarations per 1,000 lines
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(find Sources -name '*.swift' -not -path 'Sources/ResourcefulTesting/*' -not -path 'Sources/resourceful/*' | sort)
declarations=$(cat $files | grep -cE '^[[:space:]]*(public|open)[[:space:]]' || true)
lines=$(cat $files | wc -l)
awk -v d="$declarations" -v l="$lines" 'BEGIN { printf "%d public declarations in %d lines: %.1f per 1,000 lines\n", d, l, d * 1000 / l }'
