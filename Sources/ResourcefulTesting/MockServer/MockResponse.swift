public import Foundation
public import HTTPTypes

/// What a ``MockServer`` answers, or how it misbehaves.
public struct MockResponse: Sendable {
    /// A way to fail on purpose.
    public enum Fault: Sendable, Hashable {
        /// Close the connection without answering.
        case closeConnection
        /// Send the status line and header fields, then close before the body.
        case closeAfterHead
        /// Send the head and the first `bytes` of the body, then close.
        case closeMidBody(bytes: Int)
    }

    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields; `Content-Length` is added.
    public var headerFields: HTTPFields
    /// The body.
    public var body: Data
    /// How long to wait before sending anything.
    public var delay: Duration?
    /// How long to wait between the head and the body.
    public var bodyDelay: Duration?
    /// A misbehaviour in place of a proper answer.
    public var fault: Fault?
    /// The body as parts written one at a time, ``partDelay`` apart, in place of ``body``: sent
    /// chunked unless ``headerFields`` names a `Content-Length`. The server writes each part only
    /// as fast as the client reads (the server counts what it wrote).
    public var parts: [Data]?
    /// How long to wait before each of ``parts``.
    public var partDelay: Duration?

    /// Creates a response.
    public init(
        status: HTTPResponse.Status = .ok,
        headerFields: HTTPFields = [:],
        body: Data = Data(),
        delay: Duration? = nil,
        bodyDelay: Duration? = nil,
        fault: Fault? = nil
    ) {
        self.status = status
        self.headerFields = headerFields
        self.body = body
        self.delay = delay
        self.bodyDelay = bodyDelay
        self.fault = fault
    }

    /// A JSON response with `value` encoded by a plain `JSONEncoder` (sorted keys, ISO 8601 dates).
    public static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> MockResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return json(raw: try encoder.encode(value), status: status)
    }

    /// A response whose body is `json`, sent as is with `Content-Type: application/json`.
    public static func json(raw json: String, status: HTTPResponse.Status = .ok) -> MockResponse {
        self.json(raw: Data(json.utf8), status: status)
    }

    /// A response whose body is `data`, with `Content-Type: application/json`.
    public static func json(raw data: Data, status: HTTPResponse.Status = .ok) -> MockResponse {
        MockResponse(status: status, headerFields: [.contentType: "application/json"], body: data)
    }

    /// A response with `status` and no body.
    public static func status(_ status: HTTPResponse.Status) -> MockResponse {
        MockResponse(status: status)
    }

    /// A response that closes the connection without answering.
    public static let closeConnection = MockResponse(fault: .closeConnection)

    /// This response, sent after `delay`.
    public func delayed(by delay: Duration) -> MockResponse {
        var copy = self
        copy.delay = delay
        return copy
    }
}
