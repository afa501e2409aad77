import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A credential its storage says has expired is renewed before the call is sent, once for any
/// number of calls, instead of waiting for a 401.
@Suite struct CredentialExpiryTests {
    /// Hands out an expired credential until it is refreshed, then a fresh one.
    final class ExpiringStorage: AuthenticationStorage, CredentialRefresher {
        let current = Locked(Credential(header: "Bearer expired-1", expiresAt: Date(timeIntervalSinceNow: -60)))
        let refreshes = Locked(0)

        func authenticationHeader(for service: String) async throws -> String? { current.withLock { $0.header } }
        func credential(for service: String) async throws -> Credential? { current.withLock { $0 } }
        func refreshCredential(for service: String) async throws -> String {
            refreshes.withLock { $0 += 1 }
            let fresh = Credential(header: "Bearer fresh-2", expiresAt: Date(timeIntervalSinceNow: 3600))
            current.withLock { $0 = fresh }
            return fresh.header
        }
    }

    @Test func anExpiredCredentialIsRenewedBeforeItIsSent() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/me", .json(raw: "{}"))
            let storage = ExpiringStorage()
            harness.dependencies.authenticationStorage = storage
            let api = API(dependencies: harness.dependencies)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "me")) } }
                try await group.waitForAll()
            }
            let sent = harness.server.requests.map { $0.headerFields[.authorization] ?? "" }
            #expect(sent.count == 8 && sent.allSatisfy { $0 == "Bearer fresh-2" })
            #expect(storage.refreshes.value == 1)
        }
    }
}
