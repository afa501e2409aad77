import Foundation
import HTTPTypes
import NIOCore
import Resourceful

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// `--output` and `--stream`: a body written to a file, or printed as it arrives.
enum StreamOutput {
    /// Downloads `request`'s body to `path`, drawing a progress bar on standard error when it is
    /// a terminal (unless not `progress`: `-s`); at most `maxFileSize` bytes (`--max-filesize`);
    /// with `resume` (`-C -`), a part an interrupted run kept is continued, and this run keeps its
    /// own when interrupted.
    static func download(
        _ api: API, _ request: ToolRequest, to path: String, resume: Bool = false, maxFileSize: Int? = nil, progress: Bool = true
    ) async -> Result<Void, APIError> {
        if path == "-" {
            guard !resume else {
                return .failure(APIError(kind: .invalidRequest, detail: "-C - resumes a file: it does not go with --output -"))
            }
            return await copy(api, request, maxBytes: maxFileSize)
        }
        let bar = progress && isatty(STDERR_FILENO) == 1 ? ProgressBar() : nil
        let destination = URL(fileURLWithPath: path, isDirectory: false)
        let options = DownloadOptions(maxBytes: maxFileSize, keepsPartialFile: resume)
        let work = Task { () async throws -> Void in
            _ = try await api.download(request, to: destination, options: options) { progress in bar?.draw(progress) }
        }
        // Ctrl-C (and every other signal that would end the process) cancels the download, which
        // removes its temporary file (or, with -C -, keeps its part), rather than end the process
        // with the file left behind.
        let interrupts = Interrupts(cancelling: work)
        defer { interrupts.stop() }
        do {
            try await work.value
            bar?.finish()
            return .success(())
        } catch {
            bar?.finish()
            if resume, let apiError = error as? APIError, let kept = await keptPart(after: apiError, for: destination) {
                ProgressBar.writeError("resourceful: \(ProgressBar.size(kept.size)) kept in \(kept.path); run the same command with -C - to resume\n")
            }
            return .failure(error as? APIError ?? APIError(kind: .cancelled, underlying: error))
        }
    }

    /// The part this run kept for a resume after `error`, and its size; `nil` when it kept none:
    /// the download was refused rather than stopped (another download holds the part, the part
    /// is not this user's own regular file, too large, a `206` that does not continue it), so
    /// that a part on disk is not this run's to offer.
    ///
    /// The same rule as the library's: a part is kept when the download was cancelled, timed
    /// out, lost its connection or met a server error or `429`; and what is on disk must be this
    /// user's regular file with one link, beside the state file a resumable download writes.
    /// Looked at on a thread of its own for at most ``lookWait``: on a file system that does not
    /// answer (what may have stopped the download), no part is offered.
    static func keptPart(after error: APIError, for destination: URL) async -> (path: String, size: Int)? {
        let stopped = switch error.kind {
        case .cancelled, .timeout: true
        case .transport: error.status == nil
        case .unacceptableStatus: error.status.map { $0.kind == .serverError || $0 == .tooManyRequests } ?? false
        default: false
        }
        guard stopped else { return nil }
        let partial = DownloadOptions.partialFile(for: destination).path
        let state = DownloadOptions.partialStateFile(for: destination).path
        let outcome = await OffPoolWork.run(until: .now + lookWait, abandon: { (_: Int?) in }) { () -> Int? in
            guard let part = ownFile(partial), part.st_size > 0, ownFile(state) != nil else { return nil }
            return Int(part.st_size)
        }
        guard case .done(let size?) = outcome else { return nil }
        return (partial, size)
    }

    /// The status of `path` when it is this user's regular file with one link.
    private static func ownFile(_ path: String) -> Glibc.stat? {
        var status = Glibc.stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(), status.st_nlink == 1 else { return nil }
        return status
    }

    /// The longest ``keptPart(after:for:)`` waits for the file system.
    static let lookWait = Duration.seconds(2)

    /// `--output -`: the body's bytes on standard output, as they arrive, unchanged; at most
    /// `maxBytes` of them (`--max-filesize`: a larger `Content-Length` is refused before a byte
    /// is written, a body without one stops at the first byte past it).
    static func copy(_ api: API, _ request: ToolRequest, maxBytes: Int? = nil) async -> Result<Void, APIError> {
        guard isatty(STDOUT_FILENO) != 1 else {
            // Raw bytes could drive the terminal (escape sequences a server put in the body):
            // refused, where curl would write them; without -o the body is shown with its
            // control characters escaped.
            return .failure(
                APIError(
                    kind: .file,
                    detail: "standard output is a terminal: --output - writes the body's raw bytes, which could drive it; "
                        + "redirect it, or leave out --output to see the body with its control characters escaped"))
        }
        do throws(APIError) {
            let response = try await api.stream(request)
            if let maxBytes, let length = response.body.expectedLength, length > maxBytes {
                throw APIError(kind: .responseTooLarge, status: response.status, detail: "the body's \(length) bytes are more than --max-filesize's \(maxBytes)")
            }
            var written = 0
            do {
                for try await chunk in response.body {
                    if let maxBytes, chunk.readableBytes > maxBytes - written {
                        throw APIError(kind: .responseTooLarge, status: response.status, detail: "the body is larger than --max-filesize's \(maxBytes) bytes")
                    }
                    written += chunk.readableBytes
                    try StandardStreams.output(chunk.readableBytesView)
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
                        // The events completed before an oversized one in the same chunk are
                        // printed before it is reported.
                        defer { events.removeAll(keepingCapacity: true) }
                        do {
                            try parser.feed(chunk, into: &events)
                        } catch {
                            for event in events { try write(event.data) }
                            throw error
                        }
                        for event in events { try write(event.data) }
                    }
                } else {
                    var splitter = LineSplitter(maxBytes: response.maxBytes, separator: .lineFeed)
                    var lines: [[UInt8]] = []
                    for try await chunk in response.body {
                        // As for events: every complete line before an oversized one is printed.
                        defer { lines.removeAll(keepingCapacity: true) }
                        do {
                            try splitter.feed(chunk, into: &lines)
                        } catch {
                            for line in lines { try write(text(line)) }
                            throw error
                        }
                        for line in lines { try write(text(line)) }
                    }
                    try splitter.finish(into: &lines)
                    for line in lines { try write(text(line)) }
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

    /// A line of a streamed body as text, without the `\r` of a CRLF line end.
    private static func text(_ line: [UInt8]) -> String {
        String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...], as: UTF8.self)
    }

    /// One line on standard output, at once (not held in a buffer while the stream goes on);
    /// on a terminal, with every character a server could use to drive it or to reorder what is
    /// shown (controls, bidirectional overrides, zero-width and other format characters) written
    /// as an escape, by ``TerminalText``'s rule.
    private static func write(_ line: String) throws(APIError) {
        try StandardStreams.output(Array(((toTerminal ? TerminalText.escaped(line) : line) + "\n").utf8))
    }

    private static let toTerminal = isatty(STDOUT_FILENO) == 1
}

/// Every signal that would end the process and can be caught, while a task runs: the first
/// cancels it, so that it removes what it wrote (and puts the signal's default back, so that a
/// second one ends the process at once). `SIGPIPE` is ignored meanwhile, as curl ignores it: a
/// write to a closed pipe (the progress bar's terminal gone) fails instead of ending the process
/// with its temporary file left, and the download goes on to its end.
final class Interrupts {
    private var sources: [any DispatchSourceSignal] = []

    init(cancelling task: Task<Void, any Error>) {
        signal(SIGPIPE, SIG_IGN)
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
        for number in Self.signals + [SIGPIPE] { signal(number, SIG_DFL) }
    }

    /// The signals that cancel the task instead of ending the process at once: every one whose
    /// default action ends the process and that can be caught (`SIGKILL` and `SIGSTOP` cannot),
    /// the real-time ones included, but `SIGPIPE` (ignored). Left out are those that report a
    /// fault of this process itself (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`, `SIGTRAP`,
    /// `SIGSYS`, `SIGABRT`): code run after one would run in a process whose state cannot be
    /// trusted, and the kernel ends a process whose fault signal is ignored all the same.
    static let signals: [Int32] = {
        var numbers: [Int32] = [SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF]
        #if os(Linux)
        numbers += [SIGSTKFLT, SIGIO, SIGPWR]
        numbers += Array(__libc_current_sigrtmin()...__libc_current_sigrtmax())
        #endif
        return numbers
    }()
}

/// A one-line progress bar redrawn on standard error.
final class ProgressBar: Sendable {
    /// The bar's width in characters.
    static let width = 30

    func draw(_ progress: DownloadProgress) {
        Self.writeError("\r\u{1B}[K" + Self.line(bytesWritten: progress.bytesWritten, totalBytes: progress.totalBytes))
    }

    /// Writes `text` to standard error, ignoring a failure: a terminal or pipe closed under the
    /// download (`SIGPIPE`, ignored meanwhile) must not end the process before it cleaned up.
    static func writeError(_ text: String) {
        StandardStreams.error(text)
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
        Self.writeError("\n")
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
