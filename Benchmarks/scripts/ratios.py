#!/usr/bin/env python3
"""Reads the text output of `swift package benchmark` and prints the tables of Benchmarks/README.md.

Paired benchmarks run every variant once per iteration and record each one's time over the first
variant's in the same iteration (times 10,000); the tables give the medians of those ratios, so
drift in the machine's speed between benchmarks does not enter them.
"""
import re
import sys

UNITS = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
CLIENTS = ["api.call JSONDecoder", "api.call FastJSONDecoder", "URLSession"]
# The standard corpus (Tests/Fixtures/json) and the two realistic lists, with their sizes in bytes.
CORPUS = {"twitter.json": 631514, "citm_catalog.json": 1727204, "canada.json": 2251051}
SIZES = {"GitHub issues": 141213, "Stripe charges": 89252, **CORPUS}


def parse(text):
    """{benchmark: {row label: (p25, p50, p75, samples)}}, times in µs for wall-clock rows."""
    result = {}
    name = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped[0] not in "│╒╞├╘═─" and not stripped.startswith(
            ("Warning", "Note", "Writing", "warning", "Build", "[", "/", "Running", "=", "Server:", "Building", "Compiling", "Host", "#")
        ):
            name = stripped
            continue
        if not name or not stripped.startswith("│"):
            continue
        cells = [cell.strip() for cell in stripped.strip("│").split("│")]
        if len(cells) < 9:
            continue
        try:
            p25, p50, p75 = (float(cells[i].replace(",", "")) for i in (2, 3, 4))
            samples = int(cells[8].replace(",", ""))
        except ValueError:
            continue
        label = re.sub(r" \((#|K|M|G)\)$", "", cells[0].rstrip(" *"))
        scale = 1.0
        time = re.match(r"Time \(wall clock\) \((\S+)\)", label)
        if time:
            label, scale = "time", UNITS.get(time.group(1), 1.0)
        elif label.startswith("Malloc (total)"):
            label, scale = "mallocs", 1000.0 if "(K)" in label else 1.0
        result.setdefault(name, {})[label] = (p25 * scale, p50 * scale, p75 * scale, samples)
    return result


def fmt_time(us):
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.0f} µs" if us >= 10 else f"{us:.2f} µs"


def paired(values, benchmark, cpu=False):
    """(baseline median in µs, {variant: (median ratio, p25, p75)}, samples) of a paired benchmark,
    in wall-clock time, or with `cpu` in the process's processor time."""
    rows = values.get(benchmark, {})
    suffix = " cpu (ns)" if cpu else " (ns)"
    base = next((v for k, v in rows.items() if k.endswith(suffix) and (cpu or not k.endswith(" cpu (ns)"))), None)
    ratios = {}
    for label, (p25, p50, p75, _) in rows.items():
        match = re.fullmatch(r"(.+) / .+ \(x10000\)", label)
        if match and match.group(1).endswith(" cpu") == cpu:
            name = match.group(1)[: -len(" cpu")] if cpu else match.group(1)
            ratios[name] = (p50 / 10000, p25 / 10000, p75 / 10000)
    return (base[1] / 1000 if base else None), ratios, (base[3] if base else 0)


def ratio_cell(ratio):
    return f"{ratio[0]:.3f} ({ratio[1]:.3f}–{ratio[2]:.3f})" if ratio else "n/a"


def main():
    values = parse(sys.stdin.read())

    print("| call | raw AsyncHTTPClient, median per batch | " + " | ".join(f"{c} / raw" for c in CLIENTS)
          + " | api.call JSONDecoder / raw, processor time | pairs |")
    print("| --- | --- | " + " | ".join("---" for _ in CLIENTS) + " | --- | --- |")
    for verb in ["show", "index", "create"]:
        for concurrency in [1, 32]:
            base, ratios, samples = paired(values, f"{verb} C={concurrency} paired")
            if base is None:
                continue
            # URLSession runs in pairs of its own with raw AsyncHTTPClient.
            ratios.update(paired(values, f"{verb} C={concurrency} URLSession paired")[1])
            cpu = paired(values, f"{verb} C={concurrency} paired", cpu=True)[1].get("api.call JSONDecoder")
            cells = [ratio_cell(ratios.get(c)) for c in CLIENTS]
            print(f"| {verb} C={concurrency} | {fmt_time(base)} | " + " | ".join(cells) + f" | {ratio_cell(cpu)} | {samples} |")
    print("\nEach ratio: the median of the per-iteration ratios, with the 25th–75th percentiles.")

    rows = []
    for concurrency in [1, 32]:
        name = f"show C={concurrency} transport paired"
        wall, cpu = paired(values, name)[1].get("AsyncHTTPClientTransport"), paired(values, name, cpu=True)[1].get("AsyncHTTPClientTransport")
        if wall:
            rows.append(f"| show C={concurrency} | {ratio_cell(wall)} | {ratio_cell(cpu)} |")
    if rows:
        print("\n| the transport alone, JSONDecoder | AsyncHTTPClientTransport / raw | processor time |")
        print("| --- | --- | --- |")
        print("\n".join(rows))

    forms = ["delegate execute", "async execute, body deadline"]
    rows = []
    for concurrency in [1, 32]:
        name = f"show C={concurrency} client forms paired"
        wall, cpu = paired(values, name)[1], paired(values, name, cpu=True)[1]
        if all(form in wall for form in forms):
            rows.append(f"| show C={concurrency} | " + " | ".join(ratio_cell(table.get(form)) for form in forms for table in (wall, cpu)) + " |")
    if rows:
        print("\n| AsyncHTTPClient alone, against its async execute (deadline ends at the head) | delegate execute (deadline over the body) "
              "| processor time | async execute with a deadline over the body | processor time |")
        print("| --- | --- | --- | --- | --- |")
        print("\n".join(rows))

    print("\n| index of a realistic list | raw AsyncHTTPClient + JSONDecoder, median per batch | api.call default decoder / raw "
          "| processor time | api.call JSONDecoder / raw | processor time | pairs |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for payload in ["GitHub issues", "Stripe charges"]:
        for concurrency in [1, 32]:
            name = f"{payload} C={concurrency} paired"
            base, wall, samples = paired(values, name)
            if base is None:
                continue
            cpu = paired(values, name, cpu=True)[1]
            cells = [ratio_cell(table.get(client)) for client in ["api.call default decoder", "api.call JSONDecoder"] for table in (wall, cpu)]
            print(f"| {payload} C={concurrency} | {fmt_time(base)} | " + " | ".join(cells) + f" | {samples} |")

    raw = values.get("show C=1 raw AsyncHTTPClient", {})
    api = values.get("show C=1 api.call JSONDecoder", {})
    if "mallocs" in raw and "mallocs" in api:
        print(f"\nAllocations per show call: raw AsyncHTTPClient {raw['mallocs'][1]:.0f}, api.call {api['mallocs'][1]:.0f}.")
    raw = values.get("index C=1 raw AsyncHTTPClient", {})
    api = values.get("index C=1 api.call JSONDecoder", {})
    if "mallocs" in raw and "mallocs" in api:
        print(f"Allocations per index call: raw AsyncHTTPClient {raw['mallocs'][1]:.0f}, api.call {api['mallocs'][1]:.0f}.")

    base, ratios, samples = paired(values, "pool show C=32 paired")
    if base is not None:
        print("\n| connections per host (show, C=32, raw AsyncHTTPClient) | time / with 8 |")
        print("| --- | --- |")
        print(f"| 8 | 1 ({fmt_time(base)} per batch) |")
        for variant, (ratio, low, high) in sorted(ratios.items(), key=lambda item: int(item[0].split()[-1])):
            print(f"| {variant.split()[-1]} | {ratio:.3f} ({low:.3f}–{high:.3f}) |")

    print("\n| decoding | JSONDecoder, median | FastJSONDecoder / JSONDecoder | JSONDecoder / FastJSONDecoder |")
    print("| --- | --- | --- | --- |")
    for payload in ["show", "index of 50", "GitHub issues", "Stripe charges"] + list(CORPUS):
        base, ratios, _ = paired(values, f"decode {payload} paired")
        if base is not None and "FastJSONDecoder" in ratios:
            ratio = ratios["FastJSONDecoder"][0]
            print(f"| {payload} | {fmt_time(base)} | {ratio:.3f} ({ratios['FastJSONDecoder'][1]:.3f}–{ratios['FastJSONDecoder'][2]:.3f}) | {1 / ratio:.2f}× |")

    # The scan alone (stage one and the structure walk onto the tape) and stage one alone, timed
    # in the same iterations as the decoders: time = JSONDecoder's median × the median ratio.
    print("\n| scan, in the decoding pairs | bytes | FastJSONDecoder | scan | scan GB/s | stage one GB/s | JSONDecoder / (FastJSONDecoder − scan) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for payload, size in SIZES.items():
        base, ratios, _ = paired(values, f"decode {payload} paired")
        if base is None or "FastJSONDecoder scan" not in ratios:
            continue
        fast, scan, stage = (ratios[name][0] * base for name in ("FastJSONDecoder", "FastJSONDecoder scan", "FastJSONDecoder stage one"))
        print(f"| {payload} | {size:,} | {fmt_time(fast)} | {fmt_time(scan)} | {size / (scan * 1000):.2f} | {size / (stage * 1000):.2f} | "
              f"{base / (fast - scan):.2f}× |")

    base, ratios, _ = paired(values, "own work paired")
    if base is not None:
        print("\n| the library's own work per call (in-memory transport, minus decoding) | µs |")
        print("| --- | --- |")
        for call in ["show", "index"]:
            ratio = ratios.get(f"api.call {call} in-memory transport")
            if ratio:
                print(f"| {call} | {(ratio[0] - 1) * base:.2f} |")
        print(f"\nDecoding the show payload alone: {fmt_time(base)}.")

    base, ratios, _ = paired(values, "index C=1 paired")
    if base is not None and "api.call FastJSONDecoder" in ratios:
        print(f"\nindex C=1 end to end: api.call with FastJSONDecoder takes {ratios['api.call FastJSONDecoder'][0]:.3f} of the time of raw "
              f"AsyncHTTPClient + JSONDecoder ({1 / ratios['api.call FastJSONDecoder'][0]:.2f}× as fast).")

    print("\n| micro benchmark | median | mallocs |")
    print("| --- | --- | --- |")
    for name, rows in sorted(values.items()):
        if name.startswith("micro ") and "time" in rows:
            mallocs = f"{rows['mallocs'][1]:.0f}" if "mallocs" in rows else "n/a"
            print(f"| {name[6:]} | {fmt_time(rows['time'][1])} | {mallocs} |")


if __name__ == "__main__":
    main()
