import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A transport throws `TransportError`; the pipeline turns it into an `APIError` once, before any
/// middleware sees it, and every kind a transport may need is one it can make.
@Suite struct ErrorClassificationTests {
    static let cases: [(TransportError, APIError.Kind, String?)] = [
        (.invalidRequest("the URL has no host"), .invalidRequest, "the URL has no host"),
        (.invalidConfiguration("the proxy must be an http:// URL"), .invalidConfiguration, "the proxy must be an http:// URL"),
        (.undecodableBody(CocoaError(.coderReadCorrupt)), .decodingFailed, "the compressed body could not be decompressed"),
        (.proxyAuthenticationRequired(), .authentication, "the proxy asked for credentials (407): name them in http.proxyCredentialService"),
        (.responseTooLarge, .responseTooLarge, nil),
        (.cancelled, .cancelled, nil),
    ]

    @Test(arguments: 0..<cases.count)
    func anOutsideTransportMakesEveryKind(index: Int) async throws {
        let (thrown, kind, detail) = Self.cases[index]
        let seen = Locked<[String]>([])
        let stub = StubTransport { _ in throw thrown }
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s")
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: stub), middlewares: [ErrorWitness(seen: seen)] + API.defaultMiddlewares + [ErrorWitness(seen: seen)])
        let error = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(error?.kind == kind)
        #expect(error?.detail == detail)
        #expect(error?.path == "x")
        // Never tried again: none of these is a failed connection.
        #expect(stub.requests.count == 1)
        // Both the step next to the transport and the outermost one saw the one classified error.
        #expect(seen.value == ["\(kind) at transport", "\(kind) at transport"])
    }

    @Test func aMiddlewaresOwnErrorIsWrappedWhereItLeavesTheStepNamingIt() async throws {
        struct Refusal: Error {}
        struct Refuse: APIMiddleware {
            func intercept(
                _ request: TransportRequest, context: CallContext,
                next: (TransportRequest, CallContext) async throws -> TransportResponse
            ) async throws -> TransportResponse { throw Refusal() }
        }
        let seen = Locked<[String]>([])
        let stub = StubTransport { _ in TransportResponse(status: .noContent) }
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s")
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: stub), middlewares: API.defaultMiddlewares + [ErrorWitness(seen: seen), Refuse()])
        let error = await #expect(throws: APIError.self) { try await api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(error?.kind == .middleware)
        #expect(error?.stage == .middleware("Refuse"))
        #expect(error?.detail == "the middleware Refuse failed (Refusal)")
        #expect(error?.underlying is Refusal)
        // Wrapped where it left the step: the step before saw an `APIError` naming it, and the
        // retry step did not take it for a failed connection.
        #expect(seen.value == ["middleware at middleware(Refuse)"])
        #expect(stub.requests.isEmpty)
    }

    @Test func anOutsideTransportsReasonStaysOnOneLine() {
        let error = TransportError.invalidRequest("bad\r\nX-Injected: 1\u{0}\u{200B}\u{85}\u{2028}\u{9B}" + String(repeating: "e\u{301}", count: 2000))
        let description = APIError.classifying(error, deadline: .now + .seconds(60)).description
        #expect(!description.contains("\r") && !description.contains("\n") && !description.contains("\u{0}") && !description.contains("\u{200B}"))
        #expect(description.contains("badX-Injected: 1"))
        #expect(!description.contains("\u{85}") && !description.contains("\u{2028}") && !description.contains("\u{9B}"))
        #expect(description.unicodeScalars.count < 600)
    }
}
