#!/usr/bin/env python3
"""Fails when the compiler gave two closures of the package one name, so that one runs the other's body.

Swift 6.3 numbers the closures inside a freestanding macro's expansion (`#expect`, `#require`) with
the same discriminators as closures written after it in the same enclosing closure. Two such closures
of the same type then mangle to one symbol; one body is emitted and both call sites call it, with no
diagnostic. In a test this silently checks the wrong thing:

    try await MockServer.withTransport { server, transport in
        ...
        #expect(server.requests.filter { $0.path == "/token" }.count == 1)
        let sent = server.requests.filter { $0.path == "/v1/me" }   // runs the "/token" closure

This script reads each of the package's module compile commands from SwiftPM's build manifest
(`.build/debug.yaml`, written by `swift build`), emits the raw SIL of the module with source
locations, and reports every closure referenced from more than one place: a closure expression is
formed at exactly one place, so a second one is a second closure sharing its name. Run it after
`swift build --build-tests`; it compiles nothing into `.build`.

    scripts/check-shared-closures.py [--scratch-path .build] [MODULE ...]
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

# Options of the build command that write outputs or drive incremental builds: dropped, with
# their argument when they take one.
DROP_WITH_VALUE = {"-emit-module-path", "-output-file-map", "-index-store-path", "-emit-objc-header-path"}
DROP = {
    "-emit-dependencies", "-emit-module", "-incremental", "-c", "-enable-batch-mode", "-serialize-diagnostics",
    "-parseable-output", "-v", "-warnings-as-errors", "-whole-module-optimization", "-wmo",
}

FUNCTION_REF = re.compile(r'function_ref (@\S+) : .*?, loc \*? ?"([^"]+)":(\d+):(\d+)')
# The referenced function is itself a closure: explicit (`fU_`, `fU0_`, …) or implicit (`fu…_`).
CLOSURE = re.compile(r"f[Uu]\d*_$")


def compile_commands(manifest, root):
    """The package's own Swift modules and the swiftc arguments that build each."""
    commands = {}
    description = ""
    with open(manifest) as lines:
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("description:"):
                description = stripped
            elif stripped.startswith("args:") and "Compiling Swift Module" in description:
                args = json.loads(stripped[len("args:"):])
                if "-module-name" not in args:
                    continue
                module = args[args.index("-module-name") + 1]
                sources = [a for a in args if a.endswith(".swift") or a.startswith("@")]
                files = []
                for source in sources:
                    if source.startswith("@"):
                        if not os.path.exists(source[1:]):
                            files = []  # not built by this build: nothing to check
                            break
                        with open(source[1:]) as listing:
                            files += [f.strip() for f in listing if f.strip()]
                    else:
                        files.append(source)
                # Only modules whose sources are the package's own, not its dependencies'.
                if files and all(os.path.realpath(f).startswith(root + os.sep) and "/.build/" not in f for f in files):
                    commands[module] = args
    return commands


def raw_sil(args, output):
    command = []
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in DROP_WITH_VALUE:
            skip = True
            continue
        if arg in DROP or re.fullmatch(r"-j\d+", arg):
            continue
        command.append(arg)
    command += ["-emit-silgen", "-whole-module-optimization", "-Xllvm", "-sil-print-debuginfo", "-o", output]
    return subprocess.run(command, capture_output=True, text=True)


def shared_closures(sil_path):
    places = collections.defaultdict(set)
    with open(sil_path, errors="replace") as sil:
        for line in sil:
            if "function_ref @" not in line:
                continue
            match = FUNCTION_REF.search(line)
            if not match:
                continue
            name, file, row, column = match.groups()
            if CLOSURE.search(name):
                places[name].add((os.path.basename(file), int(row), int(column)))
    return {name: sorted(where) for name, where in places.items() if len(where) > 1}


def demangle(name):
    result = subprocess.run(["swift", "demangle", "--compact", name.lstrip("@")], capture_output=True, text=True)
    return result.stdout.strip() or name


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scratch-path", default=".build")
    parser.add_argument("modules", nargs="*", help="only these modules (default: every module of the package)")
    options = parser.parse_args()
    root = os.path.realpath(os.getcwd())
    manifest = os.path.join(options.scratch_path, "debug.yaml")
    if not os.path.exists(manifest):
        sys.exit(f"{manifest} is missing: run `swift build --build-tests` first")
    commands = compile_commands(manifest, root)
    modules = options.modules or sorted(commands)
    found = 0
    with tempfile.TemporaryDirectory() as scratch:
        for module in modules:
            if module not in commands:
                sys.exit(f"no compile command for module {module} in {manifest}")
            output = os.path.join(scratch, f"{module}.sil")
            result = raw_sil(commands[module], output)
            if result.returncode != 0:
                sys.stderr.write(result.stderr[-4000:])
                sys.exit(f"could not emit the SIL of {module}")
            shared = shared_closures(output)
            os.remove(output)
            for name, where in shared.items():
                found += 1
                print(f"{module}: one name for {len(where)} closures: {demangle(name)}")
                for file, row, column in where:
                    expansion = re.search(r"MX(\d+)_(\d+)_", file)
                    if file.startswith("@__swiftmacro_") and expansion:
                        print(f"    in the macro expanded at line {expansion[1]}, column {int(expansion[2]) + 1}")
                    else:
                        print(f"    {file}:{row}:{column}")
    if found:
        print(
            f"{found} closure name(s) shared: the compiler runs one body for each group. Move the closure out of "
            "the macro (compute the value before `#expect`/`#require`) or use a loop instead of the later closure."
        )
        return 1
    print(f"shared closures: none in {len(modules)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
