public import Foundation
import HTTPTypes
public import Resourceful

/// An ``HTTPTransport`` that sends through another one and appends each exchange to a HAR 1.2
/// file, with every secret masked before it reaches the disk, so that the file can be committed.
///
/// Masked by the API's redaction rules (give it ``APIConfig/redaction``, which adds the
/// credential's field to the logging settings): the values of `Authorization`, `Cookie`,
/// `Set-Cookie` and every other masked header field; masked query values, in the URL and in the
/// URLs of `Location`, `Content-Location`, `Link` and `Refresh`; masked fields of JSON, form and
/// multipart bodies, in requests and responses. A body that cannot be masked (another media type,
/// or not what its type says, or a streamed body cut at 1 MiB that is not
/// made of lines) is left out, with a comment giving its size and type, unless
/// `keepingBodiesThatCannotBeMasked` says to keep it; a body its request redacts
/// (``TransportRequest/shouldRedactRequestBody``, ``TransportRequest/shouldRedactResponseBody``)
/// is always left out. A compressed response is kept decompressed, as HAR expects; a body that is
/// not text is kept as base64. An exchange that failed before any answer (a refused connection, a
/// time-out) is not recorded.
///
/// ```swift
/// let recorder = try RecordingTransport(AsyncHTTPClientTransport(), file: cassette, masking: config.redaction)
/// let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: recorder))
/// ```
public final class RecordingTransport: HTTPTransport {
    private let transport: any HTTPTransport
    private let recorder: HARRecorder
    private let redaction: CassetteRedaction

    /// Records what `transport` exchanges into `file`, after what it already holds unless
    /// `appending` is false, masking by `masking`'s rules (``APIConfig/redaction``).
    ///
    /// - Parameter keepingBodiesThatCannotBeMasked: Whether bodies of media types the rules
    ///   cannot mask (binary downloads, plain text, XML) are kept as they are; only for services
    ///   whose such bodies hold no secret. A body of a type the rules mask (JSON, form, multipart,
    ///   event stream, JSON Lines) that cannot be masked is left out all the same.
    /// - Throws: ``CassetteError`` when `file` exists but is not a HAR file, or cannot be written.
    public init(
        _ transport: any HTTPTransport,
        file: URL,
        masking: APIConfig.LogSettings = APIConfig.LogSettings(),
        appending: Bool = true,
        keepingBodiesThatCannotBeMasked: Bool = false
    ) throws(CassetteError) {
        self.transport = transport
        recorder = try HARRecorder(file: file, appending: appending)
        redaction = CassetteRedaction(masking, keepsUnmaskableBodies: keepingBodiesThatCannotBeMasked)
    }

    /// Sends `request` through the wrapped transport and records the exchange.
    ///
    /// - Throws: What the wrapped transport throws, or ``CassetteError`` when the file cannot be
    ///   written.
    public func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        // A handler's, a cassette's or a recording's own error, as a transport reports it.
        try await TransportError.reporting { try await answer(request) }
    }

    /// ``send(_:)``, throwing what went wrong as it is.
    private func answer(_ request: TransportRequest) async throws -> TransportResponse {
        let started = Date()
        let start = ContinuousClock.now
        // A streamed request body goes out as it is, never held whole: the recording names no
        // body for it.
        var response = try await transport.send(request)
        if response.body.bytes == nil, request.streamsResponseBody {
            // A stream is handed on as it arrives; its first MiB is recorded when it ends.
            let (recorder, redaction, head) = (self.recorder, self.redaction, response)
            let keeper = RecordedStream<TransportBody>.Keeper(limit: Self.streamRecordingLimit) { kept, cut in
                var recorded = head
                recorded.body = TransportBody(kept)
                // A body kept in part no longer has the length the server announced.
                if cut { recorded.headerFields[.contentLength] = nil }
                try recorder.append(
                    redaction.entry(
                        request: request, response: recorded, started: started, duration: ContinuousClock.now - start, truncated: cut)
                )
            }
            response.body = TransportBody(stream: RecordedStream(base: response.body, keeper: keeper), length: response.body.length)
            return response
        }
        if response.body.bytes == nil {
            response.body = TransportBody(try await response.body.collect(upTo: request.maxResponseBytes))
        }
        let entry = redaction.entry(request: request, response: response, started: started, duration: ContinuousClock.now - start)
        try recorder.append(entry)
        return response
    }

    /// The most of a streamed response body a recording keeps (1 MiB), cut after its last whole
    /// line: server-sent events and JSON Lines as text, masked as their media type says.
    package static let streamRecordingLimit = 1 << 20

    /// Shuts the wrapped transport down.
    public func shutdown() async throws {
        try await transport.shutdown()
    }
}
