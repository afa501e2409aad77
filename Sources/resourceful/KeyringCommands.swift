import ArgumentParser
import Foundation
import ResourcefulKeyring

/// Options shared by the commands that use the keyring.
struct KeyringOptions: ParsableArguments {
    @Option(help: "The service the credential is for (the `service` key of the configuration).")
    var service: String

    @Option(help: "The account the credential belongs to.")
    var account: String

    @Option(help: "Seconds a keyring call may take.")
    var keyringTimeout: Double = 5

    var keyring: Keyring {
        Keyring(timeout: .milliseconds(Int64(keyringTimeout * 1000)))
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
        FileHandle.standardError.write(Data("resourceful: \(error)\n".utf8))
        throw ExitCodes.keyringFailed
    }
}

struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Store a token in the keyring for a service and account.",
        discussion: "The token is read from standard input when it is not a terminal; otherwise you are asked for it, without echo."
    )

    @OptionGroup var options: KeyringOptions

    func run() async throws {
        guard let token = TokenInput.read(prompt: "Token for \(options.service) (\(options.account)): "), !token.isEmpty else {
            throw ValidationError("no token given")
        }
        try await reportingKeyringErrors {
            try await options.keyring.store(token, service: options.service, account: options.account)
        }
        print("Stored a credential for \(options.service) (\(options.account)) in the keyring.")
    }
}

struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Remove a service and account's token from the keyring."
    )

    @OptionGroup var options: KeyringOptions

    func run() async throws {
        let removed = try await reportingKeyringErrors {
            try await options.keyring.delete(service: options.service, account: options.account)
        }
        print(removed ? "Removed the credential for \(options.service) (\(options.account))." : "No credential was stored for \(options.service) (\(options.account)).")
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Tell whether the keyring holds a token for a service and account (never prints it).",
        discussion: "Exit status: 0 when a token is stored, 1 when none is, 3 when the keyring cannot be used."
    )

    @OptionGroup var options: KeyringOptions

    func run() async throws {
        let token = try await reportingKeyringErrors {
            try await options.keyring.lookup(service: options.service, account: options.account)
        }
        guard token != nil else {
            print("No credential is stored for \(options.service) (\(options.account)).")
            throw ExitCodes.notFound
        }
        print("A credential is stored for \(options.service) (\(options.account)).")
    }
}
