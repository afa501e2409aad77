import ArgumentParser
import Foundation
import Resourceful
import ResourcefulKeyring
import ResourcefulOAuth2

/// `login`, `logout` and `status` for a service whose configuration names the `oauth2` storage:
/// a device login whose refresh token goes into the configured refresh token storage (the keyring
/// unless set), its revocation, and what the storage holds (expiry and scopes, never a token).
struct OAuthSession {
    let config: APIConfig
    let storage: OAuth2AuthenticationStorage
    let dependencies: APIDependencies

    /// The OAuth 2 storage of `service` in configuration `environment` (`services.<service>`, or
    /// the top level when its `service` key is `service`), or `nil` when the configuration does
    /// not describe the service, or names no `oauth2` storage for it, or (unless `fileChosen`: an
    /// environment or folder named on the command line) does not exist. A configuration that
    /// cannot be loaded (a mistyped key, a value out of range) fails, as it fails a call.
    static func open(
        service: String, environment: String, configDirectory: String?, account: String?, keyring: Keyring, fileChosen: Bool = false
    ) async throws -> OAuthSession? {
        let config: APIConfig
        do {
            config = try await APIConfig.load(environment: environment, configDirectory: configDirectory, service: service)
        } catch {
            let problem = error.underlying as? APIConfigError
            switch problem?.kind {
            case .missingFile? where !fileChosen:
                // No configuration: a service of the keyring's alone.
                return nil
            case .missingKey? where problem?.key == "services.\(service)", .invalidValue? where problem?.key == "services.\(service)":
                // Not described under `services`: perhaps the top level's own service.
                let topLevel = try await APIConfig.load(environment: environment, configDirectory: configDirectory)
                guard topLevel.service == service else { return nil }
                config = topLevel
            default:
                throw error
            }
        }
        guard config.authentication.storages.contains("oauth2") else { return nil }
        // A command is one process: its state is its own, whatever store a fleet shares.
        if let unused = CallTarget.unusedSharedState(config) { FileHandle.standardError.write(Data("resourceful: \(unused)\n".utf8)) }
        var alone = config
        alone.sharedState = APIConfig.SharedStateSettings()
        let dependencies = try await APIDependencies.live(
            config: alone, storageFactories: CommandCredentials.factories(account: account, keyring: keyring)
        )
        let links = (dependencies.authenticationStorage as? ChainedAuthenticationStorage)?.links.map(\.storage) ?? [dependencies.authenticationStorage]
        guard let storage = links.lazy.compactMap({ $0 as? OAuth2AuthenticationStorage }).first else {
            try? await dependencies.transport.shutdown()
            return nil
        }
        return OAuthSession(config: config, storage: storage, dependencies: dependencies)
    }

    /// Runs `body`, then shuts the transport down however it ended; an ``OAuth2Error`` or
    /// ``APIError`` is one line on standard error and exit code 3.
    func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as OAuth2Error {
            try? await dependencies.transport.shutdown()
            FileHandle.standardError.write(Data("resourceful: \(error)\n".utf8))
            throw error.kind == .loginRequired ? ExitCodes.notFound : ExitCodes.keyringFailed
        } catch let error as APIError {
            try? await dependencies.transport.shutdown()
            FileHandle.standardError.write(Data((CallReport.describe(error) + "\n").utf8))
            throw ExitCodes.keyringFailed
        } catch {
            try? await dependencies.transport.shutdown()
            throw error
        }
        try? await dependencies.transport.shutdown()
    }

    /// The device login (or, with `browser`, the browser login with PKCE and a loopback
    /// redirect): the address (and code) printed, flushed at once, then the wait.
    func logIn(browser: Bool) async throws {
        try await run {
            let service = config.service
            let credential: Credential
            if browser {
                credential = try await storage.logInWithBrowser(service: service) { url in
                    // Shown only in the form a device login's address must have: a configured or
                    // discovered authorization endpoint must not put an escape or a misleading
                    // host on the screen.
                    try VerificationAddress.check(url, field: "authorization address")
                    FileHandle.standardOutput.write(Data("To log in to \(service), open this address in a browser: \(url)\n".utf8))
                }
            } else {
                credential = try await storage.logIn(service: service) { authorization in
                    var text = "To log in to \(service), open \(authorization.verificationURI) and enter the code \(authorization.userCode)"
                    if let complete = authorization.verificationURIComplete { text += " (or open \(complete))" }
                    FileHandle.standardOutput.write(Data((text + "\n").utf8))
                }
            }
            print("Logged in to \(config.service)\(Self.expiry(credential.expiresAt))\(refreshTokenNote(service)).")
        }
    }

    /// Where the login's refresh token went, as the end of the login's sentence: only when the
    /// server sent one and it was stored, naming the storage used.
    private func refreshTokenNote(_ service: String) -> String {
        guard let kind = storage.refreshTokenStorageKind else {
            return "; no refresh token is kept (the client_credentials grant)"
        }
        guard storage.keptRefreshToken(for: service) else {
            return "; the server sent no refresh token, so log in again when the access token expires"
        }
        return kind == .keyring ? "; the refresh token is in the keyring" : "; the refresh token is kept in the '\(kind.rawValue)' storage"
    }

    func logOut() async throws {
        try await run {
            let outcome = try await storage.logOut(service: config.service)
            switch (outcome.revoked, outcome.deleted) {
            case (true, _): print("Revoked and removed the refresh token for \(config.service).")
            case (false, true): print("Removed the refresh token for \(config.service) (the server has no revocation endpoint).")
            case (false, false): print("No refresh token was stored for \(config.service).")
            }
        }
    }

    func status() async throws {
        try await run {
            // Read from the keyring for a person's login: asking does not spend the refresh token.
            let status = try await storage.status(for: config.service)
            let who = storage.settings.grant == .refreshToken ? "Logged in to \(config.service)" : "\(config.service) calls with client credentials"
            // Only the scopes asked for are shown as written: a server's own names are counted.
            let scopes = status.scopeSummary(askedFor: storage.settings.scopes)
            print("\(who)\(Self.expiry(status.expiresAt))\(scopes.map { "; scopes: \($0)" } ?? "").")
        }
    }

    private static func expiry(_ date: Date?) -> String {
        guard let date else { return "" }
        guard date > Date() else { return ": the last access token expired at \(date.formatted(.iso8601)) (the next call renews it)" }
        return ": access token valid until \(date.formatted(.iso8601))"
    }
}
