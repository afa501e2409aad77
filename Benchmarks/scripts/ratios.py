#!/usr/bin/env python3
"""Reads the text output of `swift package benchmark` and prints a table of ratios.

Each macro row is the median wall-clock time of `api.call` and of URLSession divided by that of
raw AsyncHTTPClient measured in the same run; micro rows give the median itself.
"""
import re
import sys

UNITS = {"ns": 1e-3, "μs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}


def medians(text):
    result = {}
    name = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped[0] not in "│╒╞├╘═─" and not stripped.startswith(("Warning", "Note", "Writing", "warning", "Build", "[", "/", "Running", "=")):
            name = stripped
            continue
        match = re.match(r"│\s*Time \(wall clock\) \((\S+)\)\s*\*?\s*│(.*)", stripped)
        if match and name:
            cells = [cell.strip() for cell in match.group(2).split("│") if cell.strip()]
            if len(cells) >= 3:
                result[name] = float(cells[2]) * UNITS.get(match.group(1), 1.0)
    return result


def fmt_time(us):
    return f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.0f} µs" if us >= 10 else f"{us:.2f} µs"


def main():
    values = medians(sys.stdin.read())
    print("| call | raw AsyncHTTPClient (median) | api.call / raw | URLSession / raw |")
    print("| --- | --- | --- | --- |")
    for name, raw in sorted(values.items()):
        match = re.fullmatch(r"(show|index|create) C=(\d+) raw AsyncHTTPClient", name)
        if not match:
            continue
        prefix = f"{match.group(1)} C={match.group(2)}"
        api = values.get(f"{prefix} api.call")
        session = values.get(f"{prefix} URLSession")
        ratio = lambda x: f"{x / raw:.3f}" if x else "n/a"
        print(f"| {prefix} | {fmt_time(raw)} | {ratio(api)} | {ratio(session)} |")
    print()
    print("| micro benchmark | median |")
    print("| --- | --- |")
    for name, value in sorted(values.items()):
        if "C=" not in name:
            print(f"| {name} | {fmt_time(value)} |")


if __name__ == "__main__":
    main()
