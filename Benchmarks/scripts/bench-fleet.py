#!/usr/bin/env python3
"""What a fleet's shared state costs: the same calls with each process's own state in memory
and with the state shared through PostgreSQL, paired in one run (`make bench-fleet`).

    Benchmarks/scripts/bench-fleet.py [--worker PATH] [--calls N] [--rounds R] [--seconds S]

It starts PostgreSQL (Debian's, initdb'd in a scratch folder as `nobody` when run as root, its
defaults: fsync and synchronous commits on) and the benchmarks' nginx (scripts/bench-server.sh),
then runs the release build of `resourceful-fleet-worker`:

- per call: one process, one call at a time, a configured rate budget (so that every call takes
  its place), `--memory` against shared, alternated `rounds` times; the median per-call time of
  each, their ratio and difference (the round trip), and the transactions PostgreSQL counted per
  call (`pg_stat_database.xact_commit`), with and without an OAuth 2 token in hand;
- across processes: 8 processes, 16 calls at once each, for `seconds`: calls per second with
  their own state against shared budgets.

Numbers are ratios against the baseline measured in the same run: these machines are noisy.
"""

import argparse
import http.server
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Postgres:
    """Debian's newest PostgreSQL, in a scratch folder, trusting 127.0.0.1."""

    def __init__(self):
        versions = sorted(int(v) for v in os.listdir("/usr/lib/postgresql") if v.isdigit())
        if not versions:
            sys.exit("bench-fleet: PostgreSQL is missing (make setup installs it)")
        self.bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.dir = tempfile.mkdtemp(prefix="bench-fleet-pg-")
        self.port = free_port()
        self.process = None

    def run(self, program, *args, **kwargs):
        command = [f"{self.bin}/{program}", *args]
        if os.getuid() == 0:
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
        return command

    def start(self):
        os.chmod(self.dir, 0o777)
        data = os.path.join(self.dir, "data")
        subprocess.run(self.run("initdb", "-D", data, "-U", "resourceful", "--auth=trust", "-E", "UTF8"),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        log = open(os.path.join(self.dir, "postgres.log"), "w")
        self.process = subprocess.Popen(
            self.run("postgres", "-D", data, "-p", str(self.port), "-k", self.dir,
                     "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300"),
            stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while subprocess.run([f"{self.bin}/pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]).returncode != 0:
            if time.monotonic() > deadline:
                sys.exit("bench-fleet: PostgreSQL did not start")
            time.sleep(0.05)

    def scalar(self, sql):
        out = subprocess.run([f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "resourceful",
                              "-d", "postgres", "-Atc", sql], check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def commits(self):
        # Each backend reports its counts when its session ends; the workers' have ended.
        time.sleep(1.2)
        return int(self.scalar("SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'"))

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=60)
        shutil.rmtree(self.dir, ignore_errors=True)


class TokenServer(http.server.BaseHTTPRequestHandler):
    """A token endpoint answering one long-lived token to any client."""

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"access_token": "bench-token", "token_type": "Bearer", "expires_in": 3600}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def worker(args, base, postgres, extra, env_extra=None):
    env = dict(os.environ, RESOURCEFUL_FLEET_POSTGRES_PASSWORD="unused", RESOURCEFUL_FLEET_CLIENT_SECRET="bench",
               RESOURCEFUL_FLEET_SEALING_KEY="ab" * 32, **(env_extra or {}))
    command = [args.worker, "--postgres-port", str(postgres.port), "--base-url", base, "--path", "users/1", *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def report(process):
    out, err = process.communicate(timeout=600)
    if process.returncode != 0:
        sys.exit(f"bench-fleet: a worker failed: {err.strip()}")
    line = json.loads(out.strip().splitlines()[-1])
    bad = {k: v for k, v in line["outcomes"].items() if k != "200"}
    if bad:
        sys.exit(f"bench-fleet: calls failed: {bad}")
    return sum(line["outcomes"].values()), line["seconds"]


def per_call(args, base, postgres, token_url):
    budget = ["--rate", "1000000", "--burst", "1000", "--concurrency", "1", "--calls", str(args.calls)]
    token = ["--token-url", token_url, "--client-id", "bench"]
    times = {"memory": [], "shared": []}
    for _ in range(args.rounds):
        for mode in ("memory", "shared"):
            extra = budget + (["--memory"] if mode == "memory" else [])
            calls, seconds = report(worker(args, base, postgres, extra))
            times[mode].append(seconds / calls * 1e6)
    # Round trips per call: the transactions PostgreSQL counted, over the calls.
    trips = {}
    for name, extra in (("budget", budget), ("budget and token in hand", budget + token)):
        before = postgres.commits()
        calls, _ = report(worker(args, base, postgres, extra))
        trips[name] = (postgres.commits() - before) / calls
    memory, shared = statistics.median(times["memory"]), statistics.median(times["shared"])
    print(f"per call, one at a time ({args.calls} calls x {args.rounds} rounds, median):")
    print(f"  own state in memory  {memory:8.1f} us")
    print(f"  shared in PostgreSQL {shared:8.1f} us   ratio {shared / memory:.2f}x, +{shared - memory:.1f} us per call")
    for name, value in trips.items():
        print(f"  transactions per call ({name}): {value:.2f}")


def across(args, base, postgres):
    result = {}
    for mode in ("memory", "shared"):
        extra = ["--rate", "1000000", "--burst", "1000", "--concurrency", "16", "--seconds", str(args.seconds)]
        if mode == "memory":
            extra.append("--memory")
        workers = [worker(args, base, postgres, extra) for _ in range(8)]
        reports = [report(w) for w in workers]
        calls = sum(c for c, _ in reports)
        seconds = max(s for _, s in reports)
        result[mode] = calls / seconds
    print(f"8 processes x 16 calls at once, {args.seconds} s:")
    print(f"  own state in memory  {result['memory']:9.0f} calls/s")
    print(f"  shared budgets       {result['shared']:9.0f} calls/s   ratio {result['shared'] / result['memory']:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", default=os.path.join(ROOT, ".build/release/resourceful-fleet-worker"))
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8)
    args = parser.parse_args()
    if not os.access(args.worker, os.X_OK):
        sys.exit(f"bench-fleet: {args.worker} is missing: swift build -c release --product resourceful-fleet-worker")
    postgres = Postgres()
    scratch = tempfile.mkdtemp(prefix="bench-fleet-www-")
    token_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TokenServer)
    threading.Thread(target=token_server.serve_forever, daemon=True).start()
    try:
        postgres.start()
        base = subprocess.run([os.path.join(ROOT, "scripts/bench-server.sh"), "start", scratch],
                              check=True, capture_output=True, text=True).stdout.strip()
        base = base.rstrip("/") + "/"
        token_url = f"http://127.0.0.1:{token_server.server_address[1]}/token"
        per_call(args, base, postgres, token_url)
        across(args, base, postgres)
    finally:
        token_server.shutdown()
        subprocess.run([os.path.join(ROOT, "scripts/bench-server.sh"), "stop", scratch])
        postgres.stop()


if __name__ == "__main__":
    main()
