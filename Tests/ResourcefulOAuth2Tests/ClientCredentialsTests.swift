import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// A service calling an API with client credentials, against django-oauth-toolkit: each client
/// authentication method, tokens reused until they are due, one token request for many calls.
@Suite(.oauthServer, .serialized) struct ClientCredentialsTests {
    enum Method: String, CaseIterable, CustomTestStringConvertible {
        case basic = "client_secret_basic", post = "client_secret_post", jwt = "private_key_jwt"
        var testDescription: String { rawValue }
    }

    func config(_ method: Method, server: OAuthServer) throws -> TestConfig {
        switch method {
        case .basic, .post:
            return try server.clientCredentialsConfig("""
                "clientId": "\(OAuthServer.serviceClient.id)", "clientAuthentication": "\(method.rawValue)",
                "clientSecret": {"storage": "file", "name": "service-client-secret"}
                """)
        case .jwt:
            return try server.clientCredentialsConfig("""
                "clientId": "\(OAuthServer.jwtClient)", "privateKeyFile": "\(server.privateKeyFile)", "keyId": "test-key"
                """)
        }
    }

    @Test(arguments: Method.allCases)
    func aServiceCallsAsItselfWithEachClientAuthentication(method: Method) async throws {
        let server = try #require(OAuthServer.current)
        let config = try config(method, server: server)
        defer { config.remove() }
        let before = server.tokenRequests().count
        let api = API(dependencies: try await config.dependencies())
        let first: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
        let second: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
        try await api.shutdown()
        let client = method == .jwt ? OAuthServer.jwtClient : OAuthServer.serviceClient.id
        #expect(first.client_id == client && second.client_id == client)
        #expect(first.user == nil)
        // One token for both calls, obtained by the method configured.
        let requests = server.tokenRequests().dropFirst(before)
        #expect(requests.count == 1)
        #expect(requests.first?.client_auth == method.rawValue)
        #expect(requests.first?.grant_type == "client_credentials")
        #expect(requests.first?.status == 200)
    }

    @Test func theCommandLineToolCallsAnOAuth2Service() async throws {
        let server = try #require(OAuthServer.current)
        let config = try config(.post, server: server)
        defer { config.remove() }
        let result = try await Command.run(resourcefulTool, ["show", "me", "--env", "x", "--config-directory", config.directory.path])
        #expect(result.status == 0)
        #expect(result.output.contains(OAuthServer.serviceClient.id))
    }

    /// A refused client is asked again only after `refusalBackoff`; the calls in between fail at once.
    @Test func aRefusedClientIsAskedAgainOnlyAfterTheConfiguredBackoff() async throws {
        let server = try #require(OAuthServer.current)
        let config = try server.clientCredentialsConfig("""
            "clientId": "\(OAuthServer.serviceClient.id)", "clientSecret": {"storage": "file", "name": "wrong-secret"}, "refusalBackoff": 1
            """)
        defer { config.remove() }
        try Data("not-the-secret-b4c\n".utf8).write(to: URL(fileURLWithPath: config.secrets).appendingPathComponent("wrong-secret"))
        let api = API(dependencies: try await config.dependencies())
        let before = server.tokenRequests().count
        let started = ContinuousClock.now
        let first = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
        #expect(first?.kind == .authentication)
        #expect(first?.description.contains("invalid_client") == true)
        #expect(server.tokenRequests().count == before + 1)

        // Sixteen calls at once within the back-off: each fails with the server's code, none asks.
        let descriptions = await withTaskGroup(of: String.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    do {
                        _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
                        return "succeeded"
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let inBackoff = descriptions.filter { $0.contains("invalid_client") && $0.contains("refusalBackoff") }.count
        #expect(inBackoff == 16 || ContinuousClock.now - started >= .seconds(1))
        #expect(server.tokenRequests().count == before + 1 || ContinuousClock.now - started >= .seconds(1))

        // Asked again once the back-off has passed, and not before.
        let deadline = ContinuousClock.now + .seconds(20)
        while server.tokenRequests().count == before + 1, ContinuousClock.now < deadline {
            _ = try? await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            if server.tokenRequests().count == before + 1 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(server.tokenRequests().count == before + 2)
        #expect(ContinuousClock.now - started >= .seconds(1))
        try await api.shutdown()
    }

    @Test func aWrongSecretIsAnAuthenticationErrorNamingTheServersCode() async throws {
        let server = try #require(OAuthServer.current)
        let config = try server.clientCredentialsConfig("""
            "clientId": "\(OAuthServer.serviceClient.id)", "clientSecret": {"storage": "file", "name": "wrong-secret"}
            """)
        defer { config.remove() }
        try Data("not-the-secret-6f1\n".utf8).write(to: URL(fileURLWithPath: config.secrets).appendingPathComponent("wrong-secret"))
        let api = API(dependencies: try await config.dependencies())
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me")) }
        try await api.shutdown()
        #expect(error?.kind == .authentication)
        #expect(error?.description.contains("invalid_client") == true)
        #expect(error?.description.contains("not-the-secret-6f1") == false)
    }

    @Test func aRevokedAccessTokenIsReplacedOnceOn401() async throws {
        let server = try #require(OAuthServer.current)
        let config = try config(.basic, server: server)
        defer { config.remove() }
        let dependencies = try await config.dependencies()
        let api = API(dependencies: dependencies)
        _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
        let credential = try #require(try await dependencies.authenticationStorage.credential(for: "django-api"))
        let before = server.tokenRequests().count
        // The server forgets the token before it expires.
        try await server.revoke(String(credential.header.dropFirst("Bearer ".count)))
        let me: Me = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
        try await api.shutdown()
        #expect(me.client_id == OAuthServer.serviceClient.id)
        #expect(server.tokenRequests().count == before + 1)
        let renewed = try await dependencies.authenticationStorage.credential(for: "django-api")
        let replaced = renewed?.header != credential.header
        #expect(replaced, "the revoked token was sent again")
    }
}

/// Many calls at once when the token has expired: exactly one token request.
@Suite struct TokenLifetimeTests {
    @Test func thirtyTwoCallsAfterExpiryCauseOneTokenRequest() async throws {
        // Tokens short-lived enough to wait for one to expire, and long-lived enough that the one
        // the 32 calls share is not expired again before a loaded server has answered them all.
        let lifetime = 6
        let server = try await OAuthServer.start(["--access-token-expires", "\(lifetime)"])
        do {
            let config = try server.clientCredentialsConfig("""
                "clientId": "\(OAuthServer.serviceClient.id)", "clientSecret": {"storage": "file", "name": "service-client-secret"}, "skew": 0
                """)
            defer { config.remove() }
            let dependencies = try await config.dependencies()
            let api = API(dependencies: dependencies)
            _ = try await api.call(AdHocRequest<Me, Empty>(.show, "me"))
            let credential = try #require(try await dependencies.authenticationStorage.credential(for: "django-api"))
            let expiry = try #require(credential.expiresAt)
            #expect(expiry > Date() && expiry < Date().addingTimeInterval(TimeInterval(lifetime + 1)))
            // Wait until the token has expired: its expiry is the condition, checked every 50 ms.
            while !credential.hasExpired() { try await Task.sleep(for: .milliseconds(50)) }
            let before = server.tokenRequests().count
            let clients = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<32 { group.addTask { try await api.call(AdHocRequest<Me, Empty>(.show, "me")).client_id } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            try await api.shutdown()
            #expect(clients.count == 32 && clients.allSatisfy { $0 == OAuthServer.serviceClient.id })
            #expect(server.tokenRequests().count == before + 1)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
