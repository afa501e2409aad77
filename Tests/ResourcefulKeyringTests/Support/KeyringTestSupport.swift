import Foundation
import ProcessTestSupport
import ResourcefulKeyring

/// Tests that use the process's own session bus run only inside `scripts/private-keyring.sh run`
/// (as `make test` does), so they can never touch a user's real keyring.
enum PrivateSession {
    struct NotPrivate: Error, CustomStringConvertible {
        var description: String { "run the keyring tests through `make test` (scripts/private-keyring.sh run swift test)" }
    }

    static func keyring(timeout: Duration = .seconds(5)) throws -> Keyring {
        guard ProcessInfo.processInfo.environment["RESOURCEFUL_PRIVATE_KEYRING"] == "1" else { throw NotPrivate() }
        return Keyring(timeout: timeout)
    }

    static func uniqueService() -> String { "test-\(UUID().uuidString)" }
}

/// A private bus (with or without an unlocked gnome-keyring) of a test's own, started with the
/// project's `scripts/private-keyring.sh start` and used through the `resourceful` tool in a child
/// process, for faults that must not disturb other tests: a missing service, a locked collection,
/// a frozen daemon.
struct PrivateBus {
    let directory: URL
    let address: String
    let keyringPID: Int32?

    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let script = repository.appendingPathComponent("scripts/private-keyring.sh").path
    static let tool = resourcefulTool

    /// Starts a bus (and a keyring unless `withKeyring` is false), runs `body`, stops both.
    static func with<T>(withKeyring: Bool = true, _ body: (PrivateBus) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-test-bus-\(UUID().uuidString)")
        let started = try await Command.run(script, ["start", directory.path] + (withKeyring ? [] : ["--no-keyring"]), capture: false)
        guard started.status == 0 else { throw Command.Failed(result: started) }
        let read = { (name: String) in
            (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let bus = PrivateBus(directory: directory, address: read("address") ?? "", keyringPID: read("keyring.pid").flatMap { Int32($0) })
        do {
            let result = try await body(bus)
            _ = try await Command.run(script, ["stop", directory.path], capture: false)
            return result
        } catch {
            _ = try? await Command.run(script, ["stop", directory.path], capture: false)
            throw error
        }
    }

    /// Runs the `resourceful` tool on this bus.
    func tool(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
        try await Command.run(Self.tool, arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": address], input: input)
    }

    /// Locks the default collection with the Secret Service's own `Lock` method.
    func lockDefaultCollection() async throws {
        let result = try await Command.run("/usr/bin/dbus-send", [
            "--bus=\(address)", "--dest=org.freedesktop.secrets", "--type=method_call", "--print-reply",
            "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/aliases/default",
        ])
        guard result.status == 0 else { throw Command.Failed(result: result) }
    }

    /// Sends `signal` to the keyring daemon.
    func signalKeyring(_ signal: Int32) {
        if let keyringPID { kill(keyringPID, signal) }
    }
}

