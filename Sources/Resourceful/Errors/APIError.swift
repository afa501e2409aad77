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
            case invalidRequest, invalidConfiguration, encodingFailed, authentication, transport, tls, timeout, cancelled
            case responseTooLarge, unacceptableStatus, unauthorized, tooManyRedirects, redirectRefused, tooManyPages
            case unsupportedContentEncoding, decodingFailed, file, middleware, rateLimited, circuitOpen, sharedStateUnavailable
        }

        private let code: Code

        /// The request could not be built: an empty path segment, a header name or value that is
        /// not allowed (CR or LF in a value), parameters that do not fit the query or form form.
        public static let invalidRequest = Kind(code: .invalidRequest)
        /// The configuration the ``API`` was built with is not usable, such as a negative
        /// ``APIConfig/maxResponseBytes`` or a base URL with a query, or could not be loaded: the
        /// detail names the file or environment variable and the key. ``APIConfig/load(file:environmentVariables:)``
        /// and ``APIConfig/init(configReader:)`` throw it; a configuration built in code fails its
        /// first call with it.
        public static let invalidConfiguration = Kind(code: .invalidConfiguration)
        /// The request's parameters could not be encoded as its body.
        public static let encodingFailed = Kind(code: .encodingFailed)
        /// The ``AuthenticationStorage`` threw; nothing was sent. For the package's own storages
        /// the detail names the file, variable or keyring problem (never the credential).
        public static let authentication = Kind(code: .authentication)
        /// The connection failed: refused, reset, closed early, DNS. Tried again by the retry step
        /// of ``API/defaultMiddlewares``.
        public static let transport = Kind(code: .transport)
        /// The TLS handshake failed: the server's certificate was not trusted, had expired or did
        /// not name the host, or no protocol version or cipher was shared. Trying again cannot
        /// help, so it is never retried.
        public static let tls = Kind(code: .tls)
        /// The call's time limit passed.
        public static let timeout = Kind(code: .timeout)
        /// The calling task was cancelled.
        public static let cancelled = Kind(code: .cancelled)
        /// The response body was larger than ``APIConfig/maxResponseBytes``.
        public static let responseTooLarge = Kind(code: .responseTooLarge)
        /// The server answered with a status outside 200–299; see ``APIError/status`` and
        /// ``APIError/errorResponse(as:)``.
        public static let unacceptableStatus = Kind(code: .unacceptableStatus)
        /// The server answered `401 Unauthorized`: no credential, a wrong one, or (with a
        /// ``CredentialRefresher``) still after a refreshed one. ``APIError/status`` is 401.
        public static let unauthorized = Kind(code: .unauthorized)
        /// The call was redirected more times than ``APIConfig/HTTPSettings/maxRedirects``, or in
        /// a loop.
        public static let tooManyRedirects = Kind(code: .tooManyRedirects)
        /// A redirect was refused: from `https` to `http`, to a scheme other than `http(s)`, or a
        /// `307`/`308` that would re-send the body to another origin (see
        /// ``RequestOptions/sendsBodyAcrossOrigins``). ``APIError/detail`` names the target's
        /// origin; never retried.
        public static let redirectRefused = Kind(code: .redirectRefused)
        /// ``API/pages(_:pagination:maxPages:)`` reached its page limit while the server still
        /// named a next page.
        public static let tooManyPages = Kind(code: .tooManyPages)
        /// The response body has a `Content-Encoding` the transport cannot decode (such as `br`),
        /// so it cannot be read.
        public static let unsupportedContentEncoding = Kind(code: .unsupportedContentEncoding)
        /// A 2xx body could not be decoded as the request's `ResourceType`; see ``APIError/codingPath``.
        public static let decodingFailed = Kind(code: .decodingFailed)

        /// A file the call reads or writes could not be: an upload's file that cannot be opened,
        /// a download's folder that cannot be written, a full disk. ``APIError/detail`` names the
        /// file and the reason; nothing is left at a download's destination.
        public static let file = Kind(code: .file)

        /// A middleware failed with an error of its own, not an ``APIError``: ``APIError/stage``
        /// names it (``Stage/middleware(_:)``) and ``APIError/underlying`` is its error. Never
        /// retried: the step would fail again.
        public static let middleware = Kind(code: .middleware)

        /// The upstream takes no request before the call's deadline: its rate budget
        /// (``RateBudget``, configured or learned from its `RateLimit-Policy`) or a pause it asked
        /// for (`Retry-After`, a spent limit) would have made the call wait past it.
        /// ``APIError/detail`` names the upstream and how long the wait would have been. Nothing
        /// was sent; never retried.
        public static let rateLimited = Kind(code: .rateLimited)

        /// The upstream's circuit breaker is open (``CircuitBreakerMiddleware``): too many calls
        /// to it failed of late, so this one failed at once, without a connection.
        /// ``APIError/detail`` names the upstream and when probes go again. Never retried.
        public static let circuitOpen = Kind(code: .circuitOpen)

        /// The state an upstream's limits are kept in (a fleet's, in a database) could not be
        /// used, and it is set to fail calls rather than keep the limits in this process alone
        /// (``RateLimitReservation/unavailable(reason:)``). ``APIError/detail`` names the upstream
        /// and what failed, never a value. Nothing was sent; never retried.
        public static let sharedStateUnavailable = Kind(code: .sharedStateUnavailable)

        /// The kind's name.
        public var description: String { code.rawValue }
    }

    /// Where in a call a failure happened: the stage that first turned it into an ``APIError``.
    ///
    /// A call looks up its credential, builds its request, runs it through the middlewares to the
    /// transport, collects the response body, validates the status and decodes the body; each
    /// failure is wrapped once, at the stage it happened in. Compare with the static members;
    /// stages may be added without breaking your code.
    public struct Stage: Sendable, Hashable, CustomStringConvertible {
        private enum Code: Sendable, Hashable {
            case credentials, buildingRequest, middleware(String), transport, receivingBody, validatingResponse, decodingBody
        }

        private let code: Code

        /// Looking up the credential in the ``AuthenticationStorage``.
        public static let credentials = Stage(code: .credentials)
        /// Building the request: URL, query or body, header fields.
        public static let buildingRequest = Stage(code: .buildingRequest)
        /// A middleware, named by its type: an error it threw of its own, or an ``APIError`` it
        /// made itself (``RedirectMiddleware``'s ``Kind/tooManyRedirects``, say).
        public static func middleware(_ name: String) -> Stage { Stage(code: .middleware(name)) }
        /// The ``HTTPTransport``: connecting, sending, the response head (and a collected body).
        public static let transport = Stage(code: .transport)
        /// Collecting a response body that arrived as a stream.
        public static let receivingBody = Stage(code: .receivingBody)
        /// Checking the response's status (``Kind/unacceptableStatus``, ``Kind/unauthorized``).
        public static let validatingResponse = Stage(code: .validatingResponse)
        /// Decoding a 2xx body as the request's result type.
        public static let decodingBody = Stage(code: .decodingBody)

        /// The middleware's type name, for ``middleware(_:)``; `nil` for any other stage.
        public var middlewareName: String? {
            if case .middleware(let name) = code { return name }
            return nil
        }

        /// The stage's name, such as `transport` or `middleware(RedirectMiddleware)`.
        public var description: String {
            switch code {
            case .credentials: "credentials"
            case .buildingRequest: "buildingRequest"
            case .middleware(let name): "middleware(\(name))"
            case .transport: "transport"
            case .receivingBody: "receivingBody"
            case .validatingResponse: "validatingResponse"
            case .decodingBody: "decodingBody"
            }
        }
    }

    /// What kind of failure this is.
    public let kind: Kind
    /// Where in the call it happened, once a stage of a call wrapped it; `nil` for an error made
    /// outside a call (loading a configuration, say).
    public internal(set) var stage: Stage?
    /// The HTTP method of the call, once known.
    public internal(set) var method: HTTPRequest.Method?
    /// The request's path (percent-encoded, without the query), once known.
    public internal(set) var path: String?
    /// The response status, when a response arrived.
    public internal(set) var status: HTTPResponse.Status?
    /// The error body decoded as the request's `ErrorResponse`, when it names one and the body fit.
    package internal(set) var errorResponse: (any Sendable)?
    /// The coding path of a decoding or encoding failure, such as `users[3].email`. It holds only
    /// the names the Swift types declare and array positions: a key taken from the body (a
    /// dictionary's key) is written `*`, so that no response text reaches a log line.
    public internal(set) var codingPath: String?
    /// A short, value-free note on what was wrong, such as which header was refused.
    public internal(set) var detail: String?
    /// The error underneath, such as a `DecodingError` or a connection error. Its own description
    /// is not part of this error's and may hold more detail.
    public internal(set) var underlying: (any Error)?
    /// Whether the connection closed before any of the answer arrived (a pooled keep-alive
    /// connection the server had already closed, say): the request can be sent again at once.
    var closedBeforeAnswer = false
    /// Whether another attempt may succeed: a connection failure a transport reported as a
    /// ``TransportError``. Any other error a transport throws (a replay with no recorded exchange,
    /// a transport's own bug) and connections refused until the connect-retry budget was spent
    /// are reported as ``Kind/transport`` but not tried again.
    var mayRetry = false

    package init(kind: Kind, status: HTTPResponse.Status? = nil, detail: String? = nil, underlying: (any Error)? = nil) {
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

    /// This error as the failure of `stage`, unless an earlier stage already claimed it.
    func at(_ stage: Stage) -> APIError {
        guard self.stage == nil else { return self }
        var copy = self
        copy.stage = stage
        return copy
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
    /// The one error for a wait that its deadline ended: `detail` says what was waited for.
    static func timedOut(_ detail: String? = nil, status: HTTPResponse.Status? = nil, underlying: (any Error)? = nil) -> APIError {
        APIError(kind: .timeout, status: status, detail: detail, underlying: underlying)
    }

    /// The one error for a wait that its task's cancellation ended: `detail` says what was waited for.
    static func cancelled(_ detail: String? = nil, underlying: (any Error)? = nil) -> APIError {
        APIError(kind: .cancelled, detail: detail, underlying: underlying)
    }

    /// The one classification of an error thrown below the ``API``: an ``APIError`` as it is, a
    /// ``TransportError`` as the kind it names, a cancellation as ``Kind/cancelled``, anything else
    /// as ``Kind/transport`` that is not tried again (only a ``TransportError`` says that another
    /// attempt may help); and a connection failure after `deadline` as ``Kind/timeout`` (the
    /// deadline is what ended the call, whatever was in flight when it passed).
    ///
    /// The pipeline applies it once, where the transport's errors enter the middlewares and where
    /// the middlewares' errors leave them: every middleware sees an ``APIError`` from `next`.
    package static func classifying(_ error: any Error, deadline: ContinuousClock.Instant) -> APIError {
        var failure: APIError =
            switch error {
            case let error as APIError: error
            case let error as TransportError: error.apiError
            case is CancellationError: .cancelled(underlying: error)
            default: APIError(kind: .transport, underlying: error)
            }
        if failure.kind == .transport, ContinuousClock.now >= deadline {
            failure = .timedOut("the call's deadline passed", status: failure.status, underlying: failure.underlying)
        }
        return failure
    }

    /// What the steps before `name`, a middleware, see of an error it threw: an ``APIError`` as it
    /// is (one the step made itself gets ``Stage/middleware(_:)``), a cancellation as
    /// ``Kind/cancelled``, any other error as ``Kind/middleware``, naming the step (never the
    /// error's text, which may hold what the step was given).
    package static func thrown(_ error: any Error, byMiddleware name: String) -> APIError {
        let stage = Stage.middleware(name)
        switch error {
        case let error as APIError: return error.at(stage)
        case is CancellationError: return APIError.cancelled(underlying: error).at(stage)
        default:
            return APIError(kind: .middleware, detail: "the middleware \(name) failed (\(type(of: error)))", underlying: error).at(stage)
        }
    }

    /// How a log line or metric names an error from `next`: an ``APIError``'s kind, or the type
    /// of one a middleware threw of its own; never its text.
    static func kindName(of error: any Error) -> String {
        (error as? APIError)?.kind.description ?? String(describing: type(of: error))
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

    /// A dotted path such as `users[3].email`, holding no text from a body: only the names a
    /// Swift type declares (cases of a `CodingKey` enum) and array positions are written; any other
    /// key, such as a dictionary key read from the body, is written `*`.
    static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            let name: String
            if isDictionaryKey(key) {
                name = "*"
            } else if let index = key.intValue {
                text += "[\(index)]"
                continue
            } else {
                name = isDeclaredName(key) ? key.stringValue : "*"
            }
            text += text.isEmpty ? name : ".\(name)"
        }
        return text
    }

    /// Whether `key` is a dictionary's key (the standard library's `Dictionary` decodes its keys
    /// with `_DictionaryCodingKey`), which comes from the body.
    private static func isDictionaryKey(_ key: any CodingKey) -> Bool {
        String(describing: type(of: key)) == "_DictionaryCodingKey"
    }

    /// Whether `key` is a case without payload of an enum: a name written in a Swift type (the
    /// synthesized `CodingKeys`), not text a decoder found in a document.
    private static func isDeclaredName(_ key: any CodingKey) -> Bool {
        let mirror = Mirror(reflecting: key)
        return mirror.displayStyle == .enum && mirror.children.isEmpty
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
