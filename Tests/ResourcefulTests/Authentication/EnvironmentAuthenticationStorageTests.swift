import Foundation
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct EnvironmentAuthenticationStorageTests {
    @Test func variableNamesFollowTheService() {
        #expect(EnvironmentAuthenticationStorage.variableName(prefix: "RESOURCEFUL_AUTH", service: "example-api", suffix: "TOKEN") == "RESOURCEFUL_AUTH_EXAMPLE_API_TOKEN")
        #expect(EnvironmentAuthenticationStorage.variableName(prefix: "P", service: "billing.v2/eu", suffix: "AUTHORIZATION") == "P_BILLING_V2_EU_AUTHORIZATION")
        #expect(EnvironmentAuthenticationStorage.variableName(prefix: "P", service: "ünï", suffix: "TOKEN") == "P__N__TOKEN")
    }

    @Test func aTokenGetsTheSchemeAndAWholeHeaderIsSentAsItIs() async throws {
        let token = EnvironmentAuthenticationStorage(scheme: "Token", environment: ["RESOURCEFUL_AUTH_BILLING_TOKEN": "t-123\n"])
        #expect(try await token.authenticationHeader(for: "billing") == "Token t-123")
        let whole = EnvironmentAuthenticationStorage(environment: [
            "RESOURCEFUL_AUTH_BILLING_AUTHORIZATION": "Basic dXNlcjpwYXNz",
            "RESOURCEFUL_AUTH_BILLING_TOKEN": "ignored-when-a-whole-header-is-set",
        ])
        #expect(try await whole.authenticationHeader(for: "billing") == "Basic dXNlcjpwYXNz")
    }

    @Test func unsetIsNoCredential() async throws {
        let storage = EnvironmentAuthenticationStorage(environment: ["RESOURCEFUL_AUTH_OTHER_TOKEN": "x"])
        #expect(try await storage.authenticationHeader(for: "billing") == nil)
    }

    @Test(arguments: ["", "\n", "\r\n"])
    func setButEmptyIsAnErrorNamingTheVariable(value: String) async throws {
        let storage = EnvironmentAuthenticationStorage(environment: ["RESOURCEFUL_AUTH_BILLING_TOKEN": value])
        let error = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "billing") }
        #expect(error?.kind == .empty)
        #expect(error?.description == "environment variable RESOURCEFUL_AUTH_BILLING_TOKEN: is set but empty")
    }

    @Test func aLineBreakInsideIsRefusedWithoutShowingTheValue() async throws {
        let storage = EnvironmentAuthenticationStorage(environment: ["RESOURCEFUL_AUTH_BILLING_AUTHORIZATION": "Bearer s3cr3t\r\nX-Injected: 1"])
        let error = await #expect(throws: AuthenticationStorageError.self) { _ = try await storage.authenticationHeader(for: "billing") }
        #expect(error?.kind == .invalidValue)
        #expect(!String(describing: error).contains("s3cr3t"))
    }

    @Test func passesTheConformanceSuite() async throws {
        let variables = Locked<[String: String]>([:])
        let storage = EnvironmentAuthenticationStorage { name in variables.withLock { $0[name] } }
        try await AuthenticationStorageConformance(storage: storage) { header, service in
            let name = EnvironmentAuthenticationStorage.variableName(prefix: storage.prefix, service: service, suffix: "AUTHORIZATION")
            variables.withLock { $0[name] = header }
        }.run()
    }
}
