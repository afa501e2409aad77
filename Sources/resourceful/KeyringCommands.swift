import ArgumentParser
import Foundation
import ResourcefulKeyring

/// Options shared by the commands that use the keyring.
struct KeyringOptions: ParsableArguments {
    @Option(help: "The service the credential is for: one the configuration describes under `services`, or its `service` key. When its configuration names the oauth2 storage, the command logs in, out or tells the status through OAuth 2.")
    var service: String

    @Option(help: "The account the credential belongs to (for OAuth 2, the keyring account the refresh token is kept under; default: authentication.keyring.account).")
    var account: String?

    @Option(name: .customLong("env"), help: "The configuration to look for an OAuth 2 service in (default: development; named, it must exist).")
    var chosenEnvironment: String?

    /// The configuration looked in.
    var environment: String { chosenEnvironment ?? "development" }

    @Option(help: "Where the configuration files are (default: $RESOURCEFUL_CONFIG_DIR, else ./Configs).")
    var configDirectory: String?

    @Option(help: "Seconds a keyring call may take.")
    var keyringTimeout: Double = 5

    var keyring: Keyring {
        Keyring(timeout: .milliseconds(Int64(keyringTimeout * 1000)))
    }

    /// The OAuth 2 session of ``service``, when its configuration names `oauth2`.
    func oauthSession() async throws -> OAuthSession? {
        do {
            return try await OAuthSession.open(
                service: service, environment: environment, configDirectory: configDirectory, account: account, keyring: keyring,
                fileChosen: chosenEnvironment != nil || configDirectory != nil
            )
        } catch {
            StandardStreams.error(CallReport.describe(error) + "\n")
            throw CallExitCode.configuration
        }
    }

    /// The account a keyring token command needs.
    func requiredAccount() throws -> String {
        guard let account else { throw ValidationError("--account is needed: \(service) does not use OAuth 2 in the \(environment) configuration") }
        return account
    }
}

/// Exit codes the keyring commands use.
enum ExitCodes {
    /// `status` found no credential.
    static let notFound = ExitCode(1)
    /// The keyring could not be used; the message says why.
    static let keyringFailed = ExitCode(3)
}

/// Runs `body`, turning a ``KeyringError`` into one line on standard error and exit code 3.
func reportingKeyringErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as KeyringError {
        StandardStreams.error("resourceful: \(error)\n")
        throw ExitCodes.keyringFailed
    }
}

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to a service: an OAuth 2 device login, or a token stored in the keyring for a service and account.",
        discussion: "When the service's configuration names the oauth2 storage, the address and code to approve the login are printed, and the refresh token the server sends is stored once it is approved (in the keyring, unless authentication.oauth2.refreshTokenStorage names another storage). Otherwise the token is read from standard input when it is not a terminal, or you are asked for it, without echo."
    )

    @OptionGroup var options: KeyringOptions

    @Flag(help: "For OAuth 2: log in through a browser (authorization code with PKCE, redirected to 127.0.0.1) instead of the device flow.")
    var browser = false

    func run() async throws {
        if let session = try await options.oauthSession() { return try await session.logIn(browser: browser) }
        let account = try options.requiredAccount()
        guard let token = TokenInput.read(prompt: "Token for \(options.service) (\(account)): "), !token.isEmpty else {
            throw ValidationError("no token given")
        }
        try await reportingKeyringErrors {
            try await options.keyring.store(token, service: options.service, account: account)
        }
        print("Stored a credential for \(options.service) (\(account)) in the keyring.")
    }
}

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Log out of a service: its OAuth 2 refresh token revoked and removed, or its token removed from the keyring."
    )

    @OptionGroup var options: KeyringOptions

    func run() async throws {
        if let session = try await options.oauthSession() { return try await session.logOut() }
        let account = try options.requiredAccount()
        let removed = try await reportingKeyringErrors {
            try await options.keyring.delete(service: options.service, account: account)
        }
        print(removed ? "Removed the credential for \(options.service) (\(account))." : "No credential was stored for \(options.service) (\(account)).")
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Tell whether you are logged in to a service: the OAuth 2 access token's expiry and scopes, or whether the keyring holds a token (never prints one).",
        discussion: "Exit status: 0 when a token is stored (or an OAuth 2 login is valid), 1 when none is (log in), 3 when the keyring or the authorization server cannot be used, 5 for a configuration that cannot be read."
    )

    @OptionGroup var options: KeyringOptions

    func run() async throws {
        if let session = try await options.oauthSession() { return try await session.status() }
        let account = try options.requiredAccount()
        let token = try await reportingKeyringErrors {
            try await options.keyring.lookup(service: options.service, account: account)
        }
        guard token != nil else {
            print("No credential is stored for \(options.service) (\(account)).")
            throw ExitCodes.notFound
        }
        print("A credential is stored for \(options.service) (\(account)).")
    }
}
