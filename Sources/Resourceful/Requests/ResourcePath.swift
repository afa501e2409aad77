/// The path of a resource, relative to the configured base URL.
///
/// Write it as a string literal; each interpolated value becomes exactly **one** path segment,
/// percent-encoded, so user input can never change which resource a request reaches:
///
/// ```swift
/// let path: ResourcePath = "users/\(id)/files/\(name)"
/// // name "../etc/passwd" → "users/42/files/..%2Fetc%2Fpasswd"
/// ```
///
/// Literal text is kept as written (characters that are not allowed in a path, such as a space,
/// `?` or `#`, are percent-encoded; `/` stays a separator). An interpolated value that is empty,
/// `.` or `..` makes the request fail with ``APIError/Kind/invalidRequest`` before anything is
/// sent: servers and URL parsers read `%2E%2E` as `..`, so `"users/\(id)"` with `id` `..` would
/// address the collection (or its parent) instead of one user.
public struct ResourcePath: Sendable, Hashable, CustomStringConvertible {
    /// The percent-encoded path, without a leading `/`.
    public let encoded: String
    /// The path with each interpolated value replaced by `{}`: a label of bounded cardinality for
    /// logs and metrics.
    package let template: String
    /// Whether an interpolated value was empty, `.` or `..`, which makes the path unusable.
    let hasUnusableSegment: Bool

    /// Creates a path from text that is already percent-encoded where needed.
    public init(encoded: String) {
        let trimmed = Self.trimmingLeadingSlashes(encoded)
        self.encoded = trimmed
        self.template = trimmed
        self.hasUnusableSegment = false
    }

    init(encoded: String, template: String, hasUnusableSegment: Bool) {
        self.encoded = Self.trimmingLeadingSlashes(encoded)
        self.template = Self.trimmingLeadingSlashes(template)
        self.hasUnusableSegment = hasUnusableSegment
    }

    /// The encoded path.
    public var description: String { encoded }

    private static func trimmingLeadingSlashes(_ path: String) -> String {
        guard path.hasPrefix("/") else { return path }
        return String(path.drop(while: { $0 == "/" }))
    }
}

extension ResourcePath: ExpressibleByStringLiteral {
    /// Creates a path from a literal, encoding characters that a path may not hold.
    public init(stringLiteral value: String) {
        let encoded = PercentEncoding.encode(value, allowing: .pathAllowed)
        self.init(encoded: encoded, template: encoded, hasUnusableSegment: false)
    }
}

extension ResourcePath: ExpressibleByStringInterpolation {
    /// Builds a path from literal text and interpolated values.
    public struct StringInterpolation: StringInterpolationProtocol {
        var encoded = ""
        var template = ""
        var hasUnusableSegment = false

        /// Reserves room for the path.
        public init(literalCapacity: Int, interpolationCount: Int) {
            encoded.reserveCapacity(literalCapacity + interpolationCount * 8)
        }

        /// Appends literal text, which keeps its `/` separators.
        public mutating func appendLiteral(_ literal: String) {
            let piece = PercentEncoding.encode(literal, allowing: .pathAllowed)
            encoded += piece
            template += piece
        }

        /// Appends a value (a string, a number, an identifier) as one percent-encoded path segment.
        public mutating func appendInterpolation(_ value: some CustomStringConvertible) {
            let text = value.description
            template += "{}"
            switch text {
            case "", ".", "..":
                hasUnusableSegment = true
            default:
                encoded += PercentEncoding.encode(text, allowing: .unreserved)
            }
        }
    }

    /// Creates a path from an interpolated literal.
    public init(stringInterpolation: StringInterpolation) {
        self.init(
            encoded: stringInterpolation.encoded,
            template: stringInterpolation.template,
            hasUnusableSegment: stringInterpolation.hasUnusableSegment
        )
    }
}
