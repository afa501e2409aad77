import Foundation
import HTTPTypes
import ProcessTestSupport
import ResourcefulTesting
import Testing

@testable import resourceful

/// Where the tool's credentials may go: a base URL from a variable is compared with the file's
/// own as `--base-url` is, another origin gets none of the file's credentials nor its TLS trust,
/// and a configuration nobody chose cannot lower TLS trust for a call that carries a credential.
/// Run through the tool's binary against two MockServers (two origins: two ports).
@Suite struct CallCredentialPlacementTests {
    /// A folder holding `test.json` with `json`.
    static func configDirectory(_ json: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("placement-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: directory.appendingPathComponent("test.json"))
        return directory.path
    }

    static let apiKey = HTTPField.Name("X-Api-Key")!

    @Test func theBaseURLVariableOnAnotherOriginGetsNoneOfTheFilesCredentials() async throws {
        try await MockServer.withRunning { named in
            try await MockServer.withRunning { other in
                other.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#), .json(raw: #"{"ok": true}"#))
                named.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                let origin = named.baseURL.absoluteString
                let directory = try Self.configDirectory(
                    #"{"baseURL": "\#(origin)/v1", "service": "cli-test", "authentication": {"storages": ["environment"]}, "#
                        + #""baseHeaders": ["X-Api-Key: file-key-5a1"], "baseQueryItems": ["tenant=acme", "api_key=file-qkey-9"], "#
                        + #""services": {"billing": {"baseURL": "\#(origin)/v2", "service": "billing-api", "baseHeaders": ["X-Api-Key: billing-key-2b"], "baseQueryItems": []}}}"#
                )
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let tokens = ["RESOURCEFUL_AUTH_CLI_TEST_TOKEN": "file-token-7c2", "RESOURCEFUL_AUTH_BILLING_API_TOKEN": "billing-token-3e8"]
                let moved = try await Command.run(
                    resourcefulTool, ["show", "me", "--env", "test", "--config-directory", directory],
                    environment: tokens.merging(["RESOURCEFUL_BASE_URL": "\(other.baseURL.absoluteString)/v1"]) { $1 }
                )
                #expect(moved.status == 0, "\(moved.output)")
                #expect(moved.output.contains("RESOURCEFUL_BASE_URL names another origin"), "the person is told: \(moved.output)")
                // The picked service's own variable moves it the same way.
                let service = try await Command.run(
                    resourcefulTool, ["show", "me", "--env", "test", "--service", "billing", "--config-directory", directory],
                    environment: tokens.merging(["RESOURCEFUL_SERVICES_BILLING_BASE_URL": "\(other.baseURL.absoluteString)/v1"]) { $1 }
                )
                #expect(service.status == 0, "\(service.output)")
                for output in [moved.output, service.output] {
                    #expect(!output.contains("token-") && !output.contains("-key-") && !output.contains("file-qkey"))
                }
                #expect(other.requests.map { $0.headerFields[.authorization] } == [nil, nil])
                #expect(other.requests.map { $0.headerFields[Self.apiKey] } == [nil, nil])
                // No base query item goes there, masked or not.
                #expect(other.requests.map(\.path) == ["/v1/me", "/v1/me"], "\(other.requests.map(\.path))")
                // The file's own origin, through the variable, still gets them.
                let same = try await Command.run(
                    resourcefulTool, ["show", "me", "--env", "test", "--config-directory", directory],
                    environment: tokens.merging(["RESOURCEFUL_BASE_URL": "\(origin)/v1"]) { $1 }
                )
                #expect(same.status == 0, "\(same.output)")
                #expect(named.requests.map { $0.headerFields[.authorization] } == ["Bearer file-token-7c2"])
                #expect(named.requests.map { $0.headerFields[Self.apiKey] } == ["file-key-5a1"])
            }
        }
    }

    /// With `--base-url` and the variable both set, the flag is compared with the file's own base
    /// URL, never with the one the variable put in its place: the same other origin in both gets
    /// none of the file's credentials, and the file's own origin in the flag keeps them.
    @Test func theFlagIsComparedWithTheFilesBaseURLWhateverTheVariableSays() async throws {
        try await MockServer.withRunning { named in
            try await MockServer.withRunning { other in
                other.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                named.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
                let origin = named.baseURL.absoluteString
                let directory = try Self.configDirectory(
                    #"{"baseURL": "\#(origin)/v1", "service": "cli-test", "authentication": {"storages": ["environment"]}, "#
                        + #""baseHeaders": ["X-Api-Key: file-key-5a1"], "baseQueryItems": ["api_key=file-qkey-9"]}"#
                )
                defer { try? FileManager.default.removeItem(atPath: directory) }
                let token = ["RESOURCEFUL_AUTH_CLI_TEST_TOKEN": "file-token-7c2"]
                let both = try await Command.run(
                    resourcefulTool, ["show", "me", "--env", "test", "--config-directory", directory, "--base-url", "\(other.baseURL.absoluteString)/v1"],
                    environment: token.merging(["RESOURCEFUL_BASE_URL": "\(other.baseURL.absoluteString)/v1"]) { $1 }
                )
                #expect(both.status == 0, "\(both.output)")
                #expect(other.requests.map { $0.headerFields[.authorization] } == [nil])
                #expect(other.requests.map { $0.headerFields[Self.apiKey] } == [nil])
                #expect(other.requests.map(\.path) == ["/v1/me"])
                let own = try await Command.run(
                    resourcefulTool, ["show", "me", "--env", "test", "--config-directory", directory, "--base-url", "\(origin)/v1"],
                    environment: token.merging(["RESOURCEFUL_BASE_URL": "\(other.baseURL.absoluteString)/v1"]) { $1 }
                )
                #expect(own.status == 0, "\(own.output)")
                #expect(named.requests.map { $0.headerFields[.authorization] } == ["Bearer file-token-7c2"])
            }
        }
    }

    @Test func theFilesProxyCredentialStillReachesItsProxyOnAnotherOrigin() async throws {
        try await MockServer.withRunning { other in
            other.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            // Nothing listens on port 9: the loopback target goes direct, as it always does.
            let directory = try Self.configDirectory(
                #"{"baseURL": "https://api.example.com/v1", "service": "cli-test", "authentication": {"storages": ["environment"]}, "#
                    + #""http": {"proxy": "http://127.0.0.1:9", "proxyCredentialService": "corp-proxy"}}"#
            )
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let result = try await Command.run(
                resourcefulTool, ["show", "me", "--env", "test", "--config-directory", directory, "--base-url", "\(other.baseURL.absoluteString)/v1"],
                environment: ["RESOURCEFUL_AUTH_CORP_PROXY_TOKEN": "proxy-token-4b6", "RESOURCEFUL_AUTH_CLI_TEST_TOKEN": "file-token-8d1"]
            )
            #expect(result.status == 0, "\(result.output)")
            #expect(!result.output.contains("token-"))
            #expect(other.requests.map { $0.headerFields[.authorization] } == [nil])
            #expect(other.requests.map { $0.headerFields[.proxyAuthorization] } == [nil])
        }
    }

    @Test func anotherOriginDoesNotInheritTheFilesTLSTrust() async throws {
        try await MockServer.withRunning { other in
            other.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let directory = try Self.configDirectory(
                #"{"baseURL": "https://api.example.com/v1", "service": "cli-test", "#
                    + #""http": {"dangerouslyDisableCertificateVerification": true, "tls": {"trustSystemRoots": false, "caDirectory": "/nonexistent-ca-dir"}}}"#
            )
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let result = try await Command.run(
                resourcefulTool, ["show", "me", "--env", "test", "--config-directory", directory, "--base-url", "\(other.baseURL.absoluteString)/v1"]
            )
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("TLS trust settings"), "the person is told: \(result.output)")
            #expect(other.requests.count == 1)
        }
    }

    @Test func aProxyAuthorizationHeaderIsRefused() async throws {
        try await MockServer.withRunning { server in
            let result = try await Command.run(
                resourcefulTool, ["show", "me", "--base-url", "\(server.baseURL.absoluteString)/v1", "-H", "Proxy-Authorization: Basic typed-proxy-1f0"]
            )
            #expect(result.status == 64, "\(result.output)")
            #expect(result.output.contains("http.proxyCredentialService"), "\(result.output)")
            #expect(!result.output.contains("typed-proxy"))
            #expect(server.requests.isEmpty)
        }
    }

    @Test func variablesOrAnUnchosenFolderCannotLowerTrustForACredential() async throws {
        let folder = try CallWithoutConfigurationTests.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let base = "\(server.baseURL.absoluteString)/v1"
            let lowering: [(variable: String, value: String, setting: String)] = [
                ("RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION", "true", "http.dangerouslyDisableCertificateVerification"),
                ("RESOURCEFUL_HTTP_TLS_CA_DIRECTORY", "/tmp", "http.tls.caDirectory"),
                ("RESOURCEFUL_HTTP_TLS_TRUST_SYSTEM_ROOTS", "false", "http.tls.trustSystemRoots"),
            ]
            for (variable, value, setting) in lowering {
                let result = try await CallWithoutConfigurationTests.run(
                    in: folder, ["show", "me", "-H", "Authorization: token typed-secret-2a7"],
                    environment: ["RESOURCEFUL_BASE_URL": base, variable: value]
                )
                #expect(result.status == 5, "\(variable): \(result.output)")
                #expect(result.output.contains(setting) && result.output.contains("--config-directory"), "\(result.output)")
                #expect(!result.output.contains("typed-secret"))
            }
            // Without a credential, the call is made.
            let plain = try await CallWithoutConfigurationTests.run(
                in: folder, ["show", "me"], environment: ["RESOURCEFUL_BASE_URL": base, "RESOURCEFUL_HTTP_TLS_TRUST_SYSTEM_ROOTS": "false"]
            )
            #expect(plain.status == 0, "\(plain.output)")
            #expect(server.requests.count == 1)
        }
        // A cloned repository's Configs lowering trust, with a relative path: refused as well.
        try await MockServer.withRunning { server in
            let directory = try UnchosenConfigurationTests.workingDirectory(server, authentication: #"{"storages": []}, "http": {"dangerouslyDisableCertificateVerification": true}"#)
            defer { try? FileManager.default.removeItem(at: directory) }
            let result = try await UnchosenConfigurationTests.run(in: directory, ["show", "me", "--env", "x", "-H", "Authorization: token typed-secret-2a7"])
            #expect(result.status == 5, "\(result.output)")
            #expect(result.output.contains("http.dangerouslyDisableCertificateVerification"), "\(result.output)")
            #expect(server.requests.isEmpty)
        }
    }

    @Test func aBaseURLOrAWholeURLIgnoresAnUnchosenFolder() async throws {
        try await MockServer.withRunning { named in
            try await MockServer.withRunning { other in
                other.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#), .json(raw: #"{"ok": true}"#))
                named.stub(.get, "/v2/me", .json(raw: #"{"ok": true}"#))
                let directory = try UnchosenConfigurationTests.workingDirectory(
                    named, authentication: #"{"storages": ["environment"]}, "baseHeaders": ["X-Api-Key: cloned-key-0c4"]"#
                )
                defer { try? FileManager.default.removeItem(at: directory) }
                let token = ["RESOURCEFUL_AUTH_CLONED_TOKEN": "victim-token-6e0"]
                let whole = try await UnchosenConfigurationTests.run(in: directory, ["show", "\(other.baseURL.absoluteString)/v1/me", "--env", "x"], environment: token)
                #expect(whole.status == 0, "\(whole.output)")
                let flag = try await UnchosenConfigurationTests.run(
                    in: directory, ["show", "me", "--env", "x", "--base-url", "\(other.baseURL.absoluteString)/v1"], environment: token
                )
                #expect(flag.status == 0, "\(flag.output)")
                // The folder's own origin: made as if there were no file.
                let same = try await UnchosenConfigurationTests.run(
                    in: directory, ["show", "me", "--env", "x", "--base-url", "\(named.baseURL.absoluteString)/v2"], environment: token
                )
                #expect(same.status == 0, "\(same.output)")
                let requests = other.requests + named.requests
                #expect(requests.map { $0.headerFields[.authorization] } == [nil, nil, nil])
                #expect(requests.map { $0.headerFields[Self.apiKey] } == [nil, nil, nil])
                for output in [whole.output, flag.output, same.output] { #expect(!output.contains("victim-token")) }
            }
        }
    }

    @Test func aStoredCredentialFoundByHostAloneNeedsHTTPS() async throws {
        let folder = try CallWithoutConfigurationTests.emptyFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await CallWithoutConfigurationTests.run(
            in: folder, ["show", "user", "--account", "me"], environment: ["RESOURCEFUL_BASE_URL": "http://api.github.com:8080"]
        )
        #expect(result.status == 5, "\(result.output)")
        #expect(result.output.contains("plain http") && result.output.contains("https base URL"), "\(result.output)")
        // Another origin than a file's: the same rule.
        let directory = try Self.configDirectory(#"{"baseURL": "https://api.example.com/v1", "service": "cli-test"}"#)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let moved = try await Command.run(
            resourcefulTool, ["show", "user", "--account", "me", "--env", "test", "--config-directory", directory, "--base-url", "http://api.example.com:8080"]
        )
        #expect(moved.status == 5, "\(moved.output)")
        #expect(moved.output.contains("plain http"), "\(moved.output)")
        // This machine over plain http is allowed: nothing leaves it.
        #expect(CallTarget.isLoopback("127.0.0.2") && CallTarget.isLoopback("[::1]") && CallTarget.isLoopback("LOCALHOST"))
        #expect(!CallTarget.isLoopback("127.0.0.1.example.com") && !CallTarget.isLoopback("128.0.0.1"))
    }

    @Test func anAccountOnAnotherOriginNamesThatHostsItem() async throws {
        guard ProcessInfo.processInfo.environment["RESOURCEFUL_PRIVATE_KEYRING"] == "1" else {
            Issue.record("run through `make test`, which provides a private keyring")
            return
        }
        try await MockServer.withRunning { other in
            other.stub(.get, "/v1/me", .json(raw: #"{"ok": true}"#))
            let account = "placement-\(UUID().uuidString)"
            let host = try #require(other.baseURL.host)
            for (service, token) in [(host, "host-token-5f2"), ("cli-test", "file-token-9a3")] {
                let login = try await Command.run(
                    resourcefulTool, ["login", "--service", service, "--account", account], input: "\(token)\n", keepSessionBus: true
                )
                #expect(login.status == 0, "\(login.output)")
            }
            let directory = try Self.configDirectory(#"{"baseURL": "https://api.example.com/v1", "service": "cli-test", "authentication": {"storages": ["keyring"]}}"#)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let result = try await Command.run(
                resourcefulTool,
                ["show", "me", "--account", account, "--env", "test", "--config-directory", directory, "--base-url", "\(other.baseURL.absoluteString)/v1"],
                keepSessionBus: true
            )
            #expect(result.status == 0, "\(result.output)")
            #expect(other.requests.map { $0.headerFields[.authorization] } == ["Bearer host-token-5f2"])
            #expect(!result.output.contains("token-"))
            for service in [host, "cli-test"] {
                _ = try await Command.run(resourcefulTool, ["logout", "--service", service, "--account", account], keepSessionBus: true)
            }
        }
    }
}
