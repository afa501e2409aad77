import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// What the package's own storages can do, a user's storage can do too: be asked within the
/// call's deadline, and give errors whose descriptions the call may show.
@Suite struct UserStorageProtocolsTests {
    /// A storage that keeps the deadline promise, and reports what it was given.
    struct PromptStorage: DeadlineHonouringStorage {
        let seen: Locked<ContinuousClock.Instant?>
        func authenticationHeader(for service: String) async throws -> String? {
            seen.withLock { $0 = lookupDeadline }
            return "Bearer prompt-8d1"
        }
    }

    struct VaultError: SecretFreeDescription {
        var description: String { "vault has no secret at kv/billing" }
    }

    struct OpaqueError: Error, CustomStringConvertible {
        var description: String { "opaque-secret-text-4be" }
    }

    struct FailingStorage: AuthenticationStorage {
        let error: any Error
        func authenticationHeader(for service: String) async throws -> String? { throw error }
    }

    @Test func aDeadlineHonouringStorageSeesTheCallsDeadline() async throws {
        try await Harness.run(configure: { $0.timeout = .seconds(40) }) { harness in
            harness.server.stub(.get, "/v1/me", .json(raw: "{}"))
            let seen = Locked<ContinuousClock.Instant?>(nil)
            harness.dependencies.authenticationStorage = PromptStorage(seen: seen)
            let before = ContinuousClock.now
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me"))
            let after = ContinuousClock.now
            let deadline = try #require(seen.value)
            #expect(deadline >= before + .seconds(40) && deadline <= after + .seconds(40))
            #expect(harness.server.requests.first?.headerFields[.authorization] == "Bearer prompt-8d1")
        }
        // Outside a call's lookup there is none.
        #expect(PromptStorage(seen: Locked(nil)).lookupDeadline == nil)
    }

    /// A storage that waits for its vault until the call's deadline, then gives up with its own error.
    struct GivingUpStorage: DeadlineHonouringStorage {
        func authenticationHeader(for service: String) async throws -> String? {
            let limit = lookupDeadline ?? .now
            try? await Task.sleep(until: limit, tolerance: .zero, clock: .continuous)
            throw VaultError()
        }
    }

    @Test func aStorageGivingUpAtTheCallsDeadlineTimesTheCallOut() async throws {
        try await Harness.run(configure: { $0.timeout = .milliseconds(300) }) { harness in
            harness.dependencies.authenticationStorage = GivingUpStorage()
            let error = await #expect(throws: APIError.self) { try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(error?.kind == .timeout)
            #expect(error?.stage == .credentials)
            #expect(error?.underlying is VaultError)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func aSecretFreeErrorIsShownAndAnyOtherIsNot() async throws {
        try await Harness.run { harness in
            harness.dependencies.authenticationStorage = FailingStorage(error: VaultError())
            let shown = await #expect(throws: APIError.self) { try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(shown?.kind == .authentication)
            #expect(shown?.detail == "vault has no secret at kv/billing")

            harness.dependencies.authenticationStorage = FailingStorage(error: OpaqueError())
            let hidden = await #expect(throws: APIError.self) { try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "me")) }
            #expect(hidden?.kind == .authentication)
            #expect(!String(describing: hidden).contains("opaque-secret-text-4be"))
            let detail = hidden?.detail ?? ""
            #expect(!detail.contains("opaque-secret-text-4be"))
            #expect(harness.server.requests.isEmpty)
        }
    }
}
