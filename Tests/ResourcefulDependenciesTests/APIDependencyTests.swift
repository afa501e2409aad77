import Dependencies
import Foundation
import HTTPTypes
import Resourceful
@testable import ResourcefulDependencies
import ResourcefulTesting
import Testing

struct User: Codable, Equatable, Sendable {
    let id: Int
    var name: String
}

struct ShowUser: ResourceRequest {
    typealias ResourceType = User
    let verb = ResourceVerb.show
    let path: ResourcePath
    init(id: Int) { path = "users/\(id)" }
}

/// Code under test: takes its API from swift-dependencies.
struct UserLookup {
    @Dependency(\.api) var api

    func name(of id: Int) async throws -> String {
        try await api.call(ShowUser(id: id)).name
    }
}

@Suite
struct APIDependencyTests {
    @Test("A test that forgets to override the API fails with the request named, and nothing reaches the network")
    func anUnoverriddenAPIFailsLoudly() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/users/7", try .json(User(id: 7, name: "Ada")))
            // The test value, over a live transport to a server that counts its connections.
            let api = APIDependency.unoverridden(.test, config: APIConfig(baseURL: server.baseURL, service: "users"), transport: transport)
            var thrown: (any Error)?
            await withKnownIssue {
                do {
                    _ = try await withDependencies { $0.api = api } operation: { try await UserLookup().name(of: 7) }
                } catch {
                    thrown = error
                }
            } matching: { issue in
                issue.comments.contains { $0.rawValue.contains("GET users/{}") && $0.rawValue.contains("withDependencies") }
            }
            let error = try #require(thrown as? APIError)
            #expect(error.underlying is UnoverriddenAPIError)
            #expect(error.description.contains("GET users/{}"), "\(error)")
            #expect(error.description.contains("did not override"), "\(error)")
            #expect(server.connectionCount == 0)
            #expect(server.requests.isEmpty)
        }
    }

    @Test("The test value is the one swift-dependencies gives a test")
    func theTestValueIsUnoverridden() async throws {
        let api = DependencyValues._current.api
        await withKnownIssue {
            await #expect(throws: APIError.self) { try await api.call(ShowUser(id: 1)) }
        }
    }

    @Test("The preview value answers every call 501 with a problem naming the request")
    func thePreviewValueAnswers501() async throws {
        struct ShowUserOrProblem: ResourceRequest {
            typealias ResourceType = User
            typealias ErrorResponse = ProblemDetails
            let verb = ResourceVerb.show
            let path: ResourcePath
            init(id: Int) { path = "users/\(id)" }
        }
        let api = APIDependency.unoverridden(.preview)
        let error = await #expect(throws: APIError.self) { try await api.call(ShowUserOrProblem(id: 3)) }
        #expect(error?.status == .notImplemented)
        let problem = error?.errorResponse(as: ProblemDetails.self)
        #expect(problem?.detail?.contains("GET users/{}") == true, "\(String(describing: problem))")
    }

    @Test("An override with a MockServer's transport answers through the real server")
    func anOverrideWithAMockServer() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/users/7", try .json(User(id: 7, name: "Ada")))
            let name = try await withDependencies {
                $0.api = APIDependency(config: APIConfig(baseURL: server.baseURL, service: "users"), transport: transport)
            } operation: {
                try await UserLookup().name(of: 7)
            }
            #expect(name == "Ada")
            #expect(server.requests.map(\.path) == ["/users/7"])
        }
    }

    @Test("An override with a HAR cassette replays a recorded exchange without a server")
    func anOverrideWithACassette() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dependencies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("users.har")
        var config = APIConfig(baseURL: URL(string: "http://127.0.0.1:1/")!, service: "users")
        // Recorded against a real server...
        try await MockServer.withTransport { server, transport in
            server.stub(.get, "/users/9", try .json(User(id: 9, name: "Grace")))
            config = APIConfig(baseURL: server.baseURL, service: "users")
            let recorder = try RecordingTransport(transport, file: har, masking: config.redaction)
            _ = try await API(dependencies: APIDependencies(apiConfig: config, transport: recorder)).call(ShowUser(id: 9))
            try await recorder.shutdown()
        }
        // ...replayed once it is gone.
        let replayed = try ReplayingTransport(file: har)
        let recordedConfig = config
        let name = try await withDependencies {
            $0.api = APIDependency(config: recordedConfig, transport: replayed)
        } operation: {
            try await UserLookup().name(of: 9)
        }
        #expect(name == "Grace")
    }

    @Test("Overrides per request in concurrent tasks never see each other's API")
    func concurrentOverridesStayApart() async throws {
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for id in 0..<32 {
                group.addTask {
                    let api = APIDependency(transport: StubTransport { request in
                        // Each task's own stub answers with its own name, whatever was asked.
                        TransportResponse(status: .ok, headerFields: [.contentType: "application/json"], body: TransportBody(#"{"id": \#(id), "name": "user-\#(id)"}"#))
                    })
                    let name = try await withDependencies { $0.api = api } operation: {
                        await Task.yield()
                        return try await UserLookup().name(of: id)
                    }
                    return (id, name)
                }
            }
            for try await (id, name) in group {
                #expect(name == "user-\(id)")
            }
        }
    }
}
