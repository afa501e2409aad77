public import Foundation

/// Decodes response bodies into a request's `ResourceType` or `ErrorResponse`.
///
/// `JSONDecoder` conforms; ``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``
/// injects one set up from ``APIConfig/coding``.
public protocol ResponseDecoder: Sendable {
    /// Decodes a value of `type` from `data`.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T
}

extension JSONDecoder: ResponseDecoder {}
