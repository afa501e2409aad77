import Dependencies
import Foundation
import HTTPTypes
import Resourceful
import ResourcefulDependencies
import ResourcefulTesting
import Testing

@Suite
struct LiveAPIDependencyTests {
    /// A folder with `<environment>.json` naming `server`, with `more` members; none when
    /// `environment` is `nil`.
    static func configs(_ environment: String?, server: MockServer, more: String = "") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("configs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard let environment else { return folder }
        let json = #"{"baseURL": "\#(server.baseURL.absoluteString)/", "service": "users"\#(more)}"#
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

    @Test("RESOURCEFUL_ENV names a file in the folder, never a path elsewhere", arguments: ["../staging", "/etc/passwd", ".hidden", "a/b"])
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

    @Test("A folder found by default configures calls but names no credential; a chosen one does")
    func anUnchosenFolderNamesNoCredential() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/8", try .json(User(id: 8, name: "Frances")))
            let folder = try Self.configs("development", server: server, more: #", "authentication": {"storages": ["environment"]}"#)
            defer { try? FileManager.default.removeItem(at: folder) }
            let secret = ["RESOURCEFUL_AUTH_USERS_AUTHORIZATION": "Bearer unchosen-SECRET"]
            // A relative RESOURCEFUL_CONFIG_DIR names whichever folder the program runs in.
            let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
            let relative = String(repeating: "../", count: depth) + folder.path.dropFirst()
            let unchosen = APIDependency.live(environmentVariables: secret.merging(["RESOURCEFUL_CONFIG_DIR": relative]) { a, _ in a })
            let error = await #expect(throws: APIError.self) { try await unchosen.call(ShowUser(id: 8)) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.description.contains("RESOURCEFUL_CONFIG_DIR") == true, "\(String(describing: error))")
            #expect(error?.description.contains("unchosen-SECRET") == false)
            #expect(server.requests.isEmpty)
            // Chosen: an absolute RESOURCEFUL_CONFIG_DIR.
            let chosen = APIDependency.live(environmentVariables: secret.merging(["RESOURCEFUL_CONFIG_DIR": folder.path]) { a, _ in a })
            #expect(try await chosen.call(ShowUser(id: 8)).name == "Frances")
            #expect(server.requests.first?.headerFields[.authorization] == "Bearer unchosen-SECRET")
            try await chosen.shutdown()
        }
    }

    @Test("A folder found by default may not name shared state, whose secrets go to the host it names")
    func anUnchosenFolderNamesNoSharedState() async throws {
        try await MockServer.withRunning { server in
            let folder = try Self.configs("development", server: server, more: #", "sharedState": {"kind": "postgres"}"#)
            defer { try? FileManager.default.removeItem(at: folder) }
            let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
            let relative = String(repeating: "../", count: depth) + folder.path.dropFirst()
            let api = APIDependency.live(environmentVariables: ["RESOURCEFUL_CONFIG_DIR": relative])
            let error = await #expect(throws: APIError.self) { try await api.call(ShowUser(id: 1)) }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.description.contains("sharedState") == true, "\(String(describing: error))")
            #expect(server.requests.isEmpty)
        }
    }

    @Test("A caller cancelled while the API is made stops waiting; the making goes on for the others; shutdown does not wait for it")
    func waitingIsCancellableAndShutdownDoesNotHang() async throws {
        let release = Locked(false)
        let transport = CountingTransport()
        let api = APIDependency.live {
            // Ignores cancellation, as a store that does not answer would.
            while !release.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
            return API(dependencies: APIDependencies(apiConfig: APIDependency.placeholderConfig, transport: transport))
        }
        let makings = Locked(0)
        let counted = APIDependency.live {
            makings.withLock { $0 += 1 }
            return try await api()
        }
        let first = Task { try await counted() }
        try await poll { makings.withLock { $0 } == 1 }
        first.cancel()
        await #expect(throws: CancellationError.self) { _ = try await first.value }
        // The making goes on: the next caller waits for it rather than starting another.
        let second = Task { try await counted() }
        #expect(!release.withLock { $0 })
        release.withLock { $0 = true }
        _ = try await second.value
        #expect(makings.withLock { $0 } == 1)
        // Made while another hangs: shutdown returns without waiting for the making.
        let hung = Locked(false)
        let making = Locked(false)
        let other = CountingTransport()
        let hanging = APIDependency.live {
            making.withLock { $0 = true }
            while !hung.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
            return API(dependencies: APIDependencies(apiConfig: APIDependency.placeholderConfig, transport: other))
        }
        let waiting = Task { try await hanging() }
        try await poll { making.withLock { $0 } }
        try await hanging.shutdown()
        #expect(!hung.withLock { $0 })
        hung.withLock { $0 = true }
        await #expect(throws: APIError.self) { _ = try await waiting.value }
        // The API made after the shutdown is ended once it is ready.
        try await poll { other.shutdowns.withLock { $0 } == 1 }
        try await api.shutdown()
    }

    @Test("Shutdowns at once all wait for the one shutdown")
    func concurrentShutdownsWait() async throws {
        let transport = CountingTransport(delay: .milliseconds(100))
        let api = APIDependency.live { API(dependencies: APIDependencies(apiConfig: APIDependency.placeholderConfig, transport: transport)) }
        _ = try await api()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await api.shutdown()
                    // Returned only once the client is closed.
                    #expect(transport.finished.withLock { $0 })
                }
            }
            try await group.waitForAll()
        }
        #expect(transport.shutdowns.withLock { $0 } == 1)
    }

    @Test("A configuration that cannot be loaded fails the call with its error, and is tried again by the next")
    func aFailedMakingIsTriedAgain() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/users/6", try .json(User(id: 6, name: "Barbara")))
            let folder = try Self.configs(nil, server: server)
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

/// Waits until `condition` holds, checking every 10 ms, for at most a minute.
func poll(_ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(60)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(10))
    }
}
