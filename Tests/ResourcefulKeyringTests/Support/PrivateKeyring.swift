import Foundation
import ResourcefulKeyring

/// A private D-Bus bus with (or without) an unlocked gnome-keyring, started by the project's
/// `scripts/private-keyring.sh` for one test and stopped after it.
struct PrivateKeyring {
    let directory: URL
    let address: String
    let keyringPID: Int32?

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/private-keyring.sh").path

    /// Starts a bus and, unless `withKeyring` is false, a keyring on it; runs `body`; stops both.
    static func with<T>(
        withKeyring: Bool = true,
        timeout: Duration = .seconds(5),
        _ body: (PrivateKeyring, Keyring) async throws -> T
    ) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-test-keyring-\(UUID().uuidString)")
        try await run([script, "start", directory.path] + (withKeyring ? [] : ["--no-keyring"]))
        let address = try String(contentsOf: directory.appendingPathComponent("address"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = (try? String(contentsOf: directory.appendingPathComponent("keyring.pid"), encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let instance = PrivateKeyring(directory: directory, address: address, keyringPID: pid)
        let keyring = Keyring(configuration: .init(timeout: timeout, busAddress: address))
        do {
            let result = try await body(instance, keyring)
            try await run([script, "stop", directory.path])
            return result
        } catch {
            try? await run([script, "stop", directory.path])
            throw error
        }
    }

    /// Locks the default collection through the Secret Service's own `Lock` method.
    func lockDefaultCollection() async throws {
        try await Self.run([
            "/usr/bin/dbus-send", "--bus=\(address)", "--dest=org.freedesktop.secrets", "--type=method_call",
            "--print-reply", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/aliases/default",
        ])
    }

    /// Sends `signal` to the keyring daemon.
    func signalDaemon(_ signal: Int32) throws {
        guard let keyringPID, kill(keyringPID, signal) == 0 else { throw ScriptError(command: "kill", status: -1) }
    }

    struct ScriptError: Error, CustomStringConvertible {
        var command: String
        var status: Int32
        var description: String { "\(command) exited with \(status)" }
    }

    /// Runs a command to its end without blocking a cooperative thread.
    static func run(_ arguments: [String]) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0].hasPrefix("/") ? arguments[0] : "/usr/bin/env")
        process.arguments = arguments[0].hasPrefix("/") ? Array(arguments.dropFirst()) : arguments
        process.standardOutput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else { throw ScriptError(command: arguments.joined(separator: " "), status: status) }
    }
}
