import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

@testable import ResourcefulKeyring

@Suite struct KeyringAuthenticationStorageTests {
    @Test func headerIsSchemeAndSecret() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        try await keyring.store("abc123", service: service, account: "ada")
        let bearer = KeyringAuthenticationStorage(account: "ada", keyring: keyring)
        let token = KeyringAuthenticationStorage(account: "ada", scheme: "Token", keyring: keyring)
        #expect(try await bearer.authenticationHeader(for: service) == "Bearer abc123")
        #expect(try await token.authenticationHeader(for: service) == "Token abc123")
        #expect(try await bearer.authenticationHeader(for: PrivateSession.uniqueService()) == nil)
        try await keyring.delete(service: service, account: "ada")
    }

    @Test func secondCallDoesNoLookupAndInvalidateForcesOne() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        let storage = KeyringAuthenticationStorage(account: "ada", keyring: keyring)
        try await keyring.store("first", service: service, account: "ada")
        #expect(try await storage.authenticationHeader(for: service) == "Bearer first")
        try await keyring.store("second", service: service, account: "ada")
        #expect(try await storage.authenticationHeader(for: service) == "Bearer first")
        storage.invalidate(service: service)
        #expect(try await storage.authenticationHeader(for: service) == "Bearer second")
        try await keyring.delete(service: service, account: "ada")
        storage.invalidate()
        #expect(try await storage.authenticationHeader(for: service) == nil)
    }

    @Test func concurrentCallersShareOneLookup() async throws {
        let lookups = Atomic<Int>(0)
        let storage = KeyringAuthenticationStorage(account: "a", scheme: "Bearer", timeToLive: .seconds(60)) { _ in
            lookups.add(1, ordering: .relaxed)
            // A slow lookup, so that concurrent callers arrive while it runs (not a wait for readiness).
            try await Task.sleep(for: .milliseconds(50))
            return "shared"
        }
        let headers = try await withThrowingTaskGroup(of: String?.self) { group in
            for _ in 0..<100 { group.addTask { try await storage.authenticationHeader(for: "svc") } }
            var all: [String?] = []
            for try await header in group { all.append(header) }
            return all
        }
        #expect(headers.count == 100)
        #expect(headers.allSatisfy { $0 == "Bearer shared" })
        #expect(lookups.load(ordering: .relaxed) == 1)
        _ = try await storage.authenticationHeader(for: "other")
        #expect(lookups.load(ordering: .relaxed) == 2)
    }

    @Test func entriesExpireAfterTheirTimeToLive() async throws {
        let lookups = Atomic<Int>(0)
        let storage = KeyringAuthenticationStorage(account: "a", scheme: "Bearer", timeToLive: .milliseconds(20)) { _ in
            "v\(lookups.add(1, ordering: .relaxed).newValue)"
        }
        #expect(try await storage.authenticationHeader(for: "svc") == "Bearer v1")
        let deadline = ContinuousClock.now + .seconds(5)
        var header = try await storage.authenticationHeader(for: "svc")
        while header == "Bearer v1", ContinuousClock.now < deadline {
            await Task.yield()
            header = try await storage.authenticationHeader(for: "svc")
        }
        #expect(header == "Bearer v2")
    }

    @Test func failuresAreNotCached() async throws {
        let storage = KeyringAuthenticationStorage(account: "a", keyring: Keyring(environment: [:]))
        for _ in 0..<2 {
            let error = await #expect(throws: KeyringError.self) { _ = try await storage.authenticationHeader(for: "svc") }
            #expect(error?.kind == .noSessionBus)
        }
    }

    @Test func keyringStoragePassesTheConformanceSuite() async throws {
        let keyring = try PrivateSession.keyring()
        let storage = KeyringAuthenticationStorage(account: "conformance", keyring: keyring)
        let samples = ["Bearer conformance-token", "Bearer a.b-c_d~e+f/g=", "Bearer ünïcödé-🔑", "Bearer " + String(repeating: "x", count: 4096)]
        try await AuthenticationStorageConformance(storage: storage, sampleHeaders: samples) { header, service in
            if let header {
                try await keyring.store(String(header.dropFirst("Bearer ".count)), service: service, account: "conformance")
            } else {
                try await keyring.delete(service: service, account: "conformance")
            }
            storage.invalidate(service: service)
        }.run()
    }

    @Test func bothStoragesSendTheSameAuthorizationThroughTheAPI() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        try await keyring.store("same-token", service: service, account: "ada")
        let storages: [any AuthenticationStorage] = [
            InMemoryAuthenticationStorage([service: "Bearer same-token"]),
            KeyringAuthenticationStorage(account: "ada", keyring: keyring),
        ]
        try await MockServer.withRunning { server in
            server.stub(.get, "/me", .json(raw: #"{"id":1}"#))
            try await AsyncHTTPClientTransport.withTransport { transport in
                for storage in storages {
                    let deps = APIDependencies(apiConfig: APIConfig(baseURL: server.baseURL, service: service), authenticationStorage: storage, transport: transport)
                    _ = try await API(dependencies: deps).call(AdHocRequest<[String: Int], Empty>(.show, "me"))
                    _ = try await API(dependencies: deps).call(AdHocRequest<[String: Int], Empty>(.show, "me"))
                }
            }
            #expect(server.requests.map { $0.headerFields[.authorization] } == Array(repeating: "Bearer same-token", count: 4))
        }
        try await keyring.delete(service: service, account: "ada")
    }
}
