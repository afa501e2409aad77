import Foundation
public import Logging
public import Resourceful

/// Credentials the library obtains and renews itself from an OAuth 2 authorization server.
///
/// Each service's access token is kept with its expiry and renewed ``OAuth2Settings/skew``
/// before it (or halfway through a lifetime shorter than twice the skew); any number of
/// concurrent calls needing a token cause one token request. With the `client_credentials`
/// grant the client asks as itself; with `refresh_token`, the refresh token a person's login
/// stored (``logIn(prompt:)``) is used, and a rotated one is stored before the old is given up.
///
/// Processes of one user that share a refresh token (two CLI runs, a CLI and an app) spend it one
/// at a time: a renewal reads, spends and replaces it holding an advisory file lock per service
/// (`flock(2)` on `oauth2-refresh-<digest>.lock` in `~/.local/state/resourceful/locks`, `~` being
/// the home folder the user database names, else in `/tmp/resourceful-<uid>`: never a folder the
/// environment names, so that every process finds the same file; a folder of the user's open to
/// no one else, the file 0600 and never reached through a symbolic link),
/// waiting for another process's renewal at most until its own deadline, and ``logOut(service:)``
/// holds the same lock. A holder checks that the lock file was not removed or replaced right
/// before it spends the refresh token (else it takes the lock again, nothing spent) and before it
/// stores the new one. A file lock cannot cover one case: a lock file removed while a holder's
/// token request is already out lets another process lock a new file and spend the same refresh
/// token; the store then detects it (below), and a server that revokes a reused token's family
/// logs the user out. A lock file made readable to others is replaced by a private one only when
/// no process of the user's can hold its lock (one of the user's is waited for, one of another
/// user's is not). A rotated refresh token is stored only while the one spent is still
/// stored: after a logout elsewhere it is revoked and the call fails as logged out
/// (``OAuth2Error/Kind/loginRequired``). A refusal (`invalid_grant`) of a refresh token that
/// another process replaced meanwhile is tried once more with the new one. Where no lock folder can
/// be used (none exists or can be made, or a folder on the way is unsafe), renewals go on without
/// it (logged at warning) and a logout says it cannot be sure and why; a lock folder that is there
/// but is not the user's own (another user made `/tmp/resourceful-<uid>` first: the error names it
/// and the fix), a lock folder of the user's that others may open, or a lock file that cannot be
/// opened before the deadline (a file system that does not answer) or for a passing reason, fails
/// a renewal with ``OAuth2Error/Kind/unreachable``. A login stores its refresh token under the same lock, waiting
/// at most `timeout` for it, and stores it all the same when it cannot have it.
///
/// It is also a `CredentialRefresher`: an ``API`` built on dependencies holding it refreshes
/// once on a `401` (a token revoked early). A refused refresh token (`invalid_grant`) fails the
/// call with `APIError.Kind.authentication` saying to log in again.
///
/// No secret, token, assertion or code reaches a log line or an error's description, and the
/// token requests' bodies are marked for redaction, so recordings and cURL exports leave them out.
public final class OAuth2AuthenticationStorage: AuthenticationStorage, CredentialRefresher {
    /// An access token and when it is renewed.
    struct Token: Sendable {
        var header: String
        var renewAt: ContinuousClock.Instant
        var expiresAt: Date?
        var scope: String?
    }

    private struct State: Sendable {
        var tokens: [String: Token] = [:]
        var fetches: [String: (task: Task<Token, any Error>, generation: UInt64)] = [:]
        var generation: UInt64 = 0
        /// Bumped by ``invalidate()`` (a logout): a token request begun before it keeps nothing.
        var epoch: UInt64 = 0
        var endpoints: OAuth2Endpoints?
        /// The services whose last token answer brought a refresh token that was stored.
        var keptRefreshTokens: Set<String> = []
        /// The refusals still backed off from (``OAuth2Settings/refusalBackoff``), per service.
        var refusals: [String: Refusal] = [:]
        /// What opens the refresh lock's file instead of ``RefreshLock/openFile(service:folders:)``: a test's seam.
        var lockOpener: RefreshLock.Opener?
    }

    /// Makes the refresh lock's file be opened by `opener` (a test's seam: a file system that
    /// does not answer, a folder of the test's).
    func openRefreshLock(with opener: @escaping RefreshLock.Opener) {
        state.withLock { $0.lockOpener = opener }
    }

    /// What opens the refresh lock's file, when a test set it.
    var lockOpener: RefreshLock.Opener? {
        state.withLock { $0.lockOpener }
    }

    /// The settings.
    public let settings: OAuth2Settings
    private let server: AuthorizationServer
    private let refreshTokens: (any WritableSecretStorage)?
    private let sharedTokens: (any SharedTokenCache)?
    private let timeout: Duration
    let logger: Logger
    private let state = Locked(State())

    /// Creates a storage for the client `settings` describe.
    ///
    /// - Parameters:
    ///   - transport: Where the token requests go: the API's transport, say.
    ///   - clientSecret: Where the client secret is (`settings.clientSecretName` in it, else
    ///     `<clientId>-client-secret`), for `client_secret_basic` and `client_secret_post`.
    ///   - privateKey: Where the PEM private key of `private_key_jwt` is
    ///     (`settings.privateKeyName` in it, else `<clientId>-private-key`), read at each token
    ///     request, when `settings.privateKeyFile` is not set.
    ///   - refreshTokens: Where a person's refresh token is kept, for the `refresh_token` grant.
    ///   - timeout: How long a token request may take when no call's deadline bounds it.
    ///   - sharedTokens: Where a fleet's instances share `client_credentials` access tokens (such
    ///     as `ResourcefulPostgres`'s `PostgresTokenCache`): an instance takes a token another
    ///     kept, and asks for a new one under the fleet's lease, so that the fleet sends one token
    ///     request per token. `nil` (the default) keeps tokens in this process only.
    /// - Throws: ``OAuth2Error`` when the private key file of `private_key_jwt` cannot be read,
    ///   or neither it nor a storage for the key is given.
    public init(
        settings: OAuth2Settings,
        transport: any HTTPTransport,
        clientSecret: (any SecretStorage)? = nil,
        privateKey: (any SecretStorage)? = nil,
        refreshTokens: (any WritableSecretStorage)? = nil,
        timeout: Duration = .seconds(30),
        sharedTokens: (any SharedTokenCache)? = nil,
        logger: Logger = Logger(label: "resourceful.oauth2")
    ) async throws(OAuth2Error) {
        self.settings = settings
        let clientID = settings.clientID
        var assertionKey: ClientAssertionKey?
        if settings.clientAuthentication == .privateKeyJWT {
            if let file = settings.privateKeyFile {
                assertionKey = .loaded(try await ClientAssertionSigner(file: file, keyID: settings.keyID, clientID: clientID))
            } else if let privateKey {
                assertionKey = .stored(
                    privateKey, name: settings.privateKeyName ?? "\(clientID)-private-key",
                    kind: settings.privateKeyStorage?.rawValue ?? "given", keyID: settings.keyID, clientID: clientID
                )
            } else {
                throw OAuth2Error(.configuration, "private_key_jwt needs a private key file or a storage that keeps the key")
            }
        }
        let secretName = settings.clientSecretName
        server = AuthorizationServer(
            settings: settings,
            transport: transport,
            clientSecret: clientSecret.map { ClientSecret(storage: $0, name: secretName ?? "\(clientID)-client-secret") },
            assertionKey: assertionKey,
            logger: logger
        )
        // A store a fleet shares holds each server's and client's refresh tokens apart.
        self.refreshTokens = (refreshTokens as? any RotatingSecretStorage).map { ServerScopedSecrets($0, settings: settings) } ?? refreshTokens
        self.sharedTokens = sharedTokens
        self.timeout = timeout
        self.logger = logger
    }

    /// The name a service's refresh token is stored under; in a ``RotatingSecretStorage`` a fleet
    /// shares, under ``sharedRefreshTokenName(service:settings:)``.
    public static func refreshTokenName(service: String) -> String {
        "\(service).oauth2-refresh-token"
    }

    /// The name a service's refresh token is stored under in a ``RotatingSecretStorage`` (a
    /// store a fleet shares): scoped to the issuer (else the token endpoint) and the client of
    /// `settings`, so that deployments sharing one store with one service name keep their
    /// tokens apart.
    public static func sharedRefreshTokenName(service: String, settings: OAuth2Settings) -> String {
        ServerScopedSecrets.scope(settings) + refreshTokenName(service: service)
    }

    /// `Bearer <access token>` for `service`, obtained or renewed as needed.
    public func authenticationHeader(for service: String) async throws -> String? {
        try await token(for: service, replacing: nil).header
    }

    /// The access token for `service` with its expiry.
    public func credential(for service: String) async throws -> Credential? {
        let token = try await token(for: service, replacing: nil)
        return Credential(header: token.header, expiresAt: token.expiresAt)
    }

    /// Drops `service`'s access token and gets another: a `401` said it was no longer good.
    public func refreshCredential(for service: String) async throws -> String {
        let current = state.withLock { $0.tokens[service]?.header }
        return try await token(for: service, replacing: current ?? "").header
    }

    /// The cached token of `service` while it is fresh (and is not `replacing`), else the one
    /// a token request in flight brings, else a new request's.
    private func token(for service: String, replacing refused: String?) async throws -> Token {
        enum Lookup {
            case fresh(Token)
            case wait(Task<Token, any Error>)
            case backingOff(OAuth2Error)
        }
        let now = ContinuousClock.now
        let backoff = settings.refusalBackoff
        let grant = settings.grant
        let sharesTokens = sharedTokens != nil
        let lookup: Lookup = state.withLock { current in
            if let token = current.tokens[service] {
                let stale = refused.map { $0 == token.header || $0.isEmpty } ?? (token.renewAt <= now)
                if !stale { return .fresh(token) }
            }
            if let running = current.fetches[service] { return .wait(running.task) }
            // Refused a moment ago: the server would say the same; it is not asked again yet. A
            // fleet's shared token, which another instance may have got meanwhile, is still read.
            var backingOff: OAuth2Error?
            if let refusal = current.refusals[service] {
                if refusal.epoch == current.epoch, now < refusal.until {
                    guard sharesTokens else { return .backingOff(refusal.error(at: now)) }
                    backingOff = refusal.error(at: now)
                } else {
                    current.refusals[service] = nil
                }
            }
            current.generation += 1
            let generation = current.generation
            let epoch = current.epoch
            let held = current.tokens[service]?.header
            // One request for every caller: it runs in a task of its own, bounded by its own
            // deadline, and keeps its token for the next callers however its first caller fares.
            let task = Task { [self] in
                let result: Result<Token, any Error>
                do {
                    result = .success(try await self.fetch(for: service, epoch: epoch, replacing: refused, backingOff: backingOff))
                } catch {
                    result = .failure(error)
                }
                let ended = ContinuousClock.now
                self.state.withLock { state in
                    if state.fetches[service]?.generation == generation { state.fetches[service] = nil }
                    guard state.epoch == epoch else { return }
                    switch result {
                    case .success(let token):
                        state.tokens[service] = token
                        state.refusals[service] = nil
                    case .failure(let error):
                        // Kept unless the server was not asked (a back-off's own error), or a
                        // login's token came meanwhile.
                        guard backingOff == nil, state.tokens[service]?.header == held else { return }
                        if let refusal = Refusal(error, at: ended, backoff: backoff, grant: grant, epoch: epoch) { state.refusals[service] = refusal }
                    }
                }
                return try result.get()
            }
            current.fetches[service] = (task, generation)
            return .wait(task)
        }
        let task: Task<Token, any Error>
        switch lookup {
        case .fresh(let token): return token
        case .wait(let running): task = running
        case .backingOff(let error): throw error
        }
        return try await task.value
    }

    /// A new token for `service` by the configured grant (one other than `refused`, when a `401`
    /// said that one is no longer good). While `backingOff` from a refusal, only a fleet's shared
    /// token is read: the server is not asked, and `backingOff` is thrown when there is none.
    private func fetch(for service: String, epoch: UInt64, replacing refused: String?, backingOff: OAuth2Error? = nil) async throws -> Token {
        let deadline = ContinuousClock.now + timeout
        let endpoints: OAuth2Endpoints
        if let known = state.withLock({ $0.endpoints }) {
            endpoints = known
        } else if let backingOff {
            throw backingOff
        } else {
            endpoints = try await self.endpoints(deadline: deadline)
        }
        switch settings.grant {
        case .clientCredentials:
            guard let sharedTokens else {
                if let backingOff { throw backingOff }
                return try await request([("grant_type", "client_credentials")], endpoints: endpoints, deadline: deadline)
            }
            return try await sharedToken(
                from: sharedTokens, for: service, endpoints: endpoints, deadline: deadline, replacing: refused, backingOff: backingOff)
        case .refreshToken:
            guard let refreshTokens else {
                throw OAuth2Error(.configuration, "the refresh_token grant needs a writable storage for refresh tokens")
            }
            // A fleet's refresh tokens are renewed under the fleet's lease, not a lock file.
            if let sharedTokens, refreshTokens is any RotatingSecretStorage {
                return try await sharedRenewal(
                    from: sharedTokens, for: service, storage: refreshTokens, endpoints: endpoints, deadline: deadline, epoch: epoch,
                    replacing: refused, backingOff: backingOff)
            }
            if let backingOff { throw backingOff }
            // Read, spent and replaced under the lock the processes share: another process's
            // renewal or logout waits for this one, and this one for theirs. A lock whose file was
            // removed or replaced before anything was spent (another process may hold the new
            // file's) is taken again.
            for _ in 0..<Self.lockRetakes {
                let renewed = try await withRefreshLock(for: service, deadline: deadline, orElse: .fail) {
                    hold async throws(OAuth2Error) -> Token? in
                    try await renew(
                        service: service, storage: refreshTokens, endpoints: endpoints, deadline: deadline, epoch: epoch, lock: hold)
                }
                if let renewed { return renewed }
                logger.warning(
                    "The OAuth 2 refresh lock's file was removed or replaced while it was held: taken again",
                    metadata: ["service": "\(service)"])
            }
            throw Self.lockLost(service)
        }
    }

    /// How many times a renewal takes the lock again when its file was removed or replaced
    /// before the refresh token was spent.
    static let lockRetakes = 3

    /// The error of a renewal whose lock file was removed or replaced each time it was taken:
    /// nothing was spent, the stored refresh token is untouched.
    static func lockLost(_ service: String) -> OAuth2Error {
        OAuth2Error(
            .unreachable,
            "the lock file other processes renew the token of '\(service)' under was removed or replaced while this process held it, "
                + "so it could not be sure to renew alone: nothing was spent; try again"
        )
    }

    /// The stored refresh token of `service`, checked: `nil` when none is stored.
    private func storedRefreshToken(of service: String, in storage: any WritableSecretStorage) async throws(OAuth2Error) -> String? {
        let stored: String?
        do {
            stored = try await storage.secret(named: Self.refreshTokenName(service: service))
        } catch {
            throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be read: \(Self.describe(error))", underlying: error)
        }
        guard let refreshToken = stored, !refreshToken.isEmpty else { return nil }
        // RFC 6749 appendix A.17: `refresh-token = 1*VSCHAR`.
        guard refreshToken.utf8.count <= TokenResponse.maximumTokenBytes, OAuth2Grammar.all(refreshToken, OAuth2Grammar.isPrintable) else {
            throw OAuth2Error(
                .loginRequired,
                "the refresh token stored for '\(service)' is not a token: log in again with `resourceful login --service \(service)`")
        }
        return refreshToken
    }

    /// Spends `service`'s stored refresh token for a new access token (the lock held, when it
    /// can be: `lock`). A refusal (`invalid_grant`) of a token that another process
    /// replaced meanwhile is tried once more with the new one before the person is told to log in
    /// again. Right before each spending, a held lock is checked to be still the one other
    /// processes take: `nil` (nothing spent) when its file was removed or replaced.
    func renew(
        service: String,
        storage: any WritableSecretStorage,
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        epoch: UInt64,
        lock: LockHold
    ) async throws(OAuth2Error) -> Token? {
        guard var refreshToken = try await storedRefreshToken(of: service, in: storage) else {
            throw OAuth2Error(
                .loginRequired, "no refresh token is stored for '\(service)': log in with `resourceful login --service \(service)`")
        }
        var retried = false
        while true {
            // A lock file removed while held lets another process lock a new one and spend the
            // same refresh token: not spent unless the name still gives the file held.
            if lock.isHeld, await !lock.confirmed(until: deadline) { return nil }
            // A storage a fleet shares marks the token as being spent: another instance that
            // took the lease after this one lost it does not spend it too.
            let rotating = storage as? any RotatingSecretStorage
            if let rotating {
                guard let claimed = try await claim(refreshToken, of: service, in: rotating, deadline: deadline) else {
                    throw OAuth2Error(
                        .loginRequired, "no refresh token is stored for '\(service)': log in with `resourceful login --service \(service)`")
                }
                refreshToken = claimed
            }
            do throws(OAuth2Error) {
                let token = try await request(
                    [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], endpoints: endpoints, deadline: deadline,
                    storingRefreshTokenFor: service, unlessLoggedOutSince: epoch, spent: refreshToken, lock: lock
                )
                // Ended by the rotation written over it; still running when the server rotates none.
                await rotating?.releaseClaim(named: Self.refreshTokenName(service: service), spending: refreshToken)
                return token
            } catch {
                // A server's refusal of the request as such (a client or grant error it names,
                // with a 4xx status) spent nothing; a request that got no answer, a server error,
                // or a refusal of ours after the answer (a logout meanwhile) may have.
                if let status = error.status, (400..<500).contains(status), let code = error.serverError,
                    Self.spendsNothing.contains(code) || code == "invalid_grant"
                {
                    await rotating?.releaseClaim(named: Self.refreshTokenName(service: service), spending: refreshToken)
                } else {
                    // Maybe spent: the claim runs out, but no successor is to be waited for.
                    await rotating?.abandonClaim(named: Self.refreshTokenName(service: service), spending: refreshToken)
                }
                guard error.kind == .loginRequired, error.serverError != nil else { throw error }
                if !retried, error.serverError == "invalid_grant",
                    let current = try await storedRefreshToken(of: service, in: storage), current != refreshToken
                {
                    // Another process (one that does not share the lock) rotated it meanwhile.
                    retried = true
                    refreshToken = current
                    continue
                }
                throw OAuth2Error(
                    .loginRequired,
                    "the refresh token of '\(service)' was refused: log in again with `resourceful login --service \(service)`",
                    serverError: error.serverError
                )
            }
        }
    }

    /// The error codes of a token request refused as such, before anything was spent.
    static let spendsNothing: Set<String> = ["invalid_request", "invalid_client", "unauthorized_client", "unsupported_grant_type", "invalid_scope"]

    /// Stores `refreshToken` as `service`'s.
    private func keep(_ refreshToken: String, for service: String, in storage: any WritableSecretStorage) async throws(OAuth2Error) {
        do {
            try await storage.storeSecret(refreshToken, named: Self.refreshTokenName(service: service))
        } catch {
            throw OAuth2Error(.unreachable, "the new refresh token of '\(service)' could not be stored: \(Self.describe(error))", underlying: error)
        }
        state.withLock { _ = $0.keptRefreshTokens.insert(service) }
    }

    /// The error of a renewal whose login was ended (by a logout, in this process or another)
    /// while its request was out: its new refresh token was discarded.
    static func loggedOut(_ service: String) -> OAuth2Error {
        OAuth2Error(
            .loginRequired,
            "'\(service)' was logged out while its token was renewed: log in again with `resourceful login --service \(service)`"
        )
    }

    /// A token request with `fields` and the settings' scopes, audience and resource; a
    /// refresh token in the answer is stored for `service` before the token is handed out,
    /// unless a logout came since `epoch`, or the storage no longer holds `spent` (the refresh
    /// token this request spends): then it is revoked and the request fails as logged out, or
    /// (another login's token stored meanwhile) left out. A renewal's is stored under the lock its
    /// caller holds (`lock`), when it could have it and its file is still the one other processes
    /// take (else as without the lock). A login's (no `spent`) is stored under the lock renewals
    /// take, waited for at most the storage's `timeout` (what a renewal elsewhere may hold it),
    /// whatever is left of the login's own deadline; not had by then, it is stored all the same
    /// (logged at warning): a person's fresh login is never thrown away.
    func request(
        _ fields: [(String, String)],
        endpoints: OAuth2Endpoints,
        deadline: ContinuousClock.Instant,
        storingRefreshTokenFor service: String? = nil,
        withoutScope: Bool = false,
        unlessLoggedOutSince epoch: UInt64? = nil,
        spent: String? = nil,
        lock: LockHold? = nil
    ) async throws(OAuth2Error) -> Token {
        var fields = fields
        if !settings.scopes.isEmpty, !withoutScope, !fields.contains(where: { $0.0 == "device_code" }) {
            fields.append(("scope", settings.scopes.joined(separator: " ")))
        }
        if let audience = settings.audience { fields.append(("audience", audience)) }
        if let resource = settings.resource { fields.append(("resource", resource)) }
        let started = ContinuousClock.now
        let startedAt = Date()
        let response = try await server.token(fields, endpoint: endpoints.token, deadline: deadline)
        var ownsStatus = true
        if let service, let refreshTokens {
            let name = Self.refreshTokenName(service: service)
            if let rotated = response.refreshToken {
                // A logout while the request was out deleted the refresh token: the new one must
                // not come back into the storage after it.
                if let epoch, state.withLock({ $0.epoch }) != epoch {
                    await discard(rotated, endpoints: endpoints, deadline: deadline)
                    throw Self.loggedOut(service)
                }
                if let spent, let rotating = refreshTokens as? any RotatingSecretStorage {
                    // Written only over the token spent: gone is a logout; another token is
                    // another login's, which stays.
                    let replaced: Bool
                    do {
                        replaced = try await rotating.replaceSecret(named: name, spent: spent, with: rotated)
                    } catch {
                        throw OAuth2Error(.unreachable, "the new refresh token of '\(service)' could not be stored: \(Self.describe(error))", underlying: error)
                    }
                    if replaced {
                        state.withLock { _ = $0.keptRefreshTokens.insert(service) }
                    } else {
                        ownsStatus = false
                        let current: String?
                        do {
                            current = try await rotating.secret(named: name)
                        } catch {
                            throw OAuth2Error(.unreachable, "the refresh token of '\(service)' could not be read again: \(Self.describe(error))", underlying: error)
                        }
                        if current?.isEmpty ?? true {
                            await discard(rotated, endpoints: endpoints, deadline: deadline)
                            throw Self.loggedOut(service)
                        }
                    }
                } else if let spent {
                    // Under a lock whose file is still the one other processes take, no logout
                    // can have come between; a file removed or replaced meanwhile (or one that
                    // could not be checked in time) let another process take the lock: then as
                    // without it.
                    let holdingLock = await lock?.confirmed(until: deadline) ?? false
                    if lock?.isHeld == true, !holdingLock {
                        logger.warning(
                            "The OAuth 2 refresh lock could not be confirmed after a renewal: its token is stored only if nothing changed",
                            metadata: ["service": "\(service)"]
                        )
                    }
                    // The same check across processes: the stored item must still be the token
                    // spent. Gone is a logout; another token is another login's, which stays.
                    let current: String??
                    do {
                        current = try await refreshTokens.secret(named: name)
                    } catch {
                        // Under the lock no logout can have come between: storing the new token
                        // loses nothing (the spent one is spent). Without it, nothing is sure.
                        guard holdingLock else {
                            throw OAuth2Error(
                                .unreachable, "the refresh token of '\(service)' could not be read again: \(Self.describe(error))",
                                underlying: error
                            )
                        }
                        current = .none
                    }
                    if case .some(let stored) = current {
                        guard let stored, !stored.isEmpty else {
                            await discard(rotated, endpoints: endpoints, deadline: deadline)
                            throw Self.loggedOut(service)
                        }
                        ownsStatus = stored == spent
                    }
                    if ownsStatus { try await keep(rotated, for: service, in: refreshTokens) }
                } else {
                    // A login: stored under the lock renewals take, so that no renewal under way
                    // elsewhere, which compared the stored token before this, writes over it. The
                    // wait is the usual one, not what is left of the login's deadline (a login
                    // approved at its last moment would not wait at all), and a lock not had by
                    // then does not cost the person their login.
                    let lockWait = ContinuousClock.now + timeout
                    try await withRefreshLock(for: service, deadline: lockWait, orElse: .proceed) { hold async throws(OAuth2Error) in
                        try await keep(rotated, for: service, in: refreshTokens)
                        if case .notHeld(let why) = hold {
                            logger.warning(
                                "A login stored its OAuth 2 refresh token without the lock other processes renew it under",
                                metadata: ["service": "\(service)", "reason": "\(why)"]
                            )
                        }
                    }
                }
            } else if spent == nil {
                // A login whose answer holds no refresh token: an earlier login's must not stay
                // beside it, to be spent for another grant (or another person).
                state.withLock { _ = $0.keptRefreshTokens.remove(service) }
                _ = try? await refreshTokens.deleteSecret(named: name)
            }
        }
        var renewAt = ContinuousClock.Instant.now.advanced(by: .seconds(TokenResponse.maximumLifetime))
        var expiresAt: Date?
        if let lifetime = response.lifetime {
            // `skew * 2` could overflow for a skew set in code; a negative skew counts as none.
            let skew = max(settings.skew, .zero)
            let early = lifetime - skew > skew ? lifetime - skew : lifetime / 2
            renewAt = started + early
            expiresAt = startedAt.addingTimeInterval(Double(lifetime.components.seconds))
        }
        let token = Token(header: "Bearer \(response.accessToken)", renewAt: renewAt, expiresAt: expiresAt, scope: response.scope)
        if let service, ownsStatus {
            let current = state.withLock { $0.epoch }
            if epoch == nil || epoch == current { await keepStatus(of: token, for: service, unlessLoggedOutSince: current) }
        }
        return token
    }

    /// The server's endpoints: the settings', or its metadata's, found once.
    func endpoints(deadline: ContinuousClock.Instant) async throws(OAuth2Error) -> OAuth2Endpoints {
        if let known = state.withLock({ $0.endpoints }) { return known }
        let endpoints: OAuth2Endpoints
        if let issuer = settings.issuer {
            endpoints = try await server.discover(issuer: issuer, deadline: deadline)
        } else if let token = settings.tokenEndpoint {
            endpoints = OAuth2Endpoints(
                token: token,
                deviceAuthorization: settings.deviceAuthorizationEndpoint,
                authorization: settings.authorizationEndpoint,
                revocation: settings.revocationEndpoint
            )
        } else {
            throw OAuth2Error(.configuration, "neither an issuer nor a token endpoint is configured")
        }
        state.withLock { $0.endpoints = endpoints }
        return endpoints
    }

    /// Forgets every cached access token, and what a token request still under way brings (its
    /// access token is not kept, its rotated refresh token not stored), so that the next call
    /// gets a new one; ends every refusal's back-off (``OAuth2Settings/refusalBackoff``).
    public func invalidate() {
        state.withLock { state in
            state.tokens = [:]
            state.fetches = [:]
            state.refusals = [:]
            state.epoch &+= 1
        }
    }

    /// Logs out of `service`: revokes the stored refresh token at the server's revocation
    /// endpoint (RFC 7009) when it has one, deletes it from the refresh token storage and forgets
    /// the access tokens; whether a token was revoked, and whether one was deleted.
    ///
    /// It holds the lock other processes take to renew the token (the file lock this class's
    /// documentation describes; it waits for a renewal under way at most the storage's
    /// `timeout`), so that no renewal begun before it stores a new refresh token after it; a
    /// renewal in this process that was under way keeps nothing either.
    ///
    /// - Throws: ``OAuth2Error`` when the storage cannot be read or written, or the server
    ///   refuses the revocation (the stored token is deleted all the same); with
    ///   ``OAuth2Error/Kind/unreachable`` after deleting it when the lock could not be had
    ///   (another process held it for the whole wait, its file could not be opened in time, or
    ///   no lock folder could be used: the description says which), since a renewal under way
    ///   elsewhere could then still store a new token.
    @discardableResult
    public func logOut(service: String) async throws(OAuth2Error) -> (revoked: Bool, deleted: Bool) {
        invalidate()
        let deadline = ContinuousClock.now + timeout
        return try await withRefreshLock(for: service, deadline: deadline, orElse: .proceed) { hold async throws(OAuth2Error) in
            let outcome = try await logOutHoldingLock(service: service)
            state.withLock { _ = $0.keptRefreshTokens.remove(service) }
            // A lock file removed or replaced meanwhile let another process take the lock.
            let confirmed = await hold.confirmed(until: ContinuousClock.now + timeout)
            guard confirmed else {
                let why =
                    switch hold {
                    case .notHeld(let why): why
                    case .held: "the lock file other processes renew it under was removed or replaced while the logout held it"
                    }
                throw OAuth2Error(
                    .unreachable,
                    "the refresh token of '\(service)' was removed, but \(why) "
                        + "(a renewal under way may still store a new one): check with `resourceful status --service \(service)` "
                        + "and log out again if it says you are logged in"
                )
            }
            return outcome
        }
    }

    /// Revokes `refreshToken`, a rotated token that is not kept, when the server has a
    /// revocation endpoint; a failure changes nothing (the token is forgotten all the same).
    func discard(_ refreshToken: String, endpoints: OAuth2Endpoints, deadline: ContinuousClock.Instant) async {
        guard let endpoint = endpoints.revocation, ContinuousClock.now < deadline else { return }
        let fields = [("token", refreshToken), ("token_type_hint", "refresh_token")]
        _ = try? await server.post(fields, to: endpoint, deadline: deadline, what: "revocation")
    }

    /// Whether the last token answer for `service` in this storage (a login's or a renewal's)
    /// brought a refresh token that was stored: `false` when the server sent none, the grant
    /// keeps none, or a logout came since.
    package func keptRefreshToken(for service: String) -> Bool {
        state.withLock { $0.keptRefreshTokens.contains(service) }
    }

    /// The storage kind refresh tokens are kept in, as the settings name it
    /// (``OAuth2Settings/refreshTokenStorage``), or `nil` when this storage keeps none (the
    /// `client_credentials` grant).
    package var refreshTokenStorageKind: APIConfig.StorageKind? {
        refreshTokens == nil ? nil : settings.refreshTokenStorage
    }

    /// A storage's error as a message may show it: its own description when it is secret-free.
    static func describe(_ error: any Error) -> String {
        (error as? any SecretFreeDescription)?.description ?? "\(type(of: error))"
    }

    /// The expiry and scopes of the access token held for `service` now, if one is: never a
    /// token.
    public func cachedStatus(for service: String) -> OAuth2Status? {
        state.withLock { $0.tokens[service] }.map { OAuth2Status(expiresAt: $0.expiresAt, scope: $0.scope) }
    }

    var authorizationServer: AuthorizationServer { server }
    var refreshTokenStorage: (any WritableSecretStorage)? { refreshTokens }

    /// The epoch now: ``invalidate()`` (a logout) bumps it.
    var epoch: UInt64 { state.withLock { $0.epoch } }

    /// Keeps `token` as `service`'s access token.
    func remember(_ token: Token, for service: String) {
        state.withLock { state in
            state.tokens[service] = token
            state.refusals[service] = nil
        }
    }
}
