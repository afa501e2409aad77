#!/usr/bin/env bash
# The benchmarks' loopback server: nginx serving fixed JSON, on its own core.
#
#   scripts/bench-server.sh start DIR
#       Writes the payloads and an nginx configuration under DIR, starts nginx on a free port of
#       127.0.0.1 (its one worker pinned to the last core when there are two or more) and prints
#       the base URL once the port answers. GET /users/1 is one user, GET /users fifty (~12 KB),
#       POST /users answers 201 with one user. GET /repos/acme/widgets/issues and GET /v1/charges
#       serve DIR/www/github-issues.json and stripe-charges.json, which the benchmarks write.
#   scripts/bench-server.sh stop DIR
#       Stops that nginx and removes DIR.
set -euo pipefail

die() { echo "bench-server: $*" >&2; exit 1; }

start() {
    local dir=$1
    command -v nginx >/dev/null 2>&1 || die "nginx is missing: make bench installs nginx-light"
    mkdir -p "$dir/www" "$dir/tmp"
    # nginx's worker runs as an unprivileged user: it must be able to read the payloads.
    chmod 755 "$dir" "$dir/www"
    python3 - "$dir/www" <<'PY'
import json, sys
def user(i):
    return {"id": i, "name": f"User {i}", "email": f"user{i}@example.com", "active": i % 2 == 0,
            "score": i * 1.5, "tags": ["alpha", "beta", "gamma"], "createdAt": "2024-05-01T12:00:00Z"}
out = sys.argv[1]
open(f"{out}/show.json", "w").write(json.dumps(user(1), separators=(",", ":")))
open(f"{out}/index.json", "w").write(json.dumps([user(i) for i in range(1, 51)], separators=(",", ":")))
PY
    chmod 644 "$dir/www/show.json" "$dir/www/index.json"
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
    local cores affinity=""
    cores=$(nproc)
    if [ "$cores" -ge 2 ]; then
        # A bit mask with only the last core set.
        affinity="worker_cpu_affinity 1$(printf '0%.0s' $(seq 2 "$cores"));"
    fi
    cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
$affinity
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/tmp;
    keepalive_requests 10000000;
    keepalive_timeout 300s;
    default_type application/json;
    server {
        listen 127.0.0.1:$port backlog=4096;
        location = /users/1 { alias $dir/www/show.json; }
        # Written by the benchmarks themselves (RESOURCEFUL_BENCH_WWW), before the first request.
        location = /repos/acme/widgets/issues { alias $dir/www/github-issues.json; }
        location = /v1/charges { alias $dir/www/stripe-charges.json; }
        location = /users {
            if (\$request_method = POST) { return 201 '$(cat "$dir/www/show.json")'; }
            alias $dir/www/index.json;
        }
    }
}
CONF
    nginx -c "$dir/nginx.conf" -p "$dir" -g "daemon on;" || die "nginx did not start (see $dir/error.log)"
    for _ in $(seq 1 100); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
            echo "http://127.0.0.1:$port"
            return 0
        fi
        python3 -c 'import time; time.sleep(0.05)'
    done
    die "nginx did not answer on port $port"
}

stop() {
    local dir=$1
    if [ -f "$dir/nginx.pid" ]; then
        local pid
        pid=$(cat "$dir/nginx.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || break
            python3 -c 'import time; time.sleep(0.05)'
        done
    fi
    rm -rf "$dir"
}

case "${1:-}" in
    start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
    stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
    *) die "usage: $0 start DIR | stop DIR" ;;
esac
