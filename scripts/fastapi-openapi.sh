#!/usr/bin/env bash
# fastapi-openapi.sh OUT: serves Examples/fastapi-app under uvicorn on a free port of 127.0.0.1,
# saves the document it publishes at /openapi.json to OUT, and stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
log=$(mktemp)
.build/python/bin/python Examples/fastapi-app/serve.py > "$log" 2>&1 &
server=$!
trap 'status=$?; kill $server 2>/dev/null; wait $server 2>/dev/null || true; rm -f "$log"; exit $status' EXIT
for _ in $(seq 100); do
    grep -q '^port ' "$log" && break
    kill -0 $server 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.1
done
port=$(awk '/^port /{print $2; exit}' "$log")
[ -n "$port" ] || { echo "the FastAPI app did not start"; cat "$log"; exit 1; }
curl --silent --show-error --fail --retry 20 --retry-connrefused --retry-delay 0 "http://127.0.0.1:$port/openapi.json" > "$out.tmp"
mv "$out.tmp" "$out"
echo "fetched $out from the FastAPI app"
