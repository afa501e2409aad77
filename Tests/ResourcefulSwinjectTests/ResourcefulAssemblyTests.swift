import Foundation
import HTTPTypes
import Resourceful
import ResourcefulSwinject
import ResourcefulTesting
import Swinject
import Testing

struct User: Codable, Sendable {
    var name: String
}

/// `GET users/<id>`.
func showUser(_ id: Int) -> AdHocRequest<User, Empty> {
    AdHocRequest(.show, "users/\(id)")
}

/// A transport that counts its shutdowns, around a real one.
final class CountingTransport: HTTPTransport {
    let inner: any HTTPTransport
    let shutdowns = Locked(0)

    init(_ inner: any HTTPTransport) {
        self.inner = inner
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        try await inner.send(request)
    }

    func shutdown() async throws {
        shutdowns.withLock { $0 += 1 }
        try await inner.shutdown()
    }
}

@Suite
struct ResourcefulAssemblyTests {
    @Test("The assembly's API calls a real server through the container's parts, one API per container")
    func theAssembledAPICalls() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/users/1", try .json(User(name: "Ada")))
            let assembler = Assembler([ResourcefulAssembly(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "users"), transport: transport))])
            let api = try #require(assembler.resolver.resolve(API.self))
            #expect(try await api.call(showUser(1)).name == "Ada")
            #expect(server.requests.map(\.path) == ["/users/1"])
            // Container scope: the dependencies are read once, however often the API is resolved.
            let dependencies = Locked(0)
            let container = Container()
            container.register((any AuthenticationStorage).self) { _ in
                dependencies.withLock { $0 += 1 }
                return InMemoryAuthenticationStorage()
            }
            ResourcefulAssembly(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "users"), transport: transport)).assemble(container: container)
            _ = container.resolve(API.self)
            _ = container.resolve(API.self)
            #expect(dependencies.withLock { $0 } == 1)
        }
    }

    @Test("A part registered after the assembly replaces the given one; one registered before is kept")
    func partsAreOverridable() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/v2/users/2", try .json(User(name: "Grace")))
            let container = Container()
            // Before: the assembly leaves it alone.
            let before = APIConfig(baseURL: server.baseURL.appendingPathComponent("v2"), service: "users")
            container.register(APIConfig.self) { _ in before }
            ResourcefulAssembly(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: URL(string: "http://127.0.0.1:1/")!, service: "users"), transport: transport))
                .assemble(container: container)
            // After: the later registration wins.
            container.register((any AuthenticationStorage).self) { _ in InMemoryAuthenticationStorage(["users": "Bearer swinject-test"]) }
            let api = try #require(container.resolve(API.self))
            #expect(try await api.call(showUser(2)).name == "Grace")
            let sent = try #require(server.requests.first)
            #expect(sent.path == "/v2/users/2")
            #expect(sent.headerFields[.authorization] == "Bearer swinject-test")
        }
    }

    @Test("A configuration registered with another origin inherits neither the given credential nor the given client")
    func anotherOriginInheritsNoCredential() async throws {
        try await MockServer.withTransport { given, transport in
            try await MockServer.withRunning { other in
                other.stub(.get, "/users/5", try .json(User(name: "Mallory")))
                let dependencies = APIDependencies(
                    apiConfig: APIConfig(baseURL: given.baseURL, service: "users"),
                    authenticationStorage: InMemoryAuthenticationStorage(["users": "Bearer given-SECRET"]), transport: transport)
                let assembly = ResourcefulAssembly(dependencies: dependencies)
                let container = Container()
                assembly.assemble(container: container)
                container.register(APIConfig.self) { _ in APIConfig(baseURL: other.baseURL, service: "users") }
                let api = try #require(container.resolve(API.self))
                #expect(try await api.call(showUser(5)).name == "Mallory")
                #expect(other.requests.first?.headerFields[.authorization] == nil)
                #expect(given.requests.isEmpty)
                try await assembly.shutdown()
            }
        }
    }

    @Test("Shutting down waits for the shared state's writes in flight before it closes the clients it made")
    func shutdownDrainsBeforeItsClientsClose() async throws {
        try await MockServer.withTransport { given, transport in
            try await MockServer.withRunning { other in
                other.stub(.get, "/users/6", try .json(User(name: "Rhea")))
                // A renewal still out when the shutdown begins: it calls through the client the
                // assembly made for the other origin, and must be answered.
                let resolved = Locked<API?>(nil)
                let during = Locked<Result<String, any Error>?>(nil)
                let first = Locked(true)
                let state = SharedState(onDrain: {
                    // The first drain (the API's own shutdown drains again, after the clients).
                    let isFirst = first.withLock { value in
                        defer { value = false }
                        return value
                    }
                    guard isFirst, let api = resolved.withLock({ $0 }) else { return }
                    do {
                        let name = try await api.call(showUser(6)).name
                        during.withLock { $0 = .success(name) }
                    } catch {
                        during.withLock { $0 = .failure(error) }
                    }
                })
                var dependencies = APIDependencies(apiConfig: APIConfig(baseURL: given.baseURL, service: "users"), transport: transport)
                dependencies.sharedState = state
                let assembly = ResourcefulAssembly(dependencies: dependencies)
                let container = Container()
                assembly.assemble(container: container)
                container.register(APIConfig.self) { _ in APIConfig(baseURL: other.baseURL, service: "users") }
                let api = try #require(container.resolve(API.self))
                resolved.withLock { $0 = api }
                try await assembly.shutdown()
                let outcome = try #require(during.withLock { $0 })
                #expect(try outcome.get() == "Rhea")
            }
        }
    }

    @Test("The live assembly's client is shut down once, however often it is asked, and calls after it fail")
    func shutdownOnce() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/3", try .json(User(name: "Lin")))
            let live = AsyncHTTPClientTransport(settings: APIConfig.HTTPSettings())
            let counting = CountingTransport(live)
            let assembly = ResourcefulAssembly(dependencies: APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: "users"), transport: counting))
            let assembler = Assembler([assembly])
            let api = try #require(assembler.resolver.resolve(API.self))
            _ = try await api.call(showUser(3))
            try await assembly.shutdown()
            try await assembly.shutdown()
            #expect(counting.shutdowns.withLock { $0 } == 1)
            await #expect(throws: APIError.self) { try await api.call(showUser(3)) }
            #expect(server.requests.count == 1)
        }
    }
}
