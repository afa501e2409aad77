public import Foundation

/// Encodes a request's parameters as its JSON body.
///
/// `JSONEncoder` conforms; ``APIDependencies/live(environment:configDirectory:environmentVariables:authenticationStorage:storageFactories:sharedStateFactories:service:)``
/// injects one set up from ``APIConfig/coding``.
public protocol RequestEncoder: Sendable {
    /// Encodes `value`.
    func encode<T: Encodable>(_ value: T) throws -> Data
}

extension JSONEncoder: RequestEncoder {}
