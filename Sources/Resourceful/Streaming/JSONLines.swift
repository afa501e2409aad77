import Foundation
import HTTPTypes
package import NIOCore

extension API {
    /// Calls `request` and returns the elements of a streamed JSON body as they arrive, each
    /// decoded as the request's `ResourceType` by the request's decoder: JSON Lines / NDJSON
    /// (`application/jsonl`, `application/x-ndjson`, one value per line; CRLF line ends and blank
    /// lines allowed) or, when the response says `application/json-seq`, a JSON text sequence
    /// (RFC 7464, each value after a record separator).
    ///
    /// ```swift
    /// for try await row in api.lines(ExportRows(table: "orders")) {
    ///     try await warehouse.insert(row)
    /// }
    /// ```
    ///
    /// A line that is not a `ResourceType` fails the sequence with ``APIError/Kind/decodingFailed``
    /// naming its number, never its text; one longer than ``RequestOptions/maxResponseBytes`` (as
    /// the middlewares left it, ``CallContext/options``) with ``APIError/Kind/responseTooLarge``. ``RequestOptions/timeout`` bounds the wait for the head
    /// and each silence of the server. The stream is not opened again when it ends.
    public func lines<Request: ResourceRequest>(_ request: Request) -> JSONLines<Request> {
        JSONLines(api: self, request: request)
    }
}

/// The elements of a JSON Lines or JSON text sequence body, decoded (``API/lines(_:)``). Read
/// it once.
public struct JSONLines<Request: ResourceRequest>: AsyncSequence, Sendable {
    /// An element: one line's value.
    public typealias Element = Request.ResourceType
    /// What reading throws: an ``APIError``.
    public typealias Failure = any Error

    let api: API
    let request: Request

    /// Reads the elements.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: JSONLines
        let options: RequestOptions
        var splitter: LineSplitter
        var body: ResponseBodyStream.AsyncIterator?
        var pending: [[UInt8]] = []
        /// The next of `pending` to hand out.
        var next = 0
        var opened = false
        var ended = false
        /// What ends the sequence once the lines before it are handed out.
        var failure: APIError?
        var lineNumber = 0

        init(sequence: JSONLines) {
            self.sequence = sequence
            options = sequence.api.defaultOptions.applying(sequence.request)
            // Replaced once the stream is open, with the cap the middlewares left.
            splitter = LineSplitter(maxBytes: options.maxResponseBytes, separator: .lineFeed)
        }

        /// The next element, or `nil` at the end of the body.
        public mutating func next() async throws -> Request.ResourceType? {
            if !opened {
                opened = true
                let response = try await sequence.api.openStream(sequence.request, extraFields: [.accept: "application/jsonl, application/x-ndjson, application/json-seq;q=0.9"])
                let type = response.headerFields[.contentType].map { String(MediaType.essence(of: $0)) }
                // The longest line is the cap the middlewares left (``CallContext/options``).
                splitter = LineSplitter(maxBytes: response.maxBytes, separator: type == "application/json-seq" ? .recordSeparator : .lineFeed)
                body = response.body.makeAsyncIterator()
            }
            while true {
                if next < pending.count {
                    let line = pending[next]
                    next += 1
                    lineNumber += 1
                    if line.allSatisfy(Self.isWhitespace) { continue }
                    return try decode(line)
                }
                pending.removeAll(keepingCapacity: true)
                next = 0
                if let failure {
                    // Once, after the lines before it: the sequence ends with it.
                    self.failure = nil
                    ended = true
                    throw failure
                }
                if ended { return nil }
                let chunk = try await body?.next()
                if chunk == nil { ended = true }
                do {
                    if let chunk {
                        try splitter.feed(chunk, into: &pending)
                    } else {
                        try splitter.finish(into: &pending)
                    }
                } catch {
                    // The lines before the long one are handed out first; no more is read.
                    body = nil
                    ended = true
                    failure = APIError(kind: .responseTooLarge, detail: "line \(lineNumber + pending.count + 1) is longer than \(splitter.maxBytes) bytes")
                        .with(method: method, path: sequence.api.maskedPath(sequence.request.path))
                }
            }
        }

        private var method: HTTPRequest.Method { sequence.request.verb.method(update: options.updateMethod) }

        private func decode(_ line: [UInt8]) throws -> Request.ResourceType {
            do {
                return try options.responseDecoder.decode(Request.ResourceType.self, from: Data(line))
            } catch {
                var failure = APIError(kind: .decodingFailed, detail: "line \(lineNumber) is not a \(Request.ResourceType.self)", underlying: error)
                if let decoding = error as? DecodingError { failure.codingPath = APIError.codingPath(of: decoding) }
                throw failure.with(method: method, path: sequence.api.maskedPath(sequence.request.path))
            }
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
        }
    }

    /// Starts reading: the first call of `next()` opens the stream.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }
}

/// Splits a byte stream into records at a separator byte: LF for JSON Lines (a CR before it is
/// JSON whitespace, left to the decoder), RS (0x1E) before each value for JSON text sequences.
package struct LineSplitter {
    package enum Separator: UInt8 {
        case lineFeed = 0x0A
        case recordSeparator = 0x1E
    }

    /// A record was longer than the limit.
    struct TooLong: Error {}

    let maxBytes: Int
    let separator: Separator
    private var partial: [UInt8] = []

    package init(maxBytes: Int, separator: Separator) {
        self.maxBytes = maxBytes
        self.separator = separator
    }

    /// Appends the records `buffer` completes to `records`.
    package mutating func feed(_ buffer: ByteBuffer, into records: inout [[UInt8]]) throws {
        let separator = self.separator.rawValue
        try buffer.withUnsafeReadableBytes { bytes in
            var start = 0
            while let end = bytes[start...].firstIndex(of: separator) {
                let piece = bytes[start..<end]
                guard partial.count + piece.count <= maxBytes else { throw TooLong() }
                // Each record is a buffer of its own, sized to it: handing out `partial` itself
                // and then emptying it would share its storage, so that the next line would get
                // a fresh buffer as large as the longest line seen, and every record keep one.
                var record = [UInt8]()
                record.reserveCapacity(partial.count + piece.count)
                record.append(contentsOf: partial)
                record.append(contentsOf: piece)
                records.append(record)
                // Never shared, emptied in place: it keeps at most the longest line's capacity.
                partial.removeAll(keepingCapacity: true)
                start = end + 1
            }
            guard partial.count + (bytes.count - start) <= maxBytes else { throw TooLong() }
            partial.append(contentsOf: bytes[start...])
        }
    }

    /// The last record, which has no separator after it.
    package mutating func finish(into records: inout [[UInt8]]) throws {
        guard !partial.isEmpty else { return }
        var record = [UInt8]()
        record.reserveCapacity(partial.count)
        record.append(contentsOf: partial)
        records.append(record)
        partial = []
    }
}
