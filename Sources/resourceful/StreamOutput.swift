import Foundation
import HTTPTypes
import NIOCore
import Resourceful

#if canImport(Glibc)
import Glibc
#endif

/// `--output` and `--stream`: a body written to a file, or printed as it arrives.
enum StreamOutput {
    /// Downloads `request`'s body to `path`, drawing a progress bar on standard error when it is
    /// a terminal.
    static func download(_ api: API, _ request: ToolRequest, to path: String) async -> Result<Void, APIError> {
        if path == "-" { return await copy(api, request) }
        let bar = isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil
        let work = Task { () async throws -> Void in
            _ = try await api.download(request, to: URL(fileURLWithPath: path)) { progress in bar?.draw(progress) }
        }
        // Ctrl-C cancels the download, which removes its temporary file, rather than end the
        // process with the file left behind.
        let interrupts = Interrupts(cancelling: work)
        defer { interrupts.stop() }
        do {
            try await work.value
            bar?.finish()
            return .success(())
        } catch {
            bar?.finish()
            return .failure(error as? APIError ?? APIError(kind: .cancelled, underlying: error))
        }
    }

    /// `--output -`: the body's bytes on standard output, as they arrive, unchanged.
    static func copy(_ api: API, _ request: ToolRequest) async -> Result<Void, APIError> {
        guard isatty(STDOUT_FILENO) != 1 else {
            // Raw bytes could drive the terminal (escape sequences): curl's rule.
            return .failure(APIError(kind: .file, detail: "standard output is a terminal: --output - writes the body's raw bytes; redirect it, or use --stream"))
        }
        do throws(APIError) {
            let response = try await api.stream(request)
            do {
                for try await chunk in response.body {
                    FileHandle.standardOutput.write(Data(chunk.readableBytesView))
                }
            } catch let error as APIError {
                throw error
            } catch {
                throw APIError(kind: .transport, underlying: error)
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Prints each event's data (`text/event-stream`) or each line of the body, one per line, as
    /// it arrives.
    static func print(_ api: API, _ request: ToolRequest) async -> Result<Void, APIError> {
        do throws(APIError) {
            let response = try await api.stream(request)
            let type = response.headerFields[.contentType].map { $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? "" }
            do {
                if type == "text/event-stream" {
                    var parser = ServerSentEventParser(maxBytes: response.maxBytes)
                    var events: [ServerSentEventParser.Event] = []
                    for try await chunk in response.body {
                        try parser.feed(chunk, into: &events)
                        for event in events { write(event.data) }
                        events.removeAll(keepingCapacity: true)
                    }
                } else {
                    var splitter = LineSplitter(maxBytes: response.maxBytes, separator: .lineFeed)
                    var lines: [[UInt8]] = []
                    for try await chunk in response.body {
                        try splitter.feed(chunk, into: &lines)
                        for line in lines { write(String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...], as: UTF8.self)) }
                        lines.removeAll(keepingCapacity: true)
                    }
                    try splitter.finish(into: &lines)
                    for line in lines { write(String(decoding: line, as: UTF8.self)) }
                }
            } catch let error as APIError {
                throw error
            } catch {
                throw APIError(kind: .responseTooLarge, detail: "an event or line is longer than \(response.maxBytes) bytes")
            }
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// One line on standard output, at once (not held in a buffer while the stream goes on);
    /// on a terminal, without the control characters a server could use to drive it.
    private static func write(_ line: String) {
        let shown = toTerminal ? String(String.UnicodeScalarView(line.unicodeScalars.filter { $0 == "\t" || $0.properties.generalCategory != .control })) : line
        FileHandle.standardOutput.write(Data((shown + "\n").utf8))
    }

    private static let toTerminal = isatty(STDOUT_FILENO) == 1
}

/// `SIGINT`, `SIGTERM`, `SIGHUP` (the terminal closed) and `SIGQUIT` while a task runs: the first
/// cancels it, so that it removes what it wrote (and puts the signal's default back, so that a
/// second one ends the process at once).
final class Interrupts {
    private var sources: [any DispatchSourceSignal] = []

    init(cancelling task: Task<Void, any Error>) {
        for number in Self.signals {
            // Delivered to the source below instead of ending the process.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                signal(number, SIG_DFL)
                task.cancel()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Stops listening: the signals end the process again.
    func stop() {
        for source in sources { source.cancel() }
        sources = []
        for number in Self.signals { signal(number, SIG_DFL) }
    }

    /// The signals that cancel the task instead of ending the process at once.
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
}

/// A one-line progress bar redrawn on standard error.
final class ProgressBar: Sendable {
    /// The bar's width in characters.
    static let width = 30

    func draw(_ progress: DownloadProgress) {
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + Self.line(bytesWritten: progress.bytesWritten, totalBytes: progress.totalBytes)).utf8))
    }

    /// The line drawn for a download at `bytesWritten` of `totalBytes`: every count clamped, so
    /// that whatever a server's lengths say (more bytes than the total, a negative or absurd
    /// total), it never traps.
    static func line(bytesWritten: Int, totalBytes: Int?) -> String {
        let done = size(bytesWritten)
        guard let total = totalBytes, total > 0 else { return done }
        let fraction = min(max(Double(bytesWritten) / Double(total), 0), 1)
        let filled = min(max(Int(fraction * Double(width)), 0), width)
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] \(Int(fraction * 100))% \(done) of \(size(total))"
    }

    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }

    /// `bytes` in B, KiB… for a person; a negative count shows as 0 B.
    static func size(_ bytes: Int) -> String {
        let bytes = max(bytes, 0)
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
