public import Foundation
import Resourceful

/// What an OAuth 2 login holds for a service, as `resourceful status` shows it: when the access
/// token expires and the scopes the server granted. Never a token.
public struct OAuth2Status: Sendable, Equatable, Codable {
    /// When the latest access token expires, when the server said.
    public var expiresAt: Date?
    /// The scopes the server granted with it, space-separated, when it said so in the form RFC 6749
    /// §3.3 gives (at most 32 scope tokens of at most 96 bytes each): show it with
    /// ``scopeSummary(askedFor:)``, not as it is.
    public var scope: String?

    /// A status.
    init(expiresAt: Date? = nil, scope: String? = nil) {
        self.expiresAt = expiresAt
        self.scope = scope
    }

    /// The largest stored status read back.
    static let maximumStoredBytes = 4096

    /// The most scope tokens a granted scope may hold; one with more is left out.
    static let maximumScopes = 32
    /// The longest scope token a granted scope may hold, in bytes; one with a longer token is left out.
    static let maximumScopeBytes = 96

    /// `scope` when it is scope tokens (RFC 6749 §3.3: printable ASCII without spaces, `"` or
    /// `\`) separated by single spaces, at most ``maximumScopes`` of them, each at most
    /// ``maximumScopeBytes`` bytes; nil otherwise: a server's scope is not free text to keep.
    static func boundedScope(_ scope: String) -> String? {
        let tokens = scope.split(separator: " ", omittingEmptySubsequences: false)
        guard !tokens.isEmpty, tokens.count <= maximumScopes,
            tokens.allSatisfy({ $0.utf8.count <= maximumScopeBytes && OAuth2Settings.isScopeToken(String($0)) })
        else { return nil }
        return scope
    }

    /// What of the granted ``scope`` to show a person: the scopes in it that were asked for
    /// (`askedFor`, the configuration's ``OAuth2Settings/scopes``), in the server's order, then
    /// "and N more" for the others, which are never shown as the server wrote them (a hostile
    /// server could grant a scope named as an instruction to a person); "N scopes" when none of
    /// them was asked for; nil when the server said nothing usable.
    public func scopeSummary(askedFor: [String]) -> String? {
        guard let scope, let bounded = Self.boundedScope(scope) else { return nil }
        let granted = bounded.split(separator: " ").map(String.init)
        let asked = Set(askedFor)
        let shown = granted.filter { asked.contains($0) }
        let others = granted.count - shown.count
        guard !shown.isEmpty else { return others == 1 ? "1 scope" : "\(others) scopes" }
        return shown.joined(separator: " ") + (others > 0 ? " and \(others) more" : "")
    }
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
            throw OAuth2Error(.unreachable, "the login of '\(service)' could not be read: \(Self.describe(error))", underlying: error)
        }
        guard let refreshToken, !refreshToken.isEmpty else {
            throw OAuth2Error(.loginRequired, "no refresh token is stored for '\(service)': log in with `resourceful login --service \(service)`")
        }
        // Written by this storage, but read as untrusted all the same: bounded, and its scope
        // held to the grammar a server's answer is.
        guard let stored, stored.utf8.count <= OAuth2Status.maximumStoredBytes,
            var status = try? JSONDecoder().decode(OAuth2Status.self, from: Data(stored.utf8))
        else { return OAuth2Status() }
        status.scope = status.scope.flatMap(OAuth2Status.boundedScope)
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
