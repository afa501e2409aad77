import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

/// A credential the command adds after the configuration is loaded (`--account`, a header field
/// named like a credential) meets the checks the file's own credentials meet: a variable that
/// lowers the TLS trust it is sent over, or a proxy a variable names over plain http, is refused
/// before anything is sent.
@Suite struct CommandCredentialVariablesTests {
    /// A chosen folder holding `x.json` with `base` and no credential of its own.
    static func folder(base: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("command-credential-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let json = #"{"baseURL": "\#(base)", "service": "command-api"}"#
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        return folder
    }

    /// The tool with `arguments` on `folder`'s `x` configuration, with `environment` and none of
    /// the variables these tests set unless `environment` does.
    static func run(_ folder: URL, _ arguments: [String], environment: [String: String]) async throws -> Command.Result {
        let names = [
            "SSL_CERT_FILE", "SSL_CERT_DIR", "RESOURCEFUL_HTTP_TLS_CA_FILE", "RESOURCEFUL_HTTP_PROXY", "http_proxy", "https_proxy",
            "HTTPS_PROXY", "no_proxy", "NO_PROXY", "RESOURCEFUL_BASE_URL", "RESOURCEFUL_CONFIG_DIR",
        ]
        let unset = names.filter { environment[$0] == nil }.flatMap { ["-u", $0] }
        return try await Command.run(
            "/usr/bin/env", unset + [resourcefulTool] + arguments + ["--env", "x", "--config-directory", folder.path],
            environment: environment
        )
    }

    static let credentials: [[String]] = [["--account", "ada"], ["-H", "Authorization: Bearer typed-token-7c1"]]

    @Test func aVariableLoweringTLSTrustIsRefusedForTheCommandsCredential() async throws {
        try await TestPKI.withScratchCA { pki in
            try await MockServer.withRunning { server in
                server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                let folder = try Self.folder(base: "\(server.baseURL.absoluteString)/v1")
                defer { try? FileManager.default.removeItem(at: folder) }
                let variables: [(String, String)] = [
                    ("RESOURCEFUL_HTTP_TLS_CA_FILE", pki.caFile), ("SSL_CERT_FILE", pki.caFile), ("SSL_CERT_DIR", pki.directory.path),
                ]
                for (variable, value) in variables {
                    for credential in Self.credentials {
                        let refused = try await Self.run(folder, ["show", "me"] + credential, environment: [variable: value])
                        #expect(refused.status == 5, "\(variable) \(credential): \(refused.output)")
                        #expect(refused.output.contains(variable), "\(refused.output)")
                        #expect(!refused.output.contains("typed-token") && !refused.output.contains(value))
                    }
                }
                #expect(server.requests.isEmpty, "a request carrying the credential was sent")
                // Without a credential, the variables are taken; without the variables, the credential goes.
                let anonymous = try await Self.run(folder, ["show", "me"], environment: ["SSL_CERT_FILE": pki.caFile])
                #expect(anonymous.status == 0, "\(anonymous.output)")
                let typed = try await Self.run(folder, ["show", "me"] + Self.credentials[1], environment: [:])
                #expect(typed.status == 0, "\(typed.output)")
                #expect(server.requests.map { $0.headerFields[.authorization] } == [nil, "Bearer typed-token-7c1"])
            }
        }
    }

    @Test func aProxyAVariableNamesGetsNoCredentialOverPlainHTTP() async throws {
        try await MockServer.withRunning { proxy in
            let folder = try Self.folder(base: "http://api.example.invalid/v1")
            defer { try? FileManager.default.removeItem(at: folder) }
            for variable in ["RESOURCEFUL_HTTP_PROXY", "http_proxy"] {
                for credential in Self.credentials {
                    let refused = try await Self.run(folder, ["show", "me"] + credential, environment: [variable: proxy.baseURL.absoluteString])
                    #expect(refused.status == 5, "\(variable) \(credential): \(refused.output)")
                    #expect(refused.output.contains(variable), "\(refused.output)")
                    #expect(!refused.output.contains("typed-token"))
                }
            }
            #expect(proxy.requests.isEmpty, "the proxy saw a request")
        }
    }
}
