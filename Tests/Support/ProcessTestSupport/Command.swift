import Foundation

/// Runs a program to its end without blocking a cooperative thread.
public enum Command {
    /// How a program ended and what it printed.
    public struct Result: Sendable {
        public var status: Int32
        public var output: String
        public var duration: Duration

        public init(status: Int32, output: String, duration: Duration) {
            self.status = status
            self.output = output
            self.duration = duration
        }
    }

    /// A program that exited with a failure.
    public struct Failed: Error, CustomStringConvertible {
        public var result: Result
        public init(result: Result) { self.result = result }
        public var description: String { "exit \(result.status): \(result.output)" }
    }

    /// Runs `executable` with the test process's environment, less its session bus unless
    /// `keepSessionBus`, plus `environment`; with `capture` false its output is discarded (for
    /// commands that leave daemons running, which would hold a pipe open).
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        input: String? = nil,
        capture: Bool = true,
        keepSessionBus: Bool = false
    ) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        if !keepSessionBus { variables["DBUS_SESSION_BUS_ADDRESS"] = nil }
        variables.merge(environment) { $1 }
        process.environment = variables
        let output = Pipe()
        process.standardOutput = capture ? output : FileHandle.nullDevice
        process.standardError = capture ? output : FileHandle.nullDevice
        let stdin = Pipe()
        process.standardInput = stdin
        let start = ContinuousClock.now
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
                if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
                try stdin.fileHandleForWriting.close()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        try output.fileHandleForWriting.close()
        let text = capture ? String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) : ""
        return Result(status: status, output: text, duration: ContinuousClock.now - start)
    }
}

/// The `resourceful` tool built beside the test bundle.
public let resourcefulTool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("resourceful").path
