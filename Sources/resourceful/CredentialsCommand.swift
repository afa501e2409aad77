import ArgumentParser
import Foundation
import Logging
import Resourceful
import ResourcefulKeyring

/// Tells where the configured storages find the service's credential, one line per storage,
/// never printing a credential: for finding out why a deployment does not authenticate.
struct CredentialsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credentials",
        abstract: "Tell which configured credential storage holds the service's credential (never prints it).",
        discussion: """
            Asks each storage that the configuration's authentication.storages lists, in order, and \
            prints what each answered: found, none, or why it failed (a missing or unreadable file, \
            an empty variable). With --service, the storages and credential service of that entry \
            under `services`, as a call with the same --service asks them. The exit status is what \
            a call would meet, asking in order: 0 when a credential is found, 1 when none is, 3 when \
            a storage that is not optional fails first, 5 when the configuration cannot be loaded \
            or does not describe the service (as for the verbs).
            """
    )

    @Option(name: .customLong("env"), help: "The configuration to load from the config directory.")
    var environment = "development"

    @Option(help: "Where the configuration files are (default: $RESOURCEFUL_CONFIG_DIR, else ./Configs).")
    var configDirectory: String?

    @Option(help: "One of the upstream services the configuration describes under `services`.")
    var service: String?

    @Option(help: "The keyring account to ask (the keyring is asked first when the configuration does not list it).")
    var account: String?

    func run() async throws {
        var config: APIConfig
        do {
            config = try await APIConfig.load(environment: environment, configDirectory: configDirectory, service: service)
        } catch {
            printError(CallReport.describe(error))
            throw CallExitCode.configuration
        }
        CommandCredentials.configure(&config, account: account)
        let transport = AsyncHTTPClientTransport(settings: config.http)
        let outcome: Int32
        do {
            outcome = try await ask(config: config, transport: transport)
        } catch {
            try? await transport.shutdown()
            throw error
        }
        try? await transport.shutdown()
        if outcome != 0 { throw ExitCode(outcome) }
    }

    /// Asks each storage of the chain `config` describes, printing what it answers; the exit code.
    private func ask(config: APIConfig, transport: any HTTPTransport) async throws -> Int32 {
        let storage: any AuthenticationStorage
        do {
            storage = try await CommandCredentials.storage(for: config, account: account, transport: transport, logger: Logger(label: "resourceful"))
        } catch {
            printError(CallReport.describe(error))
            throw CallExitCode.configuration
        }
        guard case let chain as ChainedAuthenticationStorage = storage else {
            print("No credential storage is configured (authentication.storages is empty).")
            throw ExitCode(1)
        }
        // What a call would meet: the first credential found, or the first required failure.
        var outcome: Int32?
        for link in chain.links {
            let optional = link.isOptional ? " (optional)" : ""
            do {
                if let credential = try await link.storage.credential(for: config.service) {
                    let expiry = credential.expiresAt.map { ", valid until \($0.formatted(.iso8601))" } ?? ""
                    print("\(link.name)\(optional): a credential for \(config.service)\(expiry)")
                    outcome = outcome ?? 0
                } else {
                    print("\(link.name)\(optional): none for \(config.service)")
                }
            } catch {
                print("\(link.name)\(optional): \(CallReport.describe(error).dropFirst("resourceful: ".count))")
                if !link.isOptional { outcome = outcome ?? 3 }
            }
        }
        return outcome ?? 1
    }

    private func printError(_ text: String) {
        StandardStreams.error(text + "\n")
    }
}
