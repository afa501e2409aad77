import Dependencies
import Foundation
import HTTPTypes
import Resourceful
import ResourcefulDependencies
import ResourcefulTesting
import Testing

@Suite
struct LiveAPIDependencyTests {
    /// A folder with `<environment>.json` naming `server`.
    static func configs(_ environment: String, server: MockServer) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("configs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/", "service": "users"}"#
        try Data(json.utf8).write(to: folder.appendingPathComponent("\(environment).json"))
        return folder
    }

    @Test("The live value loads the environment RESOURCEFUL_ENV names on first use, once for concurrent calls, and is shut down once")
    func theLiveValueIsMadeOnceAndEndedOnce() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/5", try .json(User(id: 5, name: "Edsger")))
            let folder = try Self.configs("staging", server: server)
            defer { try? FileManager.default.removeItem(at: folder) }
            let made = Locked(0)
            let live = APIDependency.live(environment: nil, configDirectory: folder.path, environmentVariables: [APIDependency.environmentVariable: "staging"])
            // Counted around the package's own making.
            let counted = APIDependency.live {
                made.withLock { $0 += 1 }
                return try await live()
            }
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await withDependencies { $0.api = counted } operation: { try await UserLookup().name(of: 5) } }
                }
                for try await name in group { #expect(name == "Edsger") }
            }
            #expect(made.withLock { $0 } == 1)
            #expect(server.requests.count == 16)
            try await counted.shutdown()
            try await counted.shutdown()
            // Ended: a call after it fails without reaching the server.
            await #expect(throws: APIError.self) { try await counted.call(ShowUser(id: 5)) }
            #expect(server.requests.count == 16)
        }
    }

    @Test("RESOURCEFUL_ENV names a file in the folder, never a path elsewhere", arguments: ["../staging", "/etc/passwd", ".hidden", "a/b", ""])
    func theEnvironmentIsAName(_ name: String) async throws {
        try await MockServer.withRunning { server in
            let folder = try Self.configs("staging", server: server)
            defer { try? FileManager.default.removeItem(at: folder) }
            // A file outside the folder that the name would reach as a path.
            let inner = folder.appendingPathComponent("inner")
            try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
            let api = APIDependency.live(configDirectory: inner.path, environmentVariables: [APIDependency.environmentVariable: name])
            let error = await #expect(throws: APIError.self) { try await api.call(ShowUser(id: 1)) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(server.requests.isEmpty)
        }
    }

    @Test("A configuration that cannot be loaded fails the call with its error, and is tried again by the next")
    func aFailedMakingIsTriedAgain() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/6", try .json(User(id: 6, name: "Barbara")))
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("configs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let api = APIDependency.live(environment: "development", configDirectory: folder.path, environmentVariables: [:])
            let error = await #expect(throws: APIError.self) { try await api.call(ShowUser(id: 6)) }
            #expect(error?.kind == .invalidConfiguration)
            // The file appears: the next call makes the API.
            let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/", "service": "users"}"#
            try Data(json.utf8).write(to: folder.appendingPathComponent("development.json"))
            #expect(try await api.call(ShowUser(id: 6)).name == "Barbara")
            try await api.shutdown()
        }
    }
}
