import Resourceful
import ResourcefulTesting
import Testing

@Suite struct AuthenticationStorageConformanceTests {
    @Test func inMemoryStoragePasses() async throws {
        let storage = InMemoryAuthenticationStorage()
        try await AuthenticationStorageConformance(storage: storage) { header, service in
            storage.setAuthenticationHeader(header, for: service)
        }.run()
    }

    /// A storage that ignores writes must fail, naming the check and no credential.
    @Test func aBrokenStorageFails() async throws {
        struct Forgetful: AuthenticationStorage {
            func authenticationHeader(for service: String) async throws -> String? { nil }
        }
        let failure = await #expect(throws: AuthenticationStorageConformance<Forgetful>.Failure.self) {
            try await AuthenticationStorageConformance(storage: Forgetful()) { _, _ in }.run()
        }
        #expect(failure?.check == "storedHeaderIsReturnedExactly")
        #expect(failure?.description.contains("conformance-token") == false)
    }
}
