public import Foundation
import HTTPTypes
public import Resourceful

/// What a person must do to approve a device login (RFC 8628 §3.2): open ``verificationURI``
/// and enter ``userCode``. The device code itself is never shown.
public struct DeviceAuthorization: Sendable, Equatable {
    /// The code the person enters.
    public var userCode: String
    /// Where the person enters it.
    public var verificationURI: URL
    /// The same address with the code in it, when the server gives one.
    public var verificationURIComplete: URL?
    /// How long the codes are valid.
    public var expiresIn: Duration
}

extension OAuth2AuthenticationStorage {
    /// Logs a person in with the device authorization grant (RFC 8628): asks the server for a
    /// device and user code, hands the user code and address to `prompt` (print them), then polls
    /// the token endpoint at the server's `interval` (5 seconds unless it says, 5 more after each
    /// `slow_down`) until the person approves, denies or the codes expire. The refresh token is
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
        guard answer.status == .ok else { throw AuthorizationServer.refusal(answer, what: "the device authorization request") }
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
            throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be read: \(Self.describe(error))")
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
                if answer.status == .ok { revoked = true } else { failure = AuthorizationServer.refusal(answer, what: "the revocation request") }
            }
        } catch {
            failure = error
        }
        let deleted: Bool
        do {
            deleted = try await storage.deleteSecret(named: name)
        } catch {
            throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be deleted: \(Self.describe(error))")
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
        guard let deviceCode = wire.device_code, !deviceCode.isEmpty, let userCode = wire.user_code, userCode.utf8.count <= 64,
            OAuth2Grammar.all(userCode, OAuth2Grammar.isPrintable)
        else {
            throw OAuth2Error(.invalidResponse, "the device authorization response lacks a device_code or a printable user_code")
        }
        guard let uri = Self.webURL(wire.verification_uri ?? wire.verification_url) else {
            throw OAuth2Error(.invalidResponse, "the device authorization response's verification_uri is not an http or https URL")
        }
        let complete = Self.webURL(wire.verification_uri_complete)
        func seconds(_ field: TokenResponse.Field?, default value: Int, range: ClosedRange<Int>) throws(OAuth2Error) -> Int {
            switch field {
            case nil: return value
            case .integer(let number) where range.contains(number): return number
            default: throw OAuth2Error(.invalidResponse, "the device authorization response's expires_in or interval is out of range")
            }
        }
        let expires = try seconds(wire.expires_in, default: 600, range: 1...86_400)
        // An interval of 0 would poll the token endpoint without pause until the codes expire.
        let interval = max(try seconds(wire.interval, default: 5, range: 0...600), Int(Self.minimumInterval.components.seconds))
        authorization = DeviceAuthorization(userCode: userCode, verificationURI: uri, verificationURIComplete: complete, expiresIn: .seconds(expires))
        self.deviceCode = deviceCode
        self.interval = .seconds(interval)
    }

    /// `text` as an `http` or `https` URL a person can open.
    private static func webURL(_ text: String?) -> URL? {
        guard let text, let url = URL(string: text), let scheme = url.scheme?.lowercased() else { return nil }
        return scheme == "https" || scheme == "http" ? url : nil
    }
}
