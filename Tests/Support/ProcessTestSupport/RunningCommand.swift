import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A command a test talks to while it runs: its output read line by line (a login's code,
/// say), then to its end.
public final class RunningCommand: Sendable {
    private let process: Process
    private let reader: FileHandle
    private let exited: Event
    private let start = ContinuousClock.now
    /// Output read past the last line returned.
    private let seen = Mutex(Data())

    /// Starts `executable` with `arguments` and the test process's environment (its session bus
    /// kept: keyring commands need it), standard output and error read together.
    public init(_ executable: String, _ arguments: [String]) throws {
        process = Process()
        SignalMask.configure(process, executable, arguments)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let exited = Event()
        process.terminationHandler = { _ in exited.happen() }
        self.exited = exited
        reader = output.fileHandleForReading
        try process.run()
        try? output.fileHandleForWriting.close()
    }

    /// Reads until a line satisfies `matches`, and returns it; `nil` when the output ends first.
    public func line(where matches: @escaping @Sendable (String) -> Bool) async throws -> String? {
        return try await onOwnThread { [self] () -> String? in
            var buffer = seen.withLock { $0 }
            defer { seen.withLock { $0 = buffer } }
            while true {
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer = Data(buffer[buffer.index(after: newline)...])
                    if matches(line) { return line }
                }
                let chunk = reader.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
        }
    }

    /// Sends the command `SIGINT`, as Ctrl-C in a terminal does.
    public func interrupt() { process.interrupt() }

    /// Sends the command the signal `number` (`SIGHUP`, as a closed terminal does, say).
    public func send(signal number: Int32) { kill(process.processIdentifier, number) }

    /// Reads the rest of the output and waits for the command to exit.
    public func finish() async throws -> Command.Result {
        let rest = try await onOwnThread { [self] () -> Data in
            var data = seen.withLock { $0 }
            data.append(reader.readDataToEndOfFile())
            return data
        }
        await exited.wait(timeout: .seconds(60))
        if !exited.hasHappened { kill(process.processIdentifier, SIGKILL) }
        return Command.Result(status: process.terminationStatus, output: String(decoding: rest, as: UTF8.self), duration: ContinuousClock.now - start)
    }

    deinit {
        if !exited.hasHappened { kill(process.processIdentifier, SIGKILL) }
    }
}
