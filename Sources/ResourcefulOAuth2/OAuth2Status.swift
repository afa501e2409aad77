public import Foundation
import Resourceful

/// What an OAuth 2 login holds for a service, as `resourceful status` shows it: when the access
/// token expires and the scopes the server granted. Never a token.
public struct OAuth2Status: Sendable, Equatable, Codable {
    /// When the latest access token expires, when the server said.
    public var expiresAt: Date?
    /// The scopes the server granted with it, space-separated, when it said.
    public var scope: String?

    /// A status.
    init(expiresAt: Date? = nil, scope: String? = nil) {
        self.expiresAt = expiresAt
        self.scope = scope
    }

    /// The largest stored status read back.
    static let maximumStoredBytes = 4096
}

extension OAuth2AuthenticationStorage {
    /// The name a service's status is stored under, beside its refresh token.
    static func statusName(service: String) -> String {
        "\(service).oauth2-status"
    }

    /// What the storage holds for `service`, without renewing anything: the access token held in
    /// memory; else, for a person's login (the `refresh_token` grant), the status stored beside
    /// the refresh token when it was last used, so that asking does not spend (and rotate) the
    /// refresh token; else, for the `client_credentials` grant, a new token's.
    ///
    /// - Throws: ``OAuth2Error`` with ``OAuth2Error/Kind/loginRequired`` when no refresh token is
    ///   stored for `service`.
    public func status(for service: String) async throws -> OAuth2Status {
        if let cached = cachedStatus(for: service) { return cached }
        guard settings.grant == .refreshToken, let storage = refreshTokenStorage else {
            let credential = try await credential(for: service)
            return cachedStatus(for: service) ?? OAuth2Status(expiresAt: credential?.expiresAt)
        }
        let refreshToken: String?
        let stored: String?
        do {
            refreshToken = try await storage.secret(named: Self.refreshTokenName(service: service))
            stored = try await storage.secret(named: Self.statusName(service: service))
        } catch {
            throw OAuth2Error(.unreachable, "the login of '\(service)' could not be read: \(Self.describe(error))")
        }
        guard let refreshToken, !refreshToken.isEmpty else {
            throw OAuth2Error(.loginRequired, "no refresh token is stored for '\(service)': log in with `resourceful login --service \(service)`")
        }
        // Written by this storage, but read as untrusted all the same: bounded, and its scope
        // held to the grammar a server's answer is.
        guard let stored, stored.utf8.count <= OAuth2Status.maximumStoredBytes,
            var status = try? JSONDecoder().decode(OAuth2Status.self, from: Data(stored.utf8))
        else { return OAuth2Status() }
        if let scope = status.scope, !scope.split(separator: " ").allSatisfy({ OAuth2Settings.isScopeToken(String($0)) }) {
            status.scope = nil
        }
        return status
    }

    /// Stores `token`'s expiry and scopes beside `service`'s refresh token, for ``status(for:)``;
    /// a storage that fails here fails nothing else. A logout since `epoch` (while this was
    /// written) removes it again.
    func keepStatus(of token: Token, for service: String, unlessLoggedOutSince epoch: UInt64) async {
        guard let storage = refreshTokenStorage else { return }
        let status = OAuth2Status(expiresAt: token.expiresAt, scope: token.scope ?? (settings.scopes.isEmpty ? nil : settings.scopes.joined(separator: " ")))
        guard let data = try? JSONEncoder().encode(status) else { return }
        try? await storage.storeSecret(String(decoding: data, as: UTF8.self), named: Self.statusName(service: service))
        if self.epoch != epoch { await forgetStatus(for: service) }
    }

    /// Forgets `service`'s stored status (a logout).
    func forgetStatus(for service: String) async {
        _ = try? await refreshTokenStorage?.deleteSecret(named: Self.statusName(service: service))
    }
}
