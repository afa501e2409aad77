import Resourceful
import ResourcefulKeyring

/// Where the demo keeps its token: the keyring when one is reachable, else memory.
struct DemoCredentials {
    static let account = "resourceful-demo"

    let storage: any AuthenticationStorage
    let remove: @Sendable () async throws -> Void

    /// Stores `token` in the keyring and reads it back through `KeyringAuthenticationStorage`;
    /// with no usable keyring, says so in one line and keeps the token in memory.
    static func make(token: String, service: String) async -> DemoCredentials {
        let keyring = Keyring()
        do {
            try await keyring.store(token, service: service, account: account, label: "Resourceful demo token")
            print("Stored a demo token in the keyring; calls read it through KeyringAuthenticationStorage.")
            return DemoCredentials(storage: KeyringAuthenticationStorage(account: account, keyring: keyring)) {
                try await keyring.delete(service: service, account: account)
            }
        } catch {
            print("No usable keyring: \(error.hint). Using in-memory credentials instead.")
            return DemoCredentials(storage: InMemoryAuthenticationStorage([service: "Bearer \(token)"])) {}
        }
    }
}
