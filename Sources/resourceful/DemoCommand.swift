import ArgumentParser
import Foundation
import HTTPTypes
import Logging
import Resourceful
import ResourcefulKeyring
import ResourcefulTesting

/// Runs the five verbs against a sample "users" resource served on loopback.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Serve a sample users resource on 127.0.0.1 and call it with each verb."
    )

    @Option(name: .customLong("env"), help: "The configuration to load from the config directory (default: development, or a built-in one when there is none).")
    var environment: String?

    @Option(help: "Where the configuration files are (default: $RESOURCEFUL_CONFIG_DIR, else ./Configs).")
    var configDirectory: String?

    func run() async throws {
        var config: APIConfig
        do {
            config = try await configuration()
        } catch {
            CallReport.report(setUp: error)
        }
        let level = config.logging.level
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        let token = "demo-\(UUID().uuidString)"
        let credentials = await DemoCredentials.make(token: token, service: config.service)
        let server = try await DemoServer.start(requiring: "Bearer \(token)")
        config.baseURL = server.baseURL.appendingPathComponent("v1")
        // The client the configuration's `http` keys describe, as every verb command builds it.
        let transport: any HTTPTransport
        do {
            transport = try await APIDependencies.transport(for: config, storage: credentials.storage, environment: nil)
        } catch {
            try? await credentials.remove()
            try? await server.shutdown()
            throw error
        }
        let api = API(dependencies: APIDependencies(apiConfig: config, authenticationStorage: credentials.storage, transport: transport))
        print("Serving a sample users resource at \(config.baseURL.absoluteString); log lines below are redacted.\n")
        do {
            try await runVerbs(api)
            try await credentials.remove()
            try await api.shutdown()
            try await server.shutdown()
        } catch {
            try? await credentials.remove()
            try? await api.shutdown()
            try? await server.shutdown()
            throw error
        }
    }

    /// The configuration named, else `development` from the folder, else (run outside a
    /// checkout, with nothing chosen) a built-in one: the demo serves its own base URL.
    private func configuration() async throws -> APIConfig {
        let chosen = environment != nil || configDirectory != nil || ProcessInfo.processInfo.environment["RESOURCEFUL_CONFIG_DIR"] != nil
        let file = URL(fileURLWithPath: "Configs/development.json", isDirectory: false)
        // Replaced by the demo server's own address before any call.
        if !chosen, !FileManager.default.fileExists(atPath: file.path), let placeholder = URL(string: "http://127.0.0.1/v1") {
            return APIConfig(baseURL: placeholder, service: "demo")
        }
        return try await APIConfig.load(environment: environment ?? "development", configDirectory: configDirectory)
    }

    private func runVerbs(_ api: API) async throws {
        let listed = try await api.call(ListUsers(parameters: .init(nameContains: nil, limit: 10)))
        try show("index users", listed)
        let shown = try await api.call(ShowUser(id: 1))
        try show("show users/1", shown)
        let created = try await api.call(
            CreateUser(parameters: .init(name: "Katherine Johnson", email: "katherine@example.com", password: "s3cret-demo"))
        )
        try show("create users", created)
        let renamed = try await api.call(RenameUser(id: created.id, name: "Katherine G. Johnson"))
        try show("update users/\(created.id) (PATCH)", renamed)
        let deleted = try await api.response(DeleteUser(id: created.id))
        print("== delete users/\(created.id) → \(deleted.status.code)\n")
        do {
            _ = try await api.call(ShowUser(id: created.id))
        } catch {
            print("== show users/\(created.id) after delete → \(CallReport.describe(error).replacingOccurrences(of: "resourceful: ", with: ""))\n")
        }
    }

    private func show(_ title: String, _ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Printed as the verbs print JSON (`"key": value`).
        let bytes = Array(try encoder.encode(value))
        print("== \(title)\n\(JSONFormatter.formatted(bytes) ?? String(decoding: bytes, as: UTF8.self))\n")
    }
}
