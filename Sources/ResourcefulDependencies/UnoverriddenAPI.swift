import Foundation
import HTTPTypes
import IssueReporting
public import Resourceful

extension APIDependency {
    /// Where an ``APIDependency`` that no one overrode is used.
    enum Unoverridden: Sendable {
        /// In a test: every call fails, and an issue is reported.
        case test
        /// In a preview: every call is answered `501`.
        case preview
    }

    /// An ``API`` whose calls never leave the process: the value of ``Dependencies/DependencyValues/api``
    /// in tests and previews.
    static func unoverridden(
        _ context: Unoverridden, config: APIConfig = placeholderConfig, transport: any HTTPTransport = NoNetworkTransport()
    ) -> APIDependency {
        let dependencies = APIDependencies(apiConfig: config, transport: transport)
        return APIDependency(API(dependencies: dependencies, middlewares: [UnoverriddenAPIMiddleware(context: context)]))
    }
}

/// The error of a call made through ``Dependencies/DependencyValues/api`` in a test that did not
/// override it. Its description names the request and how to override the value.
public struct UnoverriddenAPIError: SecretFreeDescription, Sendable {
    /// The request's method.
    public let method: String
    /// The request's path template, such as `users/{}`: its parameters left out.
    public let pathTemplate: String

    /// What happened and what to do.
    public var description: String {
        "\(method) \(pathTemplate) was called through @Dependency(\\.api), which this test did not override: "
            + "nothing was sent. Override it, e.g. withDependencies { $0.api = APIDependency(transport: StubTransport { request in ... }) }"
    }
}

/// The only step of an unoverridden ``API``: fails the call (reporting an issue in a test) or
/// answers `501` (in a preview), before anything reaches a transport.
struct UnoverriddenAPIMiddleware: APIMiddleware {
    let context: APIDependency.Unoverridden

    func intercept(
        _ request: TransportRequest,
        context call: CallContext,
        next: (TransportRequest, CallContext) async throws -> TransportResponse
    ) async throws -> TransportResponse {
        let error = UnoverriddenAPIError(method: request.method.rawValue, pathTemplate: call.pathTemplate)
        switch context {
        case .test:
            reportIssue(error.description)
            throw APIError(kind: .middleware, detail: error.description, underlying: error)
        case .preview:
            let problem = #"{"title":"No preview answer","status":501,"detail":"\#(Self.escaped(error.method + " " + error.pathTemplate)) has no answer in previews: override @Dependency(\\.api)"}"#
            var fields = HTTPFields()
            fields[.contentType] = "application/problem+json"
            return TransportResponse(status: .notImplemented, headerFields: fields, body: TransportBody(problem))
        }
    }

    /// `text` as the inside of a JSON string.
    private static func escaped(_ text: String) -> String {
        let encoded = (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        return String(encoded.dropFirst().dropLast())
    }
}

/// A transport no request reaches (the only step before it never calls it): fails any that
/// does.
struct NoNetworkTransport: HTTPTransport {
    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        throw .invalidRequest("this API never sends")
    }
}
