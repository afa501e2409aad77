public import HTTPTypes

/// Why a call failed.
///
/// Compare ``kind`` with the static members of ``Kind``; new kinds may be added without breaking
/// your code. The error carries the context of the call (method, path, status, the decoded error
/// body) and the underlying error, but its ``description`` holds no header value and no body text,
/// so it is safe to log.
public struct APIError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case invalidRequest, encodingFailed, authentication, transport, timeout, cancelled
            case responseTooLarge, unacceptableStatus, unauthorized, tooManyRedirects, decodingFailed
        }

        private let code: Code

        /// The request could not be built: an empty path segment, a header name or value that is
        /// not allowed (CR or LF in a value), parameters that do not fit the query or form form.
        public static let invalidRequest = Kind(code: .invalidRequest)
        /// The request's parameters could not be encoded as its body.
        public static let encodingFailed = Kind(code: .encodingFailed)
        /// The ``AuthenticationStorage`` threw; nothing was sent.
        public static let authentication = Kind(code: .authentication)
        /// The connection failed: refused, reset, closed early, TLS, DNS.
        public static let transport = Kind(code: .transport)
        /// The call's time limit passed.
        public static let timeout = Kind(code: .timeout)
        /// The calling task was cancelled.
        public static let cancelled = Kind(code: .cancelled)
        /// The response body was larger than ``APIConfig/maxResponseBytes``.
        public static let responseTooLarge = Kind(code: .responseTooLarge)
        /// The server answered with a status outside 200–299; see ``APIError/status`` and
        /// ``APIError/errorResponse``.
        public static let unacceptableStatus = Kind(code: .unacceptableStatus)
        /// The server answered `401 Unauthorized`: no credential, a wrong one, or (with a
        /// ``CredentialRefresher``) still after a refreshed one. ``APIError/status`` is 401.
        public static let unauthorized = Kind(code: .unauthorized)
        /// The call was redirected more times than ``APIConfig/HTTPSettings/maxRedirects``, or in
        /// a loop.
        public static let tooManyRedirects = Kind(code: .tooManyRedirects)
        /// A 2xx body could not be decoded as the request's `ResourceType`; see ``APIError/codingPath``.
        public static let decodingFailed = Kind(code: .decodingFailed)

        /// The kind's name.
        public var description: String { code.rawValue }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// The HTTP method of the call, once known.
    public internal(set) var method: HTTPRequest.Method?
    /// The request's path (percent-encoded, without the query), once known.
    public internal(set) var path: String?
    /// The response status, when a response arrived.
    public internal(set) var status: HTTPResponse.Status?
    /// The error body decoded as the request's `ErrorResponse`, when it names one and the body fit.
    public internal(set) var errorResponse: (any Sendable)?
    /// The coding path of a decoding or encoding failure, such as `users[3].email`.
    public internal(set) var codingPath: String?
    /// A short, value-free note on what was wrong, such as which header was refused.
    public internal(set) var detail: String?
    /// The error underneath, such as a `DecodingError` or a connection error. Its own description
    /// is not part of this error's and may hold more detail.
    public internal(set) var underlying: (any Error)?

    init(kind: Kind, status: HTTPResponse.Status? = nil, detail: String? = nil, underlying: (any Error)? = nil) {
        self.status = status
        self.kind = kind
        self.detail = detail
        self.underlying = underlying
    }

    /// The decoded error body as `type`, when it is one.
    public func errorResponse<T>(as type: T.Type) -> T? {
        errorResponse as? T
    }

    /// A one-line summary: kind, method, path, status, coding path and detail.
    public var description: String {
        var text = "APIError.\(kind)"
        if let method { text += " \(method.rawValue)" }
        if let path { text += " /\(path)" }
        if let status { text += " → \(status.code)" }
        if let codingPath { text += " at '\(codingPath)'" }
        if let detail { text += ": \(detail)" }
        return text
    }

    /// This error with the call's method and path filled in where they are missing.
    func with(method: HTTPRequest.Method, path: String) -> APIError {
        var copy = self
        if copy.method == nil { copy.method = method }
        if copy.path == nil { copy.path = path }
        return copy
    }
}

extension APIError {
    /// Wraps any error thrown by a transport or middleware, keeping ``APIError`` as it is.
    static func wrapping(_ error: any Error) -> APIError {
        switch error {
        case let error as APIError: error
        case is CancellationError: APIError(kind: .cancelled, underlying: error)
        default: APIError(kind: .transport, underlying: error)
        }
    }

    /// A dotted path for a `DecodingError`, such as `users[3].email`.
    static func codingPath(of error: DecodingError) -> String {
        let path: [any CodingKey]
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            path = context.codingPath
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
        @unknown default:
            path = []
        }
        return render(path)
    }

    static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    /// A value-free reason for a `DecodingError`.
    static func reason(of error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, _): "expected \(type)"
        case .valueNotFound(let type, _): "expected \(type), found null"
        case .keyNotFound: "missing key"
        case .dataCorrupted: "not valid for the expected type"
        @unknown default: "could not decode"
        }
    }
}
