public import Foundation
import HTTPTypes
public import Resourceful

/// What a person must do to approve a device login (RFC 8628 §3.2): open ``verificationURI``
/// and enter ``userCode``. The device code itself is never shown.
///
/// What a server sends here is checked before anyone sees it: the addresses pass
/// ``VerificationAddress`` (`https`, or `http` to a loopback IP address; no user information; a
/// host of letters, digits and hyphens or an IP address; no escape that decodes to a control,
/// invisible or separator character), `verification_uri_complete` has the same origin as
/// `verification_uri`, and the user code is letters and digits in groups joined by `-`, at
/// most 20 characters (RFC 8628 §6.1); anything else fails the login with
/// ``OAuth2Error/Kind/invalidResponse`` and is not shown.
public struct DeviceAuthorization: Sendable, Equatable {
    /// The code the person enters.
    public var userCode: String
    /// Where the person enters it.
    public var verificationURI: URL
    /// The same address with the code in it, when the server gives one.
    public var verificationURIComplete: URL?
    /// How long the codes are valid: the server's `expires_in`, at most 30 minutes (a longer one
    /// is cut to 30 minutes).
    public var expiresIn: Duration
}

extension OAuth2AuthenticationStorage {
    /// Logs a person in with the device authorization grant (RFC 8628): asks the server for a
    /// device and user code, hands the user code and address to `prompt` (print them), then polls
    /// the token endpoint at the server's `interval` (5 seconds unless it says, 5 more after each
    /// `slow_down`) until the person approves, denies or the codes expire (at most 30 minutes,
    /// whatever `expires_in` says); the address and code are checked before `prompt` sees them
    /// (``DeviceAuthorization``). The refresh token is
    /// stored in the refresh token storage; the access token is kept for the next calls.
    ///
    /// - Throws: ``OAuth2Error`` with ``OAuth2Error/Kind/loginRequired`` when the person denied
    ///   the login (`access_denied`) or did not approve it in time (`expired_token`).
    @discardableResult
    public func logIn(
        service: String,
        prompt: @Sendable (DeviceAuthorization) async -> Void
    ) async throws(OAuth2Error) -> Credential {
        let requestDeadline = ContinuousClock.now + .seconds(30)
        let endpoints = try await endpoints(deadline: requestDeadline)
        guard let deviceEndpoint = endpoints.deviceAuthorization else {
            throw OAuth2Error(.configuration, "the server has no device authorization endpoint (authentication.oauth2.deviceAuthorizationEndpoint)")
        }
        var fields: [(String, String)] = []
        if !settings.scopes.isEmpty { fields.append(("scope", settings.scopes.joined(separator: " "))) }
        let answer = try await authorizationServer.post(fields, to: deviceEndpoint, deadline: requestDeadline, what: "device authorization")
        guard answer.status == .ok else { throw AuthorizationServer.refusal(answer, what: "the device authorization request", logger: authorizationServer.logger) }
        let grant = try DeviceGrant(json: answer.body)
        await prompt(grant.authorization)
        let expires = ContinuousClock.now + grant.authorization.expiresIn
        var interval = grant.interval
        while true {
            do {
                // Never past the codes' expiry: a long interval (or many `slow_down`s) must not
                // keep the login waiting once nothing can come of it.
                try await Task.sleep(for: min(interval, max(expires - ContinuousClock.now, .zero)))
            } catch {
                throw OAuth2Error(.loginRequired, "the device login was cancelled")
            }
            guard ContinuousClock.now < expires else {
                throw OAuth2Error(.loginRequired, "the device login was not approved in time", serverError: "expired_token")
            }
            do {
                let token = try await request(
                    [("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", grant.deviceCode)],
                    endpoints: endpoints,
                    deadline: min(expires, ContinuousClock.now + .seconds(30)),
                    storingRefreshTokenFor: service
                )
                remember(token, for: service)
                return Credential(header: token.header, expiresAt: token.expiresAt)
            } catch where error.serverError == "authorization_pending" {
                continue
            } catch where error.serverError == "slow_down" {
                interval = min(interval + .seconds(5), DeviceGrant.maximumInterval)
            } catch where error.serverError == "access_denied" {
                throw OAuth2Error(.loginRequired, "the device login was denied", serverError: "access_denied")
            } catch where error.serverError == "expired_token" {
                throw OAuth2Error(.loginRequired, "the device login was not approved in time", serverError: "expired_token")
            } catch where error.kind == .unreachable && ContinuousClock.now >= expires {
                // The poll was still out when the codes expired: its deadline ended it.
                throw OAuth2Error(.loginRequired, "the device login was not approved in time", serverError: "expired_token")
            }
        }
    }

    /// Logs out of `service`: revokes the stored refresh token at the server's revocation
    /// endpoint (RFC 7009) when it has one, deletes it from the refresh token storage and forgets
    /// the access tokens. Whether a token was revoked, and whether one was deleted.
    ///
    /// - Throws: ``OAuth2Error`` when the storage cannot be read or written, or the server
    ///   refuses the revocation; the stored token is deleted all the same.
    /// (``logOut(service:)`` calls it holding the lock renewals take.)
    @discardableResult
    func logOutHoldingLock(service: String) async throws(OAuth2Error) -> (revoked: Bool, deleted: Bool) {
        invalidate()
        guard let storage = refreshTokenStorage else {
            throw OAuth2Error(.configuration, "no storage keeps refresh tokens")
        }
        let name = Self.refreshTokenName(service: service)
        let stored: String?
        await forgetStatus(for: service)
        do {
            stored = try await storage.secret(named: name)
        } catch {
            throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be read: \(Self.describe(error))", underlying: error)
        }
        guard let token = stored else { return (false, false) }
        var revoked = false
        var failure: OAuth2Error?
        let deadline = ContinuousClock.now + .seconds(30)
        do {
            if let endpoint = try await endpoints(deadline: deadline).revocation {
                let answer = try await authorizationServer.post(
                    [("token", token), ("token_type_hint", "refresh_token")], to: endpoint, deadline: deadline, what: "revocation"
                )
                if answer.status == .ok { revoked = true } else { failure = AuthorizationServer.refusal(answer, what: "the revocation request", logger: authorizationServer.logger) }
            }
        } catch {
            failure = error
        }
        let deleted: Bool
        do {
            deleted = try await storage.deleteSecret(named: name)
        } catch {
            throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be deleted: \(Self.describe(error))", underlying: error)
        }
        if let failure { throw failure }
        return (revoked, deleted)
    }
}

/// A device authorization response (RFC 8628 §3.2), checked.
struct DeviceGrant: Sendable {
    var authorization: DeviceAuthorization
    var deviceCode: String
    var interval: Duration

    /// The shortest wait between two polls, whatever the server says.
    static let minimumInterval: Duration = .seconds(1)
    /// The longest, however many `slow_down`s.
    static let maximumInterval: Duration = .seconds(600)

    private struct Wire: Decodable {
        var device_code: String?
        var user_code: String?
        var verification_uri: String?
        var verification_url: String?
        var verification_uri_complete: String?
        var expires_in: TokenResponse.Field?
        var interval: TokenResponse.Field?
    }

    init(json: Data) throws(OAuth2Error) {
        guard let wire = try? JSONDecoder().decode(Wire.self, from: json) else {
            throw OAuth2Error(.invalidResponse, "the device authorization response is not a JSON object")
        }
        guard let deviceCode = wire.device_code, !deviceCode.isEmpty else {
            throw OAuth2Error(.invalidResponse, "the device authorization response lacks a device_code")
        }
        // What a person is asked to do is shown only in a constrained form: a phishing server
        // must not get free text, a misleading address or a terminal escape onto the screen.
        guard let userCode = wire.user_code, Self.isUserCode(userCode) else {
            throw OAuth2Error(
                .invalidResponse,
                "the device authorization response's user_code is not a code of letters and digits (groups joined by -, at most \(Self.maximumUserCodeCharacters) characters; RFC 8628 §6.1)"
            )
        }
        let uri = try VerificationAddress.check(wire.verification_uri ?? wire.verification_url ?? "", field: "device authorization response's verification_uri")
        var complete: URL?
        if let text = wire.verification_uri_complete {
            let url = try VerificationAddress.check(text, field: "device authorization response's verification_uri_complete")
            // The address with the code in it leads where the plain one does, or a person could be
            // sent elsewhere with a code that works.
            guard VerificationAddress.sameOrigin(url, uri) else {
                throw OAuth2Error(
                    .invalidResponse, "the device authorization response's verification_uri_complete is on another origin than its verification_uri, so it is not shown"
                )
            }
            complete = url
        }
        func seconds(_ field: TokenResponse.Field?, default value: Int, range: ClosedRange<Int>, name: String) throws(OAuth2Error) -> Int {
            let number: Int?
            switch field {
            case nil: return value
            case .integer(let integer): number = integer
            case .string(let text) where (1...64).contains(text.utf8.count) && text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }):
                number = Int(text) ?? range.upperBound
            case .large: number = range.upperBound
            default: number = nil
            }
            // Beyond the range's top is cut to it; below its bottom, or not a number, is refused.
            guard let number, number >= range.lowerBound else {
                throw OAuth2Error(.invalidResponse, "the device authorization response's \(name) is not a number of seconds of at least \(range.lowerBound)")
            }
            return min(number, range.upperBound)
        }
        // A device login waits at most half an hour, whatever the server allows.
        let expires = try seconds(wire.expires_in, default: 600, range: 1...Int(Self.maximumLifetime.components.seconds), name: "expires_in")
        // An interval of 0 would poll the token endpoint without pause until the codes expire.
        let interval = max(
            try seconds(wire.interval, default: 5, range: 0...Int(Self.maximumInterval.components.seconds), name: "interval"),
            Int(Self.minimumInterval.components.seconds)
        )
        authorization = DeviceAuthorization(userCode: userCode, verificationURI: uri, verificationURIComplete: complete, expiresIn: .seconds(expires))
        self.deviceCode = deviceCode
        self.interval = .seconds(interval)
    }

    /// The longest a device login waits for its approval, whatever `expires_in` says.
    static let maximumLifetime: Duration = .seconds(1800)
    /// The most characters of a user code, separators included.
    static let maximumUserCodeCharacters = 20
    /// Whether `code` is a user code as RFC 8628 §6.1 recommends: ASCII letters and digits
    /// (base-20 letters, digits, or a server's own alphabet of both), in groups joined by single
    /// `-`, 4 to ``maximumUserCodeCharacters`` characters.
    static func isUserCode(_ code: String) -> Bool {
        let bytes = Array(code.utf8)
        guard (4...maximumUserCodeCharacters).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else {
            return false
        }
        var previous: UInt8 = 0
        for byte in bytes {
            let isAlphanumeric = (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
            guard isAlphanumeric || (byte == UInt8(ascii: "-") && previous != UInt8(ascii: "-")) else { return false }
            previous = byte
        }
        return true
    }
}
