/// An error body in the form of RFC 9457 (`application/problem+json`), decoded into
/// ``APIError/errorResponse(as:)`` when the request names no `ErrorResponse` type of its own.
///
/// ```swift
/// catch let error as APIError {
///     if let problem = error.errorResponse(as: ProblemDetails.self) { logger.warning("\(problem.title ?? problem.type)") }
/// }
/// ```
public struct ProblemDetails: Decodable, Sendable, Equatable {
    /// A URI reference naming the problem type; `about:blank` when absent.
    public var type: String
    /// A short summary of the problem type.
    public var title: String?
    /// The status the server gave for this occurrence.
    public var status: Int?
    /// An explanation specific to this occurrence.
    public var detail: String?
    /// A URI reference naming this occurrence.
    public var instance: String?

    /// Creates problem details.
    public init(type: String = "about:blank", title: String? = nil, status: Int? = nil, detail: String? = nil, instance: String? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.instance = instance
    }

    private enum CodingKeys: String, CodingKey {
        case type, title, status, detail, instance
    }

    /// Decodes the standard members, ignoring extension members.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decodeIfPresent(String.self, forKey: .type) ?? "about:blank"
        title = try container.decodeIfPresent(String.self, forKey: .title)
        status = try container.decodeIfPresent(Int.self, forKey: .status)
        detail = try container.decodeIfPresent(String.self, forKey: .detail)
        instance = try container.decodeIfPresent(String.self, forKey: .instance)
    }
}
