public import Foundation
public import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A Python program of `Tests/Support/PythonServers/`, run by the project's Python environment
/// (`make setup`), that listens on a free port of 127.0.0.1 and prints `port N` as its first line.
public final class PythonServer: Sendable {
    /// The port it listens on.
    public let port: Int
    private let pid: Int32
    private let exited: Event

    /// The server's base URL.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Starts `script` (a file of `Tests/Support/PythonServers/`) with `arguments`, and waits
    /// until it has printed its port.
    public init(_ script: String, _ arguments: [String] = []) async throws {
        let process = Process()
        let path = PythonTools.root.appendingPathComponent("Tests/Support/PythonServers/\(script)").path
        SignalMask.configure(process, PythonTools.path("python"), [path] + arguments)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let exited = Event()
        process.terminationHandler = { _ in exited.happen() }
        try process.run()
        pid = process.processIdentifier
        self.exited = exited
        let reader = output.fileHandleForReading
        let line = try await onOwnThread { () -> String in
            var bytes = Data()
            while !bytes.contains(UInt8(ascii: "\n")) {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                bytes.append(chunk)
            }
            return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        }
        guard line.hasPrefix("port "), let port = Int(line.dropFirst(5)) else {
            kill(process.processIdentifier, SIGKILL)
            throw Command.Failed(result: .init(status: -1, output: "\(script) printed '\(line)', not its port", duration: .zero))
        }
        // The scripts print their port once they listen: no connection is made to check (a
        // relay counts every connection it accepts).
        self.port = port
    }

    /// Ends the program and waits until it has exited.
    public func stop() async {
        guard !exited.hasHappened else { return }
        kill(pid, SIGKILL)
        await exited.wait(timeout: .seconds(30))
    }

    deinit {
        if !exited.hasHappened { kill(pid, SIGKILL) }
    }

    /// The streaming app of the suite being run (``StreamingAppTrait``).
    @TaskLocal public static var streamingApp: PythonServer?
}

/// Runs `streaming_app.py` (FastAPI, sse-starlette and uvicorn) once around a whole suite; its
/// tests find it in ``PythonServer/streamingApp``.
public struct StreamingAppTrait: SuiteTrait, TestScoping {
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let server = try await PythonServer("streaming_app.py")
        do {
            try await PythonServer.$streamingApp.withValue(server) { try await function() }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}

extension Trait where Self == StreamingAppTrait {
    /// `streaming_app.py`, started once for the suite.
    public static var streamingApp: StreamingAppTrait { StreamingAppTrait() }
}
