import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulKeyring
import Testing

/// Items written and read by `secret-tool` (libsecret-tools), the keyring tool people already use,
/// on the private keyring of `make test`.
@Suite struct SecretToolInteropTests {
    static let secretTool = "/usr/bin/secret-tool"

    private func secretTool(_ arguments: [String], input: String? = nil) async throws -> Command.Result {
        try await Command.run(Self.secretTool, arguments, input: input, keepSessionBus: true)
    }

    @Test func anItemStoredBySecretToolIsFoundAndAuthorizesACall() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        let stored = try await secretTool(["store", "--label=API token", "service", service, "account", "ada"], input: "from-secret-tool")
        #expect(stored.status == 0, "\(stored.output)")
        #expect(try await keyring.lookup(service: service, account: "ada") == "from-secret-tool")

        let storage = KeyringAuthenticationStorage(account: "ada", keyring: keyring)
        #expect(try await storage.authenticationHeader(for: service) == "Bearer from-secret-tool")
        #expect(try await keyring.delete(service: service, account: "ada"))
        let after = try await secretTool(["lookup", "service", service, "account", "ada"])
        #expect(after.output.isEmpty)
    }

    @Test func aTokenStoredWithEchoAndItsLineBreakMakesAValidHeader() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        let stored = try await secretTool(["store", "--label=API token", "service", service, "account", "ada"], input: "echoed-token\n")
        #expect(stored.status == 0)
        #expect(try await keyring.lookup(service: service, account: "ada") == "echoed-token\n")
        let storage = KeyringAuthenticationStorage(account: "ada", keyring: keyring)
        #expect(try await storage.authenticationHeader(for: service) == "Bearer echoed-token")
        try await keyring.delete(service: service, account: "ada")
    }

    @Test func storingOverAnotherToolsItemLeavesOneSecretThatSecretToolReads() async throws {
        let keyring = try PrivateSession.keyring()
        let service = PrivateSession.uniqueService()
        _ = try await secretTool(["store", "--label=old", "service", service, "account", "ada"], input: "old-value")
        try await keyring.store("new-value", service: service, account: "ada")
        for _ in 0..<5 {
            #expect(try await keyring.lookup(service: service, account: "ada") == "new-value")
        }
        let read = try await secretTool(["lookup", "service", service, "account", "ada"])
        #expect(read.status == 0)
        #expect(read.output == "new-value")
        let search = try await secretTool(["search", "--all", "service", service, "account", "ada"])
        #expect(search.output.components(separatedBy: "[/").count - 1 == 1, "\(search.output)")
        #expect(!search.output.contains("old-value"))
        try await keyring.delete(service: service, account: "ada")
    }
}
