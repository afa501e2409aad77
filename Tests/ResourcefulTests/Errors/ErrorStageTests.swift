import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// Every failure of a call is wrapped once, at the stage it happened in, and says which: against
/// a real server on 127.0.0.1 wherever the stage has one.
@Suite struct ErrorStageTests {
    struct User: Codable, Sendable { var id: Int }

    /// A storage that cannot be read.
    struct UnreadableStorage: AuthenticationStorage {
        struct Unreadable: Error {}
        func authenticationHeader(for service: String) async throws -> String? { throw Unreadable() }
    }

    /// A step that fails on its own, with an error that is not an `APIError`.
    struct Sign: APIMiddleware {
        struct KeyMissing: Error {}
        func intercept(
            _ request: TransportRequest, context: CallContext,
            next: (TransportRequest, CallContext) async throws -> TransportResponse
        ) async throws -> TransportResponse { throw KeyMissing() }
    }

    static func api(
        _ server: MockServer, _ transport: AsyncHTTPClientTransport, storage: any AuthenticationStorage = InMemoryAuthenticationStorage(),
        middlewares: [any APIMiddleware] = API.defaultMiddlewares
    ) -> API {
        let config = APIConfig(
            baseURL: server.baseURL.appendingPathComponent("v1"), service: "s", timeout: .seconds(30),
            retry: .init(maxAttempts: 2, baseDelay: .milliseconds(1), maxDelay: .milliseconds(2))
        )
        return API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: storage, transport: transport), middlewares: middlewares)
    }

    static func failure(_ call: () async throws -> Void) async -> APIError? {
        do {
            try await call()
            return nil
        } catch {
            return error as? APIError
        }
    }

    @Test func eachStageOfACallNamesItself() async throws {
        try await MockServer.withRunning { server in
            try await AsyncHTTPClientTransport.withTransport { transport in try await Self.eachStage(server, transport) }
        }
    }

    static func eachStage(_ server: MockServer, _ transport: AsyncHTTPClientTransport) async throws {
        do {
            server.stub(.get, "/v1/users/1", MockResponse.closeConnection, MockResponse.closeConnection)
            server.stub(.get, "/v1/users/2", MockResponse.status(.notFound))
            server.stub(.get, "/v1/users/3", MockResponse.json(raw: #"{"id": "three"}"#))
            server.stub(.get, "/v1/loop", MockResponse(status: .found, headerFields: [.location: "/v1/loop"]))
            let api = Self.api(server, transport)

            let refused = await Self.failure { _ = try await Self.api(server, transport, storage: UnreadableStorage()).call(AdHocRequest<User, Empty>(.show, "users/9")) }
            #expect(refused?.kind == .authentication && refused?.stage == .credentials)

            let invalid = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1", headers: ["X-Note": "a\r\nb"])) }
            #expect(invalid?.kind == .invalidRequest && invalid?.stage == .buildingRequest, "\(String(describing: invalid))")

            let closed = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1")) }
            #expect(closed?.kind == .transport && closed?.stage == .transport)

            let missing = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/2")) }
            #expect(missing?.kind == .unacceptableStatus && missing?.stage == .validatingResponse)

            let undecodable = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/3")) }
            #expect(undecodable?.kind == .decodingFailed && undecodable?.stage == .decodingBody)

            let looping = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "loop")) }
            #expect(looping?.kind == .tooManyRedirects)
            #expect(looping?.stage == .middleware("RedirectMiddleware"))
            #expect(looping?.stage?.middlewareName == "RedirectMiddleware")
            // A stage that wrapped it is the one reported, whatever the steps before did.
            #expect(closed?.method == .get && closed?.path == "users/1")
        }
    }

    @Test func aStreamedBodyOverTheLimitFailsWhileItIsReceived() async throws {
        // A transport that hands its body on as a stream: the API collects it, under the cap.
        let chunks = (0..<8).map { _ in ByteBuffer(repeating: UInt8(ascii: "a"), count: 1024) }
        let stub = StubTransport { _ in TransportResponse(status: .ok, body: TransportBody(stream: AsyncStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }, length: nil)) }
        var config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s")
        config.maxResponseBytes = 4096
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: stub))
        let error = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1")) }
        #expect(error?.kind == .responseTooLarge && error?.stage == .receivingBody)
    }

    @Test func aStepsOwnErrorIsWrappedOnceNamingTheStep() async throws {
        try await MockServer.withRunning { server in
            try await AsyncHTTPClientTransport.withTransport { transport in try await Self.stepsOwnError(server, transport) }
        }
    }

    static func stepsOwnError(_ server: MockServer, _ transport: AsyncHTTPClientTransport) async throws {
        do {
            let seen = Locked<[String]>([])
            let api = Self.api(server, transport, middlewares: [ErrorWitness(seen: seen)] + API.defaultMiddlewares + [ErrorWitness(seen: seen), Sign()])
            let error = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1")) }
            #expect(error?.kind == .middleware)
            #expect(error?.stage == .middleware("Sign"))
            #expect(error?.underlying is Sign.KeyMissing)
            #expect(error?.description.contains("Sign") == true)
            // Each step before it saw one `APIError`; the retry step did not try again.
            #expect(seen.value == ["middleware at middleware(Sign)", "middleware at middleware(Sign)"])
            #expect(server.requests.isEmpty)
        }
    }

    @Test func aTransportsOwnErrorIsATransportErrorOverIt() async throws {
        struct Broken: Error {}
        let stub = StubTransport { _ in throw Broken() }
        let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s")
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: stub))
        let error = await Self.failure { _ = try await api.call(AdHocRequest<User, Empty>(.show, "users/1")) }
        #expect(error?.kind == .transport && error?.stage == .transport)
        #expect(error?.underlying is Broken)
        #expect(stub.requests.count == 1)
    }
}
