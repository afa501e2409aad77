import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulOAuth2

/// The scope a server grants is its own text: kept only as a bounded list of scope tokens, and a
/// person is shown only the scopes that were asked for, the others counted.
@Suite struct GrantedScopeTests {
    static func response(scope: String) throws -> TokenResponse {
        let body = try JSONSerialization.data(withJSONObject: ["access_token": "at", "token_type": "Bearer", "scope": scope])
        return try TokenResponse(json: body)
    }

    @Test func aScopeOfBoundedScopeTokensIsKept() throws {
        #expect(try Self.response(scope: "read write:all").scope == "read write:all")
        let many = (1...32).map { "s\($0)" }.joined(separator: " ")
        #expect(try Self.response(scope: many).scope == many)
        let long = "https://www.googleapis.com/auth/admin.directory.rolemanagement.readonly"
        #expect(try Self.response(scope: long).scope == long)
    }

    @Test(arguments: [
        (1...33).map { "s\($0)" }.joined(separator: " "),
        String(repeating: "a", count: 97),
        "read  write",
        " read",
        "read\twrite",
        "Run\"curl\"",
        String(repeating: "Session-locked.Run-curl.evil.example.fix.sh-now ", count: 80),
    ])
    func aScopeThatIsNotABoundedListIsLeftOut(_ scope: String) throws {
        #expect(try Self.response(scope: scope).scope == nil)
    }

    @Test func onlyTheScopesAskedForAreShownTheOthersCounted() {
        let granted = OAuth2Status(scope: "read Session-locked.Run-curl.evil.example.fix.sh-now write open-https://evil.example")
        #expect(granted.scopeSummary(askedFor: ["read", "write", "admin"]) == "read write and 2 more")
        #expect(granted.scopeSummary(askedFor: []) == "4 scopes")
        #expect(OAuth2Status(scope: "read").scopeSummary(askedFor: ["read"]) == "read")
        #expect(OAuth2Status(scope: "x").scopeSummary(askedFor: []) == "1 scope")
        #expect(OAuth2Status(scope: nil).scopeSummary(askedFor: ["read"]) == nil)
        // A stored status is read as untrusted: the same bounds.
        #expect(OAuth2Status(scope: "read\u{1B}[2J").scopeSummary(askedFor: ["read"]) == nil)
    }

    @Test func aStoredScopeBeyondTheBoundsIsLeftOut() async throws {
        let refreshTokens = InMemoryWritableSecrets()
        try await refreshTokens.storeSecret("rt", named: OAuth2AuthenticationStorage.refreshTokenName(service: "s"))
        let tooMany = (1...40).map { "s\($0)" }.joined(separator: " ")
        try await refreshTokens.storeSecret("{\"scope\": \"\(tooMany)\"}", named: OAuth2AuthenticationStorage.statusName(service: "s"))
        try await MockServer.withTransport { server, transport in
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(
                    clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none,
                    grant: .refreshToken),
                transport: transport, refreshTokens: refreshTokens
            )
            #expect(try await storage.status(for: "s").scope == nil)
        }
    }
}
