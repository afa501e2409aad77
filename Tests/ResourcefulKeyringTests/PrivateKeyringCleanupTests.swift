import Foundation
import ProcessTestSupport
import Testing

/// Every bus and keyring daemon a test or `scripts/private-keyring.sh` starts ends with it, on
/// success, failure and a signal, though the test process's threads block SIGTERM.
@Suite struct PrivateKeyringCleanupTests {
    struct Failure: Error { let directory: URL }

    @Test func aPrivateBusLeavesNoProcessBehind() async throws {
        let directory = try await PrivateBus.with { bus in
            let running = BusProcesses.of(bus.directory)
            // dbus-daemon and gnome-keyring-daemon, both able to see a TERM.
            #expect(running.count >= 2)
            for pid in running { #expect(!BusProcesses.blocksTerm(pid), "process \(pid) blocks SIGTERM") }
            return bus.directory
        }
        #expect(BusProcesses.of(directory) == [])
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func aTestThatThrowsLeavesNoProcessBehind() async throws {
        do {
            try await PrivateBus.with { bus in
                #expect(BusProcesses.of(bus.directory).count >= 2)
                throw Failure(directory: bus.directory)
            }
            Issue.record("the body's error was not rethrown")
        } catch let failure as Failure {
            #expect(BusProcesses.of(failure.directory) == [])
        }
    }

    @Test func runLeavesNoProcessBehindAndPassesTheStatusOn() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let result = try await Command.run(
            PrivateBus.script,
            ["run", "/bin/sh", "-c", #"printf %s "$DBUS_SESSION_BUS_ADDRESS" > "$0"; exit 3"#, scratch.path],
            capture: false
        )
        #expect(result.status == 3)
        let address = try String(contentsOf: scratch, encoding: .utf8)
        let directory = try #require(BusProcesses.directory(ofAddress: address))
        #expect(BusProcesses.of(directory) == [])
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }

    @Test func aSignalledRunStopsItsCommandBusAndKeyring() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The command names the script (its parent) and the bus, then waits to be stopped.
        let run = Task {
            try await Command.run(
                PrivateBus.script,
                ["run", "/bin/sh", "-c", #"printf '%s %s' "$PPID" "$DBUS_SESSION_BUS_ADDRESS" > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 600"#, scratch.path],
                capture: false
            )
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: scratch.path), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let written = try String(contentsOf: scratch, encoding: .utf8).split(separator: " ", maxSplits: 1).map(String.init)
        let scriptPID = try #require(written.first.flatMap { Int32($0) })
        let directory = try #require(BusProcesses.directory(ofAddress: written.last ?? ""))
        // The bus, the keyring and the command itself.
        #expect(BusProcesses.of(directory).count >= 3)
        kill(scriptPID, SIGTERM)
        let result = try await run.value
        #expect(result.status == 128 + SIGTERM)
        #expect(BusProcesses.of(directory) == [])
    }
}
