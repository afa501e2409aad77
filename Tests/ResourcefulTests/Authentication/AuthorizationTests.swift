import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct AuthorizationTests {
    struct FailingStorage: AuthenticationStorage {
        struct Unreachable: Error {}
        func authenticationHeader(for service: String) async throws -> String? { throw Unreachable() }
    }

    @Test func authorizationComesFromTheStorageForTheConfiguredService() async throws {
        try await Harness.run(authorization: "Bearer abc") { harness in
            harness.server.stub(.get, "/v1/me", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(harness.server.requests.first?.headerFields[.authorization] == "Bearer abc")
        }
    }

    @Test func noAuthorizationWhenTheStorageHasNone() async throws {
        try await Harness.run(authorization: nil) { harness in
            harness.server.stub(.get, "/v1/me", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.headerFields[.authorization] == nil)
        }
    }

    @Test func swappingTheStorageInTheContainer() async throws {
        try await Harness.run(authorization: "Bearer first") { harness in
            harness.server.stub(.get, "/v1/me", .status(.noContent))
            harness.dependencies.authenticationStorage = InMemoryAuthenticationStorage([Harness.service: "Basic c3dhcA=="])
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(harness.server.requests.first?.headerFields[.authorization] == "Basic c3dhcA==")
        }
    }

    @Test func storageIsAskedForTheConfiguredServiceOnly() async throws {
        try await Harness.run(authorization: nil) { harness in
            harness.server.stub(.get, "/v1/me", .status(.noContent))
            harness.dependencies.authenticationStorage = InMemoryAuthenticationStorage(["other-service": "Bearer wrong"])
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            #expect(harness.server.requests.first?.headerFields[.authorization] == nil)
        }
    }

    @Test func storageErrorFailsBeforeAnythingIsSent() async throws {
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = FailingStorage()
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .authentication)
            #expect(error?.underlying is FailingStorage.Unreachable)
            // An app's own storage error may say anything: only its type travels.
            #expect(error?.detail == nil)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func storedValueWithNewlineIsRefused() async throws {
        try await Harness.run(authorization: "Bearer a\r\nX-Evil: 1") { harness in
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .invalidRequest)
            #expect(!(error.map { "\($0)" } ?? "").contains("Evil"))
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func inMemoryStorageSetsAndRemoves() async throws {
        let storage = InMemoryAuthenticationStorage()
        #expect(try await storage.authenticationHeader(for: "s") == nil)
        storage.setAuthenticationHeader("Bearer x", for: "s")
        #expect(try await storage.authenticationHeader(for: "s") == "Bearer x")
        storage.setAuthenticationHeader(nil, for: "s")
        #expect(try await storage.authenticationHeader(for: "s") == nil)
    }
}
