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
    ///
    /// The program starts with every signal unblocked, and is started, fed and read on a thread
    /// of its own: nothing here holds a cooperative thread while it runs.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        input: String? = nil,
        capture: Bool = true,
        keepSessionBus: Bool = false
    ) async throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw Failed(result: Result(status: 127, output: "\(executable): no such executable", duration: .zero))
        }
        var variables = ProcessInfo.processInfo.environment
        if !keepSessionBus { variables["DBUS_SESSION_BUS_ADDRESS"] = nil }
        variables.merge(environment) { $1 }
        let childEnvironment = variables
        let start = ContinuousClock.now
        let (status, text) = try await ProcessTestSupport.onOwnThread { () throws -> (Int32, String) in
            let process = Process()
            SignalMask.configure(process, executable, arguments)
            process.environment = childEnvironment
            let output = Pipe()
            process.standardOutput = capture ? output : FileHandle.nullDevice
            process.standardError = capture ? output : FileHandle.nullDevice
            let stdin = Pipe()
            process.standardInput = stdin
            try process.run()
            try? output.fileHandleForWriting.close()
            if let input { try? stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8)) }
            try? stdin.fileHandleForWriting.close()
            let data = capture ? output.fileHandleForReading.readDataToEndOfFile() : Data()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        return Result(status: status, output: text, duration: ContinuousClock.now - start)
    }

}

/// The `resourceful` tool built beside the test bundle.
public let resourcefulTool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("resourceful").path
