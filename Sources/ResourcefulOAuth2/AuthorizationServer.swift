import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOFoundationCompat
import Resourceful

/// Talks to one authorization server for one client: client authentication, form posts, the
/// answers' limits and checks, metadata discovery. Every request and answer is marked for
/// redaction, so no log line, recording or cURL export holds its body.
struct AuthorizationServer: Sendable {
    /// The largest answer read.
    static let maximumResponseBytes = 64 * 1024

    let settings: OAuth2Settings
    let transport: any HTTPTransport
    /// Reads the client secret when the client authentication needs one.
    let clientSecret: ClientSecret?
    /// The private key that signs client assertions, for `private_key_jwt`.
    let assertionKey: ClientAssertionKey?
    let logger: Logger
    /// The token endpoint the metadata named, once discovered: the audience of every client
    /// assertion, whichever endpoint receives it.
    private let discoveredTokenEndpoint = Locked<URL?>(nil)

    init(settings: OAuth2Settings, transport: any HTTPTransport, clientSecret: ClientSecret?, assertionKey: ClientAssertionKey?, logger: Logger) {
        self.settings = settings
        self.transport = transport
        self.clientSecret = clientSecret
        self.assertionKey = assertionKey
        self.logger = logger
    }

    /// A form posted to `endpoint`, authenticated as the client; the answer's status and body.
    func post(
        _ fields: [(String, String)],
        to endpoint: URL,
        deadline: ContinuousClock.Instant,
        what: String
    ) async throws(OAuth2Error) -> (status: HTTPResponse.Status, body: Data, secrets: [String]) {
        guard OAuth2Endpoints.isAllowed(endpoint) else {
            throw OAuth2Error(.configuration, "the \(what) endpoint is not https (http only on a loopback IP address such as 127.0.0.1)")
        }
        var fields = fields
        let secretFields: Set<String> = ["refresh_token", "device_code", "code", "code_verifier", "token"]
        var secrets: [String] = []
        for (name, value) in fields where secretFields.contains(name) { secrets.append(value) }
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded", .accept: "application/json"]
        switch settings.clientAuthentication {
        case .clientSecretBasic:
            let secret = try await requireSecret()
            secrets.append(secret)
            let pair = FormBody.escape(settings.clientID) + ":" + FormBody.escape(secret)
            let encoded = Data(pair.utf8).base64EncodedString()
            secrets.append(encoded)
            headers[.authorization] = "Basic " + encoded
        case .clientSecretPost:
            let secret = try await requireSecret()
            secrets.append(secret)
            fields += [("client_id", settings.clientID), ("client_secret", secret)]
        case .privateKeyJWT:
            guard let assertionKey else { throw OAuth2Error(.configuration, "private_key_jwt needs a private key") }
            let assertion = try await assertionKey.signer().assertion(audience: tokenAudience(endpoint))
            secrets.append(assertion)
            fields += [
                ("client_id", settings.clientID),
                ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                ("client_assertion", assertion),
            ]
        case .none:
            fields.append(("client_id", settings.clientID))
        }
        var request = TransportRequest(
            method: .post,
            url: endpoint.absoluteString,
            headerFields: headers,
            body: ByteBuffer(string: FormBody.encode(fields)),
            deadline: deadline,
            maxResponseBytes: Self.maximumResponseBytes
        )
        request.shouldRedactRequestBody = true
        request.shouldRedactResponseBody = true
        let (status, body) = try await send(request, what: what)
        logger.debug("OAuth 2 request answered", metadata: ["oauth2.endpoint": .string(what), "http.response.status_code": .stringConvertible(status.code)])
        return (status, body, secrets)
    }

    /// The audience of an assertion: the token endpoint, as RFC 7523 §3 and the documentation
    /// say, also when the assertion goes to the device authorization or revocation endpoint
    /// (`endpoint`, used only when no token endpoint is known yet).
    func tokenAudience(_ endpoint: URL) -> String {
        (settings.tokenEndpoint ?? discoveredTokenEndpoint.withLock { $0 } ?? endpoint).absoluteString
    }

    private func requireSecret() async throws(OAuth2Error) -> String {
        guard let clientSecret else { throw OAuth2Error(.configuration, "the client authentication needs a client secret storage") }
        return try await clientSecret.read()
    }

    /// What went wrong with a request, in words (the transport's note, free of secrets, after it).
    static func reason(_ error: TransportError) -> String {
        let what = switch error.kind {
        case .timeout: "no answer in time"
        case .connectionFailed: "the connection failed"
        case .tls: "TLS failed"
        case .cancelled: "the request was cancelled"
        case .proxyAuthenticationRequired: "the proxy asked for its login"
        default: "the request failed"
        }
        return error.detail.map { "\(what) (\($0))" } ?? what
    }

    /// Sends `request`, reading at most ``maximumResponseBytes`` of its answer by its deadline.
    func send(_ request: TransportRequest, what: String) async throws(OAuth2Error) -> (HTTPResponse.Status, Data) {
        do {
            let response = try await transport.send(request)
            let bytes = try await response.body.collect(upTo: Self.maximumResponseBytes)
            return (response.status, Data(buffer: bytes))
        } catch let error as TransportError where error.kind == .responseTooLarge {
            throw OAuth2Error(.invalidResponse, "the \(what) endpoint's answer is larger than \(Self.maximumResponseBytes) bytes")
        } catch is CancellationError {
            throw OAuth2Error(.unreachable, "the \(what) request was cancelled")
        } catch let error as TransportError {
            throw OAuth2Error(.unreachable, "the \(what) endpoint could not be reached: \(Self.reason(error))")
        } catch {
            throw OAuth2Error(.unreachable, "the \(what) endpoint could not be reached")
        }
    }

    /// The token endpoint's answer to `fields`: a checked token, or the server's error.
    func token(_ fields: [(String, String)], endpoint: URL, deadline: ContinuousClock.Instant) async throws(OAuth2Error) -> TokenResponse {
        let grant = fields.first { $0.0 == "grant_type" }?.1 ?? "token"
        let answer = try await post(fields, to: endpoint, deadline: deadline, what: "token")
        guard answer.status == .ok else {
            throw Self.refusal(answer, what: "the \(Self.grantName(grant)) request", logger: logger)
        }
        return try TokenResponse(json: answer.body)
    }

    /// A short name for a grant type in messages.
    static func grantName(_ grant: String) -> String {
        grant == "urn:ietf:params:oauth:grant-type:device_code" ? "device_code" : grant
    }

    /// The error for a refused request: the server's error code, when it is one RFC 6749, 7009 and
    /// 8628 define (``ErrorResponse/code``) and holds nothing of the request's secrets, with a fixed
    /// sentence of ours; any other code is "another error code", its text never shown. The
    /// server's `error_description` is free text a hostile server could use to tell a person what
    /// to run or where to go (a device login polls with it under the prompt), so it is never shown
    /// nor logged, at any level: `logger` gets the known code only, at debug level.
    static func refusal(
        _ answer: (status: HTTPResponse.Status, body: Data, secrets: [String]), what: String, logger: Logger? = nil
    ) -> OAuth2Error {
        guard let error = try? JSONDecoder().decode(ErrorResponse.self, from: answer.body), !echoes(error.error, answer.secrets) else {
            return OAuth2Error(.refused, "\(what) was answered with status \(answer.status.code)", status: Int(answer.status.code))
        }
        guard let code = error.code else {
            logger?.debug("OAuth 2 request refused", metadata: ["oauth2.request": .string(what)])
            return OAuth2Error(.refused, "\(what) was refused (another error code)", status: Int(answer.status.code))
        }
        logger?.debug("OAuth 2 request refused", metadata: ["oauth2.error": .string(code), "oauth2.request": .string(what)])
        var detail = "\(what) was refused"
        if let meaning = meanings[code] { detail += ": " + meaning }
        let kind: OAuth2Error.Kind = ["invalid_grant", "access_denied", "expired_token"].contains(code) ? .loginRequired : .refused
        return OAuth2Error(kind, detail, serverError: code, status: Int(answer.status.code))
    }

    /// What the error codes of RFC 6749 §5.2 and §4.1.2.1, RFC 7009 §2.2.1 and RFC 8628 §3.5 mean,
    /// in our words.
    static let meanings: [String: String] = [
        "invalid_request": "the server found the request malformed",
        "invalid_client": "the client authentication failed (check the client ID and its secret or key)",
        "invalid_grant": "the grant, code or refresh token is invalid, expired or revoked",
        "unauthorized_client": "the client is not allowed to use this grant",
        "unsupported_grant_type": "the server does not support this grant",
        "invalid_scope": "the scopes asked for are not allowed",
        "access_denied": "access was denied",
        "expired_token": "the codes expired",
        "unsupported_token_type": "the server does not revoke this kind of token",
        "server_error": "the server failed",
        "temporarily_unavailable": "the server is unavailable for now",
    ]

    /// The length of the shortest run of a secret's characters taken for an echo of it.
    static let echoRun = 8

    /// Whether `text` holds any run of ``echoRun`` characters of a secret (or the whole of a
    /// shorter one), as sent or form-encoded.
    static func echoes(_ text: String, _ secrets: [String]) -> Bool {
        let text = Array(text.utf8)
        var runs: Set<ArraySlice<UInt8>> = []
        if text.count >= echoRun {
            for start in 0...(text.count - echoRun) { runs.insert(text[start..<(start + echoRun)]) }
        }
        for secret in secrets where !secret.isEmpty {
            // As sent, as escaped in a form, and as a description would show it once its control
            // characters are dropped.
            let shown = OAuth2Grammar.printable(Substring(secret))
            for form in Set([secret, FormBody.escape(secret), shown]) where !form.isEmpty {
                let bytes = Array(form.utf8)
                if bytes.count < echoRun {
                    if text.count >= bytes.count, (0...(text.count - bytes.count)).contains(where: { text[$0..<($0 + bytes.count)].elementsEqual(bytes) }) {
                        return true
                    }
                    continue
                }
                for start in 0...(bytes.count - echoRun) where runs.contains(bytes[start..<(start + echoRun)]) { return true }
            }
        }
        return false
    }

    /// The server's endpoints from its metadata at `issuer` (RFC 8414, then OpenID Connect
    /// discovery), the settings' own endpoints taking precedence; the metadata's `issuer` must
    /// be the one configured.
    ///
    /// Metadata cannot send a secret elsewhere: under an `https` issuer every endpoint it names
    /// must be `https` (plain `http` only when the issuer itself is `http` on a loopback IP
    /// address), and an endpoint that receives a credential (token, device authorization,
    /// revocation) must be on the issuer's host and port, unless the settings name that endpoint
    /// themselves. The authorization address a person opens must pass ``VerificationAddress``.
    /// A violation is an ``OAuth2Error/Kind/invalidResponse`` naming the metadata key, before
    /// anything is sent to the endpoint.
    func discover(issuer: URL, deadline: ContinuousClock.Instant) async throws(OAuth2Error) -> OAuth2Endpoints {
        guard OAuth2Endpoints.isAllowed(issuer) else {
            throw OAuth2Error(.configuration, "the issuer is not https (http only on a loopback IP address such as 127.0.0.1)")
        }
        struct Metadata: Decodable {
            var issuer: String?
            var token_endpoint: String?
            var device_authorization_endpoint: String?
            var authorization_endpoint: String?
            var revocation_endpoint: String?
            var authorization_response_iss_parameter_supported: Bool?
        }
        var statuses: [String] = []
        for url in OAuth2Endpoints.metadataURLs(issuer: issuer) {
            var request = TransportRequest(method: .get, url: url.absoluteString, headerFields: [.accept: "application/json"], deadline: deadline, maxResponseBytes: Self.maximumResponseBytes)
            request.shouldRedactResponseBody = false
            let (status, body) = try await send(request, what: "metadata")
            guard status == .ok else {
                statuses.append("\(url.path): \(status.code)")
                continue
            }
            guard let metadata = try? JSONDecoder().decode(Metadata.self, from: body) else {
                throw OAuth2Error(.invalidResponse, "the server metadata at \(url.path) is not a JSON object of endpoints")
            }
            guard let named = metadata.issuer, Self.sameIssuer(named, issuer) else {
                throw OAuth2Error(.invalidResponse, "the server metadata at \(url.path) names another issuer")
            }
            let found = (
                token: try Self.discovered(metadata.token_endpoint, "token_endpoint", configured: settings.tokenEndpoint, key: "tokenEndpoint", issuer: issuer),
                device: try Self.discovered(
                    metadata.device_authorization_endpoint, "device_authorization_endpoint", configured: settings.deviceAuthorizationEndpoint,
                    key: "deviceAuthorizationEndpoint", issuer: issuer
                ),
                authorization: try Self.discovered(
                    metadata.authorization_endpoint, "authorization_endpoint", configured: settings.authorizationEndpoint, key: nil, issuer: issuer
                ),
                revocation: try Self.discovered(
                    metadata.revocation_endpoint, "revocation_endpoint", configured: settings.revocationEndpoint, key: "revocationEndpoint", issuer: issuer
                )
            )
            guard let token = found.token else {
                throw OAuth2Error(.invalidResponse, "the server metadata has no token_endpoint")
            }
            discoveredTokenEndpoint.withLock { $0 = token }
            return OAuth2Endpoints(
                token: token,
                deviceAuthorization: found.device,
                authorization: found.authorization,
                revocation: found.revocation,
                issuerInAuthorizationResponse: metadata.authorization_response_iss_parameter_supported == true
            )
        }
        throw OAuth2Error(.unreachable, "no server metadata found for the issuer (\(statuses.joined(separator: ", ")))")
    }

    /// The endpoint to use for metadata key `name`: the settings' own (`configured`, the user's
    /// choice) when they name one, else the metadata's `text`, checked against `issuer`. `key` is
    /// the settings key of an endpoint that receives a credential, which must then be on the
    /// issuer's host and port; `nil` for the authorization endpoint, which receives none but is
    /// shown to a person.
    static func discovered(_ text: String?, _ name: String, configured: URL?, key: String?, issuer: URL) throws(OAuth2Error) -> URL? {
        if let configured { return configured }
        guard let text else { return nil }
        guard let url = URL(string: text), OAuth2Endpoints.isAllowed(url) else {
            throw OAuth2Error(.invalidResponse, "the server metadata's \(name) is not an https URL (http only on a loopback IP address) without user information")
        }
        if issuer.scheme?.lowercased() == "https", url.scheme?.lowercased() != "https" {
            throw OAuth2Error(.invalidResponse, "the server metadata's \(name) is plain http, though the issuer is https")
        }
        if let key {
            guard let endpointOrigin = VerificationAddress.origin(url), let issuerOrigin = VerificationAddress.origin(issuer),
                endpointOrigin.host == issuerOrigin.host, endpointOrigin.port == issuerOrigin.port
            else {
                throw OAuth2Error(
                    .invalidResponse,
                    "the server metadata's \(name) is on another host than the issuer, and would receive the client's credentials there; if that host is the server's own, set authentication.oauth2.\(key)"
                )
            }
        } else {
            try VerificationAddress.check(url, field: "server metadata's \(name)")
        }
        return url
    }

    /// Whether two issuer identifiers are the same, a trailing `/` aside.
    static func sameIssuer(_ named: String, _ configured: URL) -> Bool {
        func trimmed(_ text: String) -> String { text.hasSuffix("/") ? String(text.dropLast()) : text }
        return trimmed(named) == trimmed(configured.absoluteString)
    }
}

/// Where the client secret is: a name in a secret storage, read at each token request (a
/// rotated secret is used from the next one, once a refusal's back-off has passed).
struct ClientSecret: Sendable {
    let storage: any SecretStorage
    let name: String

    /// The longest client secret sent.
    static let maximumBytes = 4096

    func read() async throws(OAuth2Error) -> String {
        let secret: String?
        do {
            secret = try await storage.secret(named: name)
        } catch {
            throw OAuth2Error(.configuration, "the client secret '\(name)' could not be read: \(OAuth2AuthenticationStorage.describe(error))")
        }
        guard let secret, !secret.isEmpty else { throw OAuth2Error(.configuration, "no client secret is stored as '\(name)'") }
        // RFC 6749 appendix A.2: `client-secret = *VSCHAR`. Anything else (a line break, a control
        // character) is a mistake in the storage, and would slip past the echo check.
        guard secret.utf8.count <= Self.maximumBytes, OAuth2Grammar.all(secret, OAuth2Grammar.isPrintable) else {
            throw OAuth2Error(.configuration, "the client secret '\(name)' is not printable ASCII of at most \(Self.maximumBytes) bytes (RFC 6749 appendix A.2)")
        }
        return secret
    }
}
