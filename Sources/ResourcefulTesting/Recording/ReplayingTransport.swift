public import Foundation
public import Logging
public import Resourceful
import HTTPTypes
import NIOCore

/// An ``HTTPTransport`` that answers from a HAR file and never uses the network.
///
/// It reads what ``RecordingTransport`` writes and what browsers, mitmproxy and other tools
/// export: fields they leave out, `postData.params`, base64 bodies and comments are understood,
/// and an entry that cannot be replayed (no response, status 0, an invalid URL) is left out with
/// a warning on the logger. Requests are matched by ``RequestMatching``; one that matches no
/// unused recording fails the call with ``CassetteError`` (kind ``CassetteError/Kind/noRecording``)
/// as the underlying error of a `TransportError` that is never retried: `APIError.underlying` is
/// the cassette error, which names the request, the closest recording and why it did not match.
public final class ReplayingTransport: HTTPTransport {
    private let store: ReplayStore
    /// Records what the store cannot answer (``CassetteMode/newEpisodes``).
    private let fallback: RecordingTransport?

    /// Answers from the HAR file `file`.
    ///
    /// - Parameters:
    ///   - matching: How requests are matched to recordings.
    ///   - masking: The rules the file was masked by: masked values match any value.
    ///   - logger: Where entries left out are reported.
    /// - Throws: ``CassetteError`` when `file` cannot be read or is not a HAR file.
    public convenience init(
        file: URL,
        matching: RequestMatching = RequestMatching(),
        masking: APIConfig.LogSettings = APIConfig.LogSettings(),
        logger: Logger = Logger(label: "resourceful.cassette")
    ) throws(CassetteError) {
        try self.init(file: file, matching: matching, masking: masking, logger: logger, fallback: nil)
    }

    init(
        file: URL,
        matching: RequestMatching,
        masking: APIConfig.LogSettings,
        logger: Logger,
        fallback: RecordingTransport?
    ) throws(CassetteError) {
        let redaction = CassetteRedaction(masking)
        let archive = try HARArchive.read(file)
        store = ReplayStore(
            recordings: ReplayStore.recordings(in: archive, file: file.lastPathComponent, logger: logger),
            matcher: RequestMatcher(rules: matching, redaction: redaction)
        )
        self.fallback = fallback
    }

    /// The recorded answer to `request`.
    ///
    /// - Throws: a connection failure over a ``CassetteError`` when no unused recording matches;
    ///   ``TransportError/responseTooLarge`` when the recorded body is over the request's limit;
    ///   ``TransportError/cancelled`` when the task is cancelled.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        // A handler's, a cassette's or a recording's own error, as a transport reports it.
        try await TransportError.reporting { try await answer(request) }
    }

    /// ``send(_:)``, throwing what went wrong as it is.
    private func answer(_ request: TransportRequest) async throws -> TransportResponse {
        if Task.isCancelled { throw TransportError.cancelled }
        // A streamed body is compared as the bytes it holds.
        var request = request
        if let body = request.body, body.bytes == nil {
            request.body = TransportBody(try await body.collect(upTo: Int(UInt32.max)))
        }
        switch store.answer(request) {
        case .success(var response):
            if request.streamsResponseBody, let bytes = response.body.bytes {
                // Replayed as it was received: a stream, in parts.
                let parts = stride(from: 0, to: bytes.readableBytes, by: 16 * 1024).compactMap {
                    bytes.getSlice(at: bytes.readerIndex + $0, length: Swift.min(16 * 1024, bytes.readableBytes - $0))
                }
                response.body = TransportBody(stream: ReplayedParts(parts: parts), length: bytes.readableBytes)
                return response
            }
            guard (response.body.length ?? 0) <= request.maxResponseBytes else { throw TransportError.responseTooLarge }
            return response
        case .failure(let error):
            guard let fallback else { throw error }
            let response = try await fallback.send(request)
            store.add(
                CassetteRequest(method: request.method.rawValue, url: request.url),
                response
            )
            return response
        }
    }

    /// Shuts down the transport new episodes are recorded through, if any.
    public func shutdown() async throws {
        try await fallback?.shutdown()
    }
}

/// Recorded parts of a body, handed on one at a time.
struct ReplayedParts: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    typealias Failure = Never

    let parts: [ByteBuffer]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<ByteBuffer>

        mutating func next() async -> ByteBuffer? {
            remaining.popFirst()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(remaining: parts[...])
    }
}
