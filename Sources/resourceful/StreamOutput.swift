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
        let bar = isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil
        do throws(APIError) {
            _ = try await api.download(request, to: URL(fileURLWithPath: path)) { progress in bar?.draw(progress) }
            bar?.finish()
            return .success(())
        } catch {
            bar?.finish()
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
                    var parser = ServerSentEventParser(maxBytes: api.defaultOptions.maxResponseBytes)
                    var events: [ServerSentEventParser.Event] = []
                    for try await chunk in response.body {
                        try parser.feed(chunk, into: &events)
                        for event in events { write(event.data) }
                        events.removeAll(keepingCapacity: true)
                    }
                } else {
                    var splitter = LineSplitter(maxBytes: api.defaultOptions.maxResponseBytes, separator: .lineFeed)
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
                throw APIError(kind: .responseTooLarge, detail: "an event or line is longer than \(api.defaultOptions.maxResponseBytes) bytes")
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

/// A one-line progress bar redrawn on standard error.
final class ProgressBar: Sendable {
    func draw(_ progress: DownloadProgress) {
        let done = Self.size(progress.bytesWritten)
        let line: String
        if let total = progress.totalBytes, let fraction = progress.fractionCompleted {
            let filled = Int(fraction * 30)
            line = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled) + "] \(Int(fraction * 100))% \(done) of \(Self.size(total))"
        } else {
            line = "\(done)"
        }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    func finish() {
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private static func size(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
