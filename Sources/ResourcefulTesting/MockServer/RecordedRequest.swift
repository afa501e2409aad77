public import Foundation
public import HTTPTypes

/// A request as a ``MockServer`` received it.
public struct RecordedRequest: Sendable {
    /// The method.
    public var method: HTTPRequest.Method
    /// The path as sent, still percent-encoded, such as `/users/a%2Fb`.
    public var path: String
    /// The query as sent, still percent-encoded, without `?`; empty when there is none.
    public var query: String
    /// The header fields.
    public var headerFields: HTTPFields
    /// The body.
    public var body: Data
    /// The values of the route's `:name` segments, percent-decoded.
    public var pathParameters: [String: String]

    /// Creates a record.
    package init(
        method: HTTPRequest.Method,
        path: String,
        query: String = "",
        headerFields: HTTPFields = [:],
        body: Data = Data(),
        pathParameters: [String: String] = [:]
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headerFields = headerFields
        self.body = body
        self.pathParameters = pathParameters
    }

    /// The query's name–value pairs, percent-decoded, in order.
    public var queryItems: [(name: String, value: String)] {
        guard !query.isEmpty else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return (name, value)
        }
    }

    /// The body as UTF-8 text.
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }

    /// The body decoded from JSON by a plain `JSONDecoder` (ISO 8601 dates).
    public func decodeBody<T: Decodable>(as type: T.Type = T.self) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: body)
    }
}
