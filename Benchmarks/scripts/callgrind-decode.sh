#!/bin/sh
# Instructions per decode of the GitHub-style list (callgrind), with FastJSONDecoder as it is at
# a git revision (default: HEAD) and at another (the "before"), and with JSONDecoder.
#
#   Benchmarks/scripts/callgrind-decode.sh [before-revision] [after-revision]
#
# Each decoder's sources (Sources/ResourcefulJSON at that revision, and the header of
# Sources/CResourcefulSIMD where it has one), the realistic payload and
# models (Tests/ResourcefulJSONTests/Realistic) and a small driver are compiled into one module
# with `swiftc -O -wmo`; callgrind counts a run of 1 and of 11 decodes, and the difference over
# 10 is the cost of one decode, start-up and first-use costs (conformance caches, lazy binding)
# left out. Needs valgrind (apt-get install -y valgrind).
set -eu
before=${1:-main}
after=${2:-HEAD}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/main.swift" <<'SWIFT'
import Foundation

@main enum Main {
    static func main() {
        let count = Int(CommandLine.arguments[2])!
        let json = RealisticPayloads.gitHubIssues
        let fast = FastJSONDecoder(dateDecodingStrategy: .iso8601)
        let foundation = JSONDecoder()
        foundation.dateDecodingStrategy = .iso8601
        var total = 0
        for _ in 0..<count {
            if CommandLine.arguments[1] == "fast" {
                total &+= (try? fast.decode([GitHubIssue].self, from: json))?.count ?? 0
            } else {
                total &+= (try? foundation.decode([GitHubIssue].self, from: json))?.count ?? 0
            }
        }
        print(total)
    }
}
SWIFT

build() { # revision, output
    mkdir -p "$work/$1"
    for path in $(git -C "$root" ls-tree --name-only "$1" Sources/ResourcefulJSON/ Tests/ResourcefulJSONTests/Realistic/ Sources/ResourcefulTesting/SeededRandomNumberGenerator.swift); do
        case "$path" in *.swift) git -C "$root" show "$1:$path" | sed '/^import ResourcefulTesting/d' > "$work/$1/$(basename "$path")" ;; esac
    done
    # The C module of stage one's move mask, where the revision has it.
    header=Sources/CResourcefulSIMD/include/CResourcefulSIMD.h
    mkdir -p "$work/$1/c"
    if git -C "$root" cat-file -e "$1:$header" 2>/dev/null; then
        git -C "$root" show "$1:$header" > "$work/$1/c/CResourcefulSIMD.h"
        printf 'module CResourcefulSIMD {\n    header "CResourcefulSIMD.h"\n    export *\n}\n' > "$work/$1/c/module.modulemap"
    fi
    swiftc -swift-version 6 -package-name Callgrind -O -wmo -parse-as-library -module-name Callgrind -I "$work/$1/c" \
        "$work/$1"/*.swift "$work/main.swift" -o "$2"
}

count() { # binary, decoder, decodes
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" "$2" "$3" 2>&1 | sed -n 's/.*Collected : //p'
}

per_decode() { # binary, decoder
    one=$(count "$1" "$2" 1)
    eleven=$(count "$1" "$2" 11)
    echo $(( (eleven - one) / 10 ))
}

build "$before" "$work/before"
build "$after" "$work/after"
echo "FastJSONDecoder at $before: $(per_decode "$work/before" fast) instructions per decode"
echo "FastJSONDecoder at $after: $(per_decode "$work/after" fast) instructions per decode"
echo "JSONDecoder: $(per_decode "$work/after" json) instructions per decode"
