/// A request written at the call site, for one-off calls that do not deserve a type of their own.
///
/// ```swift
/// let users = try await api.call(AdHocRequest<[User], _>(.index, "users", parameters: ["page": 2]))
/// let _ = try await api.call(AdHocRequest<Empty, Empty>(.delete, "users/\(id)"))
/// ```
package struct AdHocRequest<ResourceType: Decodable & Sendable, Parameters: Encodable & Sendable>: ResourceRequest {
    /// What the request does.
    package var verb: ResourceVerb
    /// Where the resource is.
    package var path: ResourcePath
    /// The values to send.
    package var parameters: Parameters
    /// Extra header fields.
    package var headers: [String: String]
    /// `PUT` or `PATCH` for updates.
    package var updateMethod: UpdateMethod
    /// How a body is encoded.
    package var bodyEncoding: BodyEncoding
    /// This call's own time limit.
    package var timeout: Duration?
    /// Keep the request body out of logs.
    package var shouldRedactRequestBody: Bool
    /// Keep the response body out of logs.
    package var shouldRedactResponseBody: Bool
    /// Whether a redirect to another origin may re-send the body; `false` unless set.
    package var sendsBodyAcrossOrigins = false
    /// How arrays are written in the query string or form body; the configured format unless set.
    package var arrayFormat: ArrayFormat?
    /// Sets further options; none unless set.
    package var configureOptions: (@Sendable (inout RequestOptions) -> Void)?

    /// Applies ``configureOptions``.
    package func configure(_ options: inout RequestOptions) {
        configureOptions?(&options)
    }

    /// Creates a request.
    package init(
        _ verb: ResourceVerb,
        _ path: ResourcePath,
        parameters: Parameters,
        headers: [String: String] = [:],
        updateMethod: UpdateMethod = .put,
        bodyEncoding: BodyEncoding = .json,
        timeout: Duration? = nil,
        shouldRedactRequestBody: Bool = false,
        shouldRedactResponseBody: Bool = false
    ) {
        self.verb = verb
        self.path = path
        self.parameters = parameters
        self.headers = headers
        self.updateMethod = updateMethod
        self.bodyEncoding = bodyEncoding
        self.timeout = timeout
        self.shouldRedactRequestBody = shouldRedactRequestBody
        self.shouldRedactResponseBody = shouldRedactResponseBody
    }
}

extension AdHocRequest where Parameters == Empty {
    /// Creates a request without parameters.
    package init(_ verb: ResourceVerb, _ path: ResourcePath, headers: [String: String] = [:], timeout: Duration? = nil) {
        self.init(verb, path, parameters: Empty(), headers: headers, timeout: timeout)
    }
}
