import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import NIOCore
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2
import ResourcefulTesting
import Testing

/// Every secret an OAuth 2 exchange carries (client secret, assertion, device code, access and
/// refresh tokens) is absent from every log line, recording, cURL export and error description.
@Suite(.oauthServer, .serialized) struct SecretsNeverLeaveTests {
    /// Passes requests on, collecting the secrets of token requests and answers as they go by.
    final class SecretSpy: HTTPTransport {
        let transport: any HTTPTransport
        let found = Locked<Set<String>>([])
        init(_ transport: any HTTPTransport) { self.transport = transport }

        func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
            var request = request
            if let body = request.body, let bytes = try? await body.collect(upTo: 1 << 20) {
                for pair in String(buffer: bytes).split(separator: "&") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                    if parts.count == 2, ["client_secret", "client_assertion", "device_code", "refresh_token", "token", "code"].contains(parts[0]) {
                        found.withLock { _ = $0.insert(parts[1]) }
                    }
                }
                request.body = TransportBody(bytes)
            }
            if let basic = request.headerFields[.authorization], basic.hasPrefix("Basic "),
                let decoded = Data(base64Encoded: String(basic.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }),
                let colon = decoded.firstIndex(of: ":")
            {
                found.withLock { _ = $0.insert(String(decoded[decoded.index(after: colon)...])) }
            }
            let response = try await transport.send(request)
            let bytes: ByteBuffer
            do {
                bytes = try await response.body.collect(upTo: 1 << 20)
            } catch {
                throw TransportError.unclassified(error)
            }
            struct Tokens: Decodable { var access_token: String?; var refresh_token: String?; var device_code: String? }
            if let tokens = try? JSONDecoder().decode(Tokens.self, from: Data(String(buffer: bytes).utf8)) {
                found.withLock { $0.formUnion([tokens.access_token, tokens.refresh_token, tokens.device_code].compactMap { $0 }) }
            }
            return TransportResponse(status: response.status, headerFields: response.headerFields, body: bytes)
        }

        func shutdown() async throws {}
    }

    @Test func noSecretOfADeviceLoginOrAClientAssertionReachesLogsRecordingsOrExports() async throws {
        let server = try #require(OAuthServer.current)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("oauth-leak-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("calls.har")
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "oauth") { _ in logs }
        logger.logLevel = .trace
        var outputs: [String] = []

        try await AsyncHTTPClientTransport.withTransport { live in
            let spy = SecretSpy(live)
            var config = APIConfig(baseURL: URL(string: "\(server.issuer)/api")!, service: "django-api")
            config.timeout = .seconds(30)
            config.logging.level = .trace
            let recorder = try RecordingTransport(spy, file: har, masking: config.redaction)

            // A person logs in on a confidential device client that posts its secret.
            var device = OAuth2Settings(clientID: OAuthServer.tvClient.id, issuer: URL(string: server.issuer), clientAuthentication: .clientSecretPost, grant: .refreshToken)
            device.clientSecretStorage = "memory"
            let keyring = KeyringSecretStorage(account: "oauth-leak-\(UUID().uuidString)")
            let person = try await OAuth2AuthenticationStorage(
                settings: device, transport: recorder, clientSecret: InMemorySecrets(["tv-client-client-secret": OAuthServer.tvClient.secret]),
                refreshTokens: keyring, logger: logger
            )
            try await person.logIn(service: "django-api") { authorization in
                try? await server.approveDevice(userCode: authorization.userCode)
            }
            let personAPI = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: person, transport: recorder, logger: logger))
            _ = try await personAPI.call(AdHocRequest<Me, Empty>(.show, "me"))
            _ = try await person.refreshCredential(for: "django-api")
            _ = try await personAPI.call(AdHocRequest<Me, Empty>(.show, "me"))
            outputs.append(try await personAPI.curl(for: AdHocRequest<Me, Empty>(.show, "me")))
            try await person.logOut(service: "django-api")
            // A call after logout fails: its error is searched too.
            do { _ = try await personAPI.call(AdHocRequest<Me, Empty>(.show, "me")) } catch { outputs.append(String(describing: error)) }

            // A service signs its client assertions.
            var service = OAuth2Settings(clientID: OAuthServer.jwtClient, issuer: URL(string: server.issuer), clientAuthentication: .privateKeyJWT)
            service.privateKeyFile = server.privateKeyFile
            let signer = try await OAuth2AuthenticationStorage(settings: service, transport: recorder, logger: logger)
            let serviceAPI = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: signer, transport: recorder, logger: logger))
            _ = try await serviceAPI.call(AdHocRequest<Me, Empty>(.show, "me"))
            outputs.append(try await serviceAPI.curl(for: AdHocRequest<Me, Empty>(.show, "me")))

            let secrets = spy.found.withLock { $0 }.filter { $0.count >= 8 }
            // The client secret, an assertion, a device code, access and refresh tokens: seen going by.
            #expect(secrets.count >= 7)
            #expect(secrets.contains(OAuthServer.tvClient.secret))
            let text = logs.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
                + (try String(contentsOf: har, encoding: .utf8)) + outputs.joined(separator: "\n") + server.logText()
            let leaked = secrets.filter { text.contains($0) }.count
            #expect(leaked == 0, "a secret of the OAuth 2 exchanges was found in a log line, the recording, an export or an error")
            #expect(!logs.entries.isEmpty)
        }
    }
}
