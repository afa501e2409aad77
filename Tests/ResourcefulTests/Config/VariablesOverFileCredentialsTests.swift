import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

/// An environment variable may be set by something other than the user who chose the
/// configuration file: one that moves where the file's credentials go (a base URL on another
/// origin, a proxy) or lowers the TLS trust they are sent over takes none of them.
@Suite struct VariablesOverFileCredentialsTests {
    /// A folder holding `x.json` with `json`.
    static func folder(_ json: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("variables-over-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        return folder
    }

    /// A file whose credential comes from the environment storage, with `extra` members.
    static func credentialed(_ extra: String = "", base: String = "https://api.example/v1") -> String {
        #"{"baseURL": "\#(base)", "service": "s", "authentication": {"storages": ["environment"]}\#(extra.isEmpty ? "" : ", " + extra)}"#
    }

    /// The error loading `folder` with `variables` throws, or `nil` when it loads.
    static func refusal(_ folder: URL, _ variables: [String: String], service: String? = nil) async -> APIConfigError? {
        do {
            _ = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: variables, service: service)
            return nil
        } catch {
            #expect(error.kind == .invalidConfiguration)
            #expect(!"\(error)".contains("SECRET"), "no value in the error: \(error)")
            return error.underlying as? APIConfigError
        }
    }

    static let lowering: [(variable: String, value: String, key: String)] = [
        ("RESOURCEFUL_HTTP_TLS_CA_FILE", "/srv/attacker-ca.pem", "http.tls.caFile"),
        ("RESOURCEFUL_HTTP_TLS_CA_DIRECTORY", "/srv/attacker-certs", "http.tls.caDirectory"),
        ("RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION", "true", "http.dangerouslyDisableCertificateVerification"),
    ]

    @Test func aVariableLoweringTLSTrustForTheFilesCredentialIsRefusedNamingIt() async throws {
        let folder = try Self.folder(Self.credentialed())
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T"]
        for (variable, value, key) in Self.lowering {
            let error = await Self.refusal(folder, token.merging([variable: value]) { $1 })
            #expect(error?.kind == .movedByVariable, "\(variable)")
            #expect(error?.key == key)
            #expect(error?.source == variable)
            #expect(error?.description.contains(variable) == true && error?.description.contains("authentication.storages") == true)
            #expect(error?.description.contains(value) == false, "the value is not repeated")
        }
        // Without a credential, the variable is taken.
        let plain = try Self.folder(#"{"baseURL": "https://api.example/v1", "service": "s"}"#)
        defer { try? FileManager.default.removeItem(at: plain) }
        for (variable, value, _) in Self.lowering {
            #expect(await Self.refusal(plain, [variable: value]) == nil, "\(variable)")
        }
    }

    @Test func theSameSettingInTheFileOrAVariableThatRaisesTrustIsTaken() async throws {
        let folder = try Self.folder(
            Self.credentialed(#""http": {"tls": {"caFile": "/etc/own-ca.pem", "trustSystemRoots": false, "minimumVersion": "1.3"}}"#)
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        // The file's own value again, and a stricter one, change nothing the file's credential relies on.
        let config = try await APIConfig.load(
            environment: "x", configDirectory: folder.path,
            environmentVariables: [
                "RESOURCEFUL_HTTP_TLS_CA_FILE": "/etc/own-ca.pem", "RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION": "false",
            ]
        )
        #expect(config.http.tls.caFile == "/etc/own-ca.pem")
        #expect(config.authentication.storages == [.environment])
        // The system's roots where the file trusts its own CA alone, or TLS 1.2 where it asks for 1.3: lowered.
        let roots = await Self.refusal(folder, ["RESOURCEFUL_HTTP_TLS_TRUST_SYSTEM_ROOTS": "true"])
        #expect(roots?.key == "http.tls.trustSystemRoots" && roots?.kind == .movedByVariable)
        let version = await Self.refusal(folder, ["RESOURCEFUL_HTTP_TLS_MINIMUM_VERSION": "1.2"])
        #expect(version?.key == "http.tls.minimumVersion" && version?.kind == .movedByVariable)
    }

    @Test func aServicesVariableIsRefusedByItsOwnName() async throws {
        let folder = try Self.folder(Self.credentialed(#""services": {"b": {"timeout": 5}}"#))
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await Self.refusal(folder, ["RESOURCEFUL_SERVICES_B_HTTP_TLS_CA_FILE": "/tmp/ca.pem"], service: "b")
        #expect(error?.kind == .movedByVariable)
        #expect(error?.key == "services.b.http.tls.caFile")
        #expect(error?.source == "RESOURCEFUL_SERVICES_B_HTTP_TLS_CA_FILE")
        // The top level's variable reaches the service too, and is refused the same way.
        let top = await Self.refusal(folder, ["RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION": "true"], service: "b")
        #expect(top?.kind == .movedByVariable && top?.source == "RESOURCEFUL_HTTP_DANGEROUSLY_DISABLE_CERTIFICATE_VERIFICATION")
    }

    @Test func theFilesProxyLoginGoesOnlyToTheProxyTheFileNames() async throws {
        let folder = try Self.folder(Self.credentialed(#""http": {"proxy": "http://127.0.0.1:3128", "proxyCredentialService": "corp-proxy"}"#))
        defer { try? FileManager.default.removeItem(at: folder) }
        let moved = await Self.refusal(folder, ["RESOURCEFUL_HTTP_PROXY": "http://127.0.0.1:4444"])
        #expect(moved?.kind == .movedByVariable)
        #expect(moved?.key == "http.proxy" && moved?.source == "RESOURCEFUL_HTTP_PROXY")
        #expect(moved?.description.contains("http.proxyCredentialService") == true)
        #expect(moved?.description.contains("4444") == false)
        // The file's own proxy, or none, through the variable: taken.
        #expect(await Self.refusal(folder, ["RESOURCEFUL_HTTP_PROXY": "http://127.0.0.1:3128"]) == nil)
        #expect(await Self.refusal(folder, ["RESOURCEFUL_HTTP_PROXY": "none"]) == nil)
        // A proxy login with the proxy the https_proxy and http_proxy variables name: refused.
        let environment = try Self.folder(Self.credentialed(#""http": {"proxyCredentialService": "corp-proxy"}"#))
        defer { try? FileManager.default.removeItem(at: environment) }
        let unnamed = await Self.refusal(environment, ["https_proxy": "http://127.0.0.1:4444"])
        #expect(unnamed?.key == "http.proxyCredentialService")
        #expect(unnamed?.description.contains("http.proxy") == true)
    }

    @Test func aProxyFromAVariableDoesNotSeeTheCredentialOfAPlainHTTPBaseURL() async throws {
        let folder = try Self.folder(Self.credentialed(base: "http://api.internal.example/v1"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let error = await Self.refusal(folder, ["RESOURCEFUL_HTTP_PROXY": "http://127.0.0.1:4444"])
        #expect(error?.kind == .movedByVariable && error?.key == "http.proxy")
        // https: the proxy sees a CONNECT, not the credential.
        let https = try Self.folder(Self.credentialed())
        defer { try? FileManager.default.removeItem(at: https) }
        #expect(await Self.refusal(https, ["RESOURCEFUL_HTTP_PROXY": "http://127.0.0.1:4444"]) == nil)
    }

    @Test func aBaseURLVariableOnAnotherOriginGetsNoneOfTheFilesCredentials() async throws {
        let folder = try Self.folder(
            Self.credentialed(#""baseHeaders": ["X-Api-Key: SECRET-H", "Accept-Language: fr"], "baseQueryItems": ["api_key=SECRET-Q", "tenant=acme"]"#)
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let moved = try await APIConfig.load(
            environment: "x", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_BASE_URL": "https://elsewhere.example/v1"]
        )
        #expect(moved.authentication.storages.isEmpty)
        // Every base field, as on a redirect to another origin: which of them is a credential is the file's to know.
        #expect(moved.baseHeaders.isEmpty)
        #expect(moved.baseQueryItems.isEmpty)
        #expect(moved.authentication.withheldBy?.variable == "RESOURCEFUL_BASE_URL")
        #expect(moved.authentication.withheldBy?.description.contains("authentication.storages") == true)
        // The file's own origin, another path: everything kept.
        let same = try await APIConfig.load(
            environment: "x", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_BASE_URL": "https://api.example/v2"]
        )
        #expect(same.authentication.storages == [.environment])
        #expect(same.baseHeaders["X-Api-Key"] == "SECRET-H")
        #expect(same.authentication.withheldBy == nil)
    }

    @Test func aServicesBaseURLVariableOnAnotherOriginGetsNoneOfItsCredentials() async throws {
        let folder = try Self.folder(
            Self.credentialed(#""services": {"b": {"baseURL": "https://b.example/v1", "service": "b-api", "baseHeaders": [], "baseQueryItems": []}}"#)
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let moved = try await APIConfig.load(
            environment: "x", configDirectory: folder.path,
            environmentVariables: ["RESOURCEFUL_SERVICES_B_BASE_URL": "https://elsewhere.example/v1"], service: "b"
        )
        #expect(moved.service == "b-api")
        #expect(moved.authentication.storages.isEmpty)
        #expect(moved.authentication.withheldBy?.variable == "RESOURCEFUL_SERVICES_B_BASE_URL")
        // The top level's variable does not move a service with a base URL of its own.
        let own = try await APIConfig.load(
            environment: "x", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_BASE_URL": "https://elsewhere.example/v1"], service: "b"
        )
        #expect(own.authentication.storages == [.environment] && own.baseURL.host == "b.example")
    }

    /// Through the live dependencies against a real server: the variable's origin gets the call,
    /// without the file's credential.
    @Test func theMovedCallCarriesNoCredential() async throws {
        try await MockServer.withRunning { server in
            server.stub(.get, "/v1/x", .status(.noContent))
            let folder = try Self.folder(Self.credentialed(#""baseHeaders": ["X-Api-Key: SECRET-H"]"#, base: "https://api.example/v1"))
            defer { try? FileManager.default.removeItem(at: folder) }
            let dependencies = try await APIDependencies.live(
                environment: "x", configDirectory: folder.path,
                environmentVariables: ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T", "RESOURCEFUL_BASE_URL": server.baseURL.absoluteString + "/v1"]
            )
            let api = API(dependencies: dependencies)
            _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            try await dependencies.transport.shutdown()
            #expect(server.requests.count == 1)
            #expect(server.requests.first?.headerFields[.authorization] == nil)
            #expect(server.requests.first?.headerFields[HTTPField.Name("X-Api-Key")!] == nil)
        }
    }
}

/// A variable adds names to the file's lists of masked and redirect-sensitive names, and never
/// takes one off.
@Suite struct VariablesKeepTheFilesMaskedNamesTests {
    @Test func aVariableAddsToTheFilesMaskedNames() async throws {
        let folder = try VariablesOverFileCredentialsTests.folder(
            #"{"baseURL": "https://api.example/v1", "service": "s", "logging": {"maskedHeaders": ["X-Corp-Sig"], "maskedBodyKeys": ["pin"]}, "http": {"redirects": {"sensitiveHeaders": ["X-Corp-Sig"]}}}"#
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try await APIConfig.load(
            environment: "x", configDirectory: folder.path,
            environmentVariables: [
                "RESOURCEFUL_LOGGING_MASKED_HEADERS": "X-Other", "RESOURCEFUL_LOGGING_MASKED_BODY_KEYS": "otp",
                "RESOURCEFUL_HTTP_REDIRECTS_SENSITIVE_HEADERS": "X-Other",
            ]
        )
        #expect(config.logging.maskedHeaders == ["X-Other", "X-Corp-Sig"])
        #expect(config.logging.maskedBodyKeys == ["otp", "pin"])
        #expect(config.http.sensitiveRedirectHeaders == ["X-Other", "X-Corp-Sig"])
        #expect(Redactor(settings: config.redaction).masksHeader("X-Corp-Sig"))
    }
}

extension VariablesOverFileCredentialsTests {
    /// A base URL moved to another origin carries none of the file's credentials, so the trust
    /// it is reached with guards nothing of the file's: the variable's CA is taken there.
    @Test func aMovedBaseURLWithItsOwnTrustCarriesNothingOfTheFiles() async throws {
        let folder = try Self.folder(Self.credentialed())
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try await APIConfig.load(
            environment: "x", configDirectory: folder.path,
            environmentVariables: ["RESOURCEFUL_BASE_URL": "https://elsewhere.example/v1", "RESOURCEFUL_HTTP_TLS_CA_FILE": "/srv/other-ca.pem"]
        )
        #expect(config.authentication.storages.isEmpty)
        #expect(config.http.tls.caFile == "/srv/other-ca.pem")
    }
}
