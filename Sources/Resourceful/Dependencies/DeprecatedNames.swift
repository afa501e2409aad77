public import Logging

/// The former name of ``HasTransport``.
@available(*, deprecated, renamed: "HasTransport")
public typealias HasHTTPClient = HasTransport

extension HasTransport {
    /// The former name of ``HasTransport/transport``.
    @available(*, deprecated, renamed: "transport")
    public var httpClient: any HTTPTransport { transport }
}

extension APIDependencies {
    /// The former name of ``transport``.
    @available(*, deprecated, renamed: "transport")
    public var httpClient: any HTTPTransport {
        get { transport }
        set { transport = newValue }
    }

    /// The former form of ``init(apiConfig:authenticationStorage:transport:requestEncoder:responseDecoder:logger:)``.
    @available(*, deprecated, renamed: "init(apiConfig:authenticationStorage:transport:requestEncoder:responseDecoder:logger:)")
    public init(
        apiConfig: APIConfig,
        authenticationStorage: any AuthenticationStorage = InMemoryAuthenticationStorage(),
        httpClient: any HTTPTransport,
        requestEncoder: (any RequestEncoder)? = nil,
        responseDecoder: (any ResponseDecoder)? = nil,
        logger: Logger? = nil
    ) {
        self.init(
            apiConfig: apiConfig,
            authenticationStorage: authenticationStorage,
            transport: httpClient,
            requestEncoder: requestEncoder,
            responseDecoder: responseDecoder,
            logger: logger
        )
    }
}
