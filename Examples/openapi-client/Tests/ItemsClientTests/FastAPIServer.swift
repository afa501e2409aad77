import Foundation

/// The FastAPI app in `fastapi-app/`, served by uvicorn from the project's Python environment
/// (`make setup` installs it) on 127.0.0.1 at a free port.
enum FastAPIServer {
    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let python = examples.deletingLastPathComponent().appending(path: ".build/python/bin/python")

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `body` with the server's base URL; stops the server afterwards.
    static func withRunning<T>(_ body: (URL) async throws -> T) async throws -> T {
        let process = Process()
        process.executableURL = python
        process.arguments = [examples.appending(path: "fastapi-app/serve.py").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            // SIGKILL: the test runner's threads may block SIGTERM, and a child inherits the mask.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let port = try await firstLine(of: output.fileHandleForReading)
        guard let number = port.split(separator: " ").last.flatMap({ Int($0) }), port.hasPrefix("port ") else {
            throw StartError(description: "serve.py printed '\(port)', not its port")
        }
        return try await body(URL(string: "http://127.0.0.1:\(number)")!)
    }

    /// The first line `handle` gives, read off the cooperative pool.
    private static func firstLine(of handle: FileHandle) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var bytes = Data()
                while !bytes.contains(UInt8(ascii: "\n")) {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    bytes.append(chunk)
                }
                guard let line = String(data: bytes, encoding: .utf8)?.split(separator: "\n").first else {
                    continuation.resume(throwing: StartError(description: "serve.py exited before it listened"))
                    return
                }
                continuation.resume(returning: String(line))
            }
        }
    }
}
