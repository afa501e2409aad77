#!/usr/bin/env python3
"""Streaming benchmarks: a download, an upload and an event stream, against nginx on loopback.

    bench-streaming.py BINARY [--rounds 5] [--size 1G] [--events 200000] [--dir /dev/shm/...] [--client-cpus 0]

BINARY is the release build of `resourceful-bench-streaming` (this package's StreamingBenchmarks
target). The script writes a file of random bytes and an event stream under DIR (tmpfs by
default, so that neither side waits for a disk), starts nginx there with its one worker on the
last core, and runs every client on the first core (--client-cpus):

- download: curl -o and `api.download`, alternated (curl, ours, curl, ours…), each writing into
  DIR; each reports the time of the transfer alone. Throughput % is the median of ours/curl over
  the pairs (curl's time over ours).
- upload: curl -T and `FileUpload`, alternated the same way, to nginx's WebDAV PUT, which reads
  the whole body into a file under DIR before it answers.
- peak memory: each client process's peak resident set size (ru_maxrss from wait4, as
  /usr/bin/time -v reports it) over that of the same executable that only makes its API.
- events: one process reads the stream with raw AsyncHTTPClient (a hand-written line splitter and
  JSONDecoder) and with `api.events`, in a shuffled order each round (see Tools/StreamingBenchmarks/EventStreams.swift).
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpus, command):
    return ["taskset", "-c", cpus, *command] if cpus and shutil.which("taskset") and os.cpu_count() > 1 else command


def measured(command):
    """Runs `command` as a child reaped with wait4: (standard output, peak RSS in KiB)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = process.stdout.read()
    err = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}): {err.decode().strip()}")
    return out.decode(), usage.ru_maxrss


def start_nginx(directory, port):
    cores = os.cpu_count() or 1
    affinity = f"worker_cpu_affinity 1{'0' * (cores - 1)};" if cores > 1 else ""
    config = f"""
worker_processes 1;
{affinity}
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 64; }}
http {{
    access_log off;
    sendfile on;
    client_body_temp_path {directory}/www/upload/.tmp;
    server {{
        listen 127.0.0.1:{port};
        root {directory}/www;
        location /upload/ {{ dav_methods PUT; client_max_body_size 0; }}
        location = /events {{ types {{ }} default_type text/event-stream; }}
    }}
}}
"""
    with open(f"{directory}/nginx.conf", "w") as f:
        f.write(config)
    subprocess.run(["nginx", "-c", f"{directory}/nginx.conf", "-p", directory, "-g", "daemon on;"], check=True)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("nginx did not answer")


def stop_nginx(directory):
    try:
        with open(f"{directory}/nginx.pid") as f:
            os.kill(int(f.read()), 15)
    except (OSError, ValueError):
        pass


def write_files(directory, size, events):
    www = f"{directory}/www"
    os.makedirs(f"{www}/upload/.tmp")
    # nginx's worker runs as an unprivileged user: it reads www and writes uploads.
    for path in (directory, www):
        os.chmod(path, 0o755)
    for path in (f"{www}/upload", f"{www}/upload/.tmp"):
        os.chmod(path, 0o777)
    subprocess.run(f"head -c {size} /dev/urandom > {www}/big.bin", shell=True, check=True)
    with open(f"{www}/events", "w") as f:
        for n in range(1, events + 1):
            f.write(f'id: {n}\nevent: tick\ndata: {{"n":{n},"text":"tick {n}"}}\n\n')
    for name in ("big.bin", "events"):
        os.chmod(f"{www}/{name}", 0o644)
    return os.path.getsize(f"{www}/big.bin")


def median_ratio(numerators, denominators):
    return statistics.median(n / d for n, d in zip(numerators, denominators))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", default="1G", help="the file's size, as head -c takes it")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--dir", default=f"/dev/shm/resourceful-bench-streaming-{os.getpid()}")
    parser.add_argument("--client-cpus", default="0", help="taskset's list for the clients; empty: not pinned")
    args = parser.parse_args()
    directory, binary = args.dir, os.path.abspath(args.binary)
    os.makedirs(directory)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    try:
        size = write_files(directory, args.size, args.events)
        start_nginx(directory, port)
        ours = lambda *arguments: pinned(args.client_cpus, [binary, *arguments])
        out_file = f"{directory}/downloaded.bin"
        upload_url = f"{base}/upload/big.bin"
        curl = ["curl", "-sSf", "-w", "%{time_total}"]

        idle = [measured(ours("idle", f"{base}/big.bin"))[1] for _ in range(3)]
        idle_rss = max(idle)

        downloads = {"curl": [], "ours": [], "rss": []}
        uploads = {"curl": [], "ours": [], "rss": []}
        for _ in range(args.rounds):
            out, _ = measured(pinned(args.client_cpus, [*curl, "-o", out_file, f"{base}/big.bin"]))
            downloads["curl"].append(float(out))
            os.remove(out_file)
            out, rss = measured(ours("download", f"{base}/big.bin", out_file))
            result = json.loads(out)
            assert result["bytes"] == size == os.path.getsize(out_file)
            downloads["ours"].append(result["seconds"])
            downloads["rss"].append(rss)
            os.remove(out_file)
        for _ in range(args.rounds):
            # No `Expect: 100-continue` (AsyncHTTPClient sends none): one round trip less for curl.
            out, _ = measured(pinned(args.client_cpus, [*curl, "-H", "Expect:", "-T", f"{directory}/www/big.bin", upload_url]))
            uploads["curl"].append(float(out))
            assert os.path.getsize(f"{directory}/www/upload/big.bin") == size
            os.remove(f"{directory}/www/upload/big.bin")
            out, rss = measured(ours("upload", upload_url, f"{directory}/www/big.bin"))
            uploads["ours"].append(json.loads(out)["seconds"])
            uploads["rss"].append(rss)
            assert os.path.getsize(f"{directory}/www/upload/big.bin") == size
            os.remove(f"{directory}/www/upload/big.bin")

        out, events_rss = measured(ours("events", f"{base}/events", str(args.events), str(args.rounds)))
        rates = json.loads(out)["eventsPerSecond"]
    finally:
        stop_nginx(directory)
        time.sleep(0.2)
        shutil.rmtree(directory, ignore_errors=True)

    mib = size / 2**20
    print(f"Clients on CPUs {args.client_cpus or 'any'}, nginx on the last. File: {mib:.0f} MiB; {args.rounds} pairs each; idle process peak RSS {idle_rss / 1024:.1f} MiB (of {', '.join(f'{r / 1024:.1f}' for r in idle)}).\n")
    print("| transfer | curl, median | ours, median | ours / curl throughput, median of pairs | range | peak RSS growth over idle, max of runs |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, runs in (("download", downloads), ("upload (FileUpload)", uploads)):
        ratios = sorted(c / o for c, o in zip(runs["curl"], runs["ours"]))
        growth = (max(runs["rss"]) - idle_rss) / 1024
        print(
            f"| {name} | {mib / statistics.median(runs['curl']):.0f} MiB/s | {mib / statistics.median(runs['ours']):.0f} MiB/s "
            f"| {statistics.median(ratios) * 100:.1f}% | {ratios[0] * 100:.1f}–{ratios[-1] * 100:.1f}% | {growth:.1f} MiB |"
        )
    raw_name = next(name for name in rates if name.startswith("raw"))
    raw = rates[raw_name]
    print(f"\n| event stream ({args.events} events), {args.rounds} rounds | events/s, median | / raw, median of rounds | range |")
    print("| --- | --- | --- | --- |")
    for name, values in sorted(rates.items(), key=lambda item: item[0] != raw_name):
        ratios = sorted(v / r for v, r in zip(values, raw))
        print(f"| {name} | {statistics.median(values):,.0f} | {statistics.median(ratios):.3f} | {ratios[0]:.3f}–{ratios[-1]:.3f} |")
    print(f"\nThe events process's peak RSS: {events_rss / 1024:.1f} MiB.")
    print("\nRaw runs (seconds): " + json.dumps({"download": downloads, "upload": uploads}))


if __name__ == "__main__":
    main()
