public import Logging

/// Has the configuration of the API it calls.
public protocol HasAPIConfig {
    /// The configuration.
    var apiConfig: APIConfig { get }
}

/// Has a place to get credentials from.
public protocol HasAuthenticationStorage {
    /// Where the `Authorization` header comes from.
    var authenticationStorage: any AuthenticationStorage { get }
}

/// Has the transport HTTP requests go through.
public protocol HasTransport {
    /// The transport.
    var transport: any HTTPTransport { get }
}

/// Has an encoder for request bodies and a decoder for responses.
public protocol HasCoders {
    /// Encodes JSON request bodies.
    var requestEncoder: any RequestEncoder { get }
    /// Decodes response bodies.
    var responseDecoder: any ResponseDecoder { get }
}

/// Has a logger to write through.
public protocol HasLogger {
    /// The logger; the library never configures the logging system itself.
    var logger: Logger { get }
}
