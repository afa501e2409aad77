import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

/// A service under `services.<name>` whose base URL is another server than the top level's
/// inherits no credential: not the top level's login (its `service` key), nor its credential
/// headers, secret query items, client certificate or proxy login. One on the top level's origin
/// inherits everything.
@Suite struct AnotherServerCredentialsTests {
    /// A folder holding `x.json`: the reviewer's top level (`myapi` on `top`, credentials from
    /// the environment) with `extra` members, and `services`.
    static func folder(
        top: String = "http://127.0.0.1:18401/v1", authentication: String = #"{"storages": ["environment"]}"#, extra: String = "", services: String
    ) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("other-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let json = """
            {"baseURL": "\(top)", "service": "myapi", "authentication": \(authentication), \(extra)
             "services": {\(services)}}
            """
        try Data(json.utf8).write(to: folder.appendingPathComponent("x.json"))
        return folder
    }

    static func refusal(_ folder: URL, service: String, variables: [String: String] = [:]) async -> APIConfigError? {
        do {
            _ = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: variables, service: service)
            return nil
        } catch {
            #expect(error.kind == .invalidConfiguration)
            #expect(!"\(error)".contains("SECRET"))
            return error.underlying as? APIConfigError
        }
    }

    @Test func aServiceOnAnotherServerDoesNotInheritTheTopLevelsLogin() async throws {
        let folder = try Self.folder(services: #""other": {"baseURL": "http://127.0.0.1:18402/v2"}, "same": {"timeout": 5}, "path": {"baseURL": "http://127.0.0.1:18401/v3"}, "mine": {"baseURL": "http://127.0.0.1:18402/v2", "service": "myapi"}"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let variables = ["RESOURCEFUL_AUTH_MYAPI_TOKEN": "SECRET-S"]
        let other = await Self.refusal(folder, service: "other", variables: variables)
        #expect(other?.key == "services.other.service")
        #expect(other?.kind == .missingKey)
        #expect(other?.description.contains("services.other.baseURL") == true)
        // Naming the top level's login again is not a login of its own.
        let mine = await Self.refusal(folder, service: "mine", variables: variables)
        #expect(mine?.key == "services.mine.service")
        #expect(mine?.kind == .invalidValue)
        // The top level's origin (a timeout of its own, another path): everything inherited.
        let same = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: variables, service: "same")
        #expect(same.service == "myapi" && same.authentication.storages == [.environment])
        let path = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: variables, service: "path")
        #expect(path.service == "myapi")
    }

    @Test func aTopLevelVariableCannotMakeAServiceLookLikeTheTopLevel() async throws {
        let folder = try Self.folder(
            extra: #""http": {"tls": {"clientCertificateFile": "/etc/top.pem", "clientKeyFile": "/etc/top.key"}, "proxy": "http://127.0.0.1:3128", "proxyCredentialService": "proxy-login"},"#,
            services: #"""
                "other": {"baseURL": "http://127.0.0.1:18402/v2"},
                "shared": {"baseURL": "http://127.0.0.1:18402/v2", "service": "myapi"},
                "proxy": {"http": {"proxy": "http://127.0.0.1:3129"}}
                """#
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        // The top level's base URL moved onto the service's server: still another server.
        let moved = await Self.refusal(folder, service: "other", variables: ["RESOURCEFUL_BASE_URL": "http://127.0.0.1:18402/"])
        #expect(moved?.key == "services.other.service", "\(String(describing: moved))")
        // The top level's service renamed: the service's own is still the file's top level's.
        let renamed = await Self.refusal(folder, service: "shared", variables: ["RESOURCEFUL_SERVICE": "zzz"])
        #expect(renamed?.key == "services.shared.service", "\(String(describing: renamed))")
        // The top level's proxy moved onto the service's: still another proxy for the login.
        let proxy = await Self.refusal(folder, service: "proxy", variables: ["RESOURCEFUL_HTTP_PROXY": "http://127.0.0.1:3129"])
        #expect(proxy?.key == "services.proxy.http.proxyCredentialService", "\(String(describing: proxy))")
    }

    @Test func aMaskingVariableCannotMakeTheTopLevelsCredentialAnOrdinaryField() async throws {
        let folder = try Self.folder(
            extra: #""baseHeaders": ["X-Corp: corp-secret"], "baseQueryItems": ["corpq=corp-secret"], "logging": {"maskedHeaders": ["X-Corp"], "maskedBodyKeys": ["corpq"]},"#,
            services: #""crm": {"baseURL": "http://127.0.0.1:18402/v2", "service": "crm-api"}, "crmq": {"baseURL": "http://127.0.0.1:18402/v2", "service": "crm-api", "baseHeaders": []}"#
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        for variables in [
            ["RESOURCEFUL_LOGGING_MASKED_HEADERS": "X-None"],
            ["RESOURCEFUL_LOGGING_MASKED_HEADERS": "X-None", "RESOURCEFUL_SERVICES_CRM_LOGGING_MASKED_HEADERS": "X-None"],
        ] {
            #expect(await Self.refusal(folder, service: "crm", variables: variables)?.key == "services.crm.baseHeaders", "\(variables)")
        }
        let query = await Self.refusal(folder, service: "crmq", variables: ["RESOURCEFUL_LOGGING_MASKED_BODY_KEYS": "none"])
        #expect(query?.key == "services.crmq.baseQueryItems", "\(String(describing: query))")
    }

    @Test func aBaseURLFromTheServicesVariableIsAnotherServerToo() async throws {
        let folder = try Self.folder(services: #""same": {"timeout": 5}"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let moved = await Self.refusal(folder, service: "same", variables: ["RESOURCEFUL_SERVICES_SAME_BASE_URL": "http://127.0.0.1:18402/v2"])
        #expect(moved?.key == "services.same.service")
        // The same host on another port, or another scheme, is another origin.
        let port = await Self.refusal(folder, service: "same", variables: ["RESOURCEFUL_SERVICES_SAME_BASE_URL": "http://127.0.0.1:18403/v1"])
        #expect(port?.key == "services.same.service")
        let scheme = await Self.refusal(folder, service: "same", variables: ["RESOURCEFUL_SERVICES_SAME_BASE_URL": "https://127.0.0.1:18401/v1"])
        #expect(scheme?.key == "services.same.service")
        // Written differently, the same origin.
        let config = try await APIConfig.load(
            environment: "x", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_SERVICES_SAME_BASE_URL": "HTTP://127.0.0.1:18401/other"], service: "same"
        )
        #expect(config.service == "myapi")
    }

    @Test func aTopLevelWithoutABaseURLSharesNoLoginBetweenServices() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("other-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"service": "myapi", "services": {"a": {"baseURL": "https://a.example"}, "b": {"baseURL": "https://b.example", "service": "b-api"}}}"#.utf8)
            .write(to: folder.appendingPathComponent("x.json"))
        #expect(await Self.refusal(folder, service: "a")?.key == "services.a.service")
        let b = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "b")
        #expect(b.service == "b-api")
    }

    @Test func credentialHeadersAndQueryItemsAreNotInherited() async throws {
        let folder = try Self.folder(
            extra: #""baseHeaders": ["X-Team: core", "X-Api-Key: SECRET-H"], "baseQueryItems": ["api-version=1", "key=SECRET-Q"], "logging": {"maskedHeaders": ["X-Tenant"]},"#,
            services: #"""
                "headers": {"baseURL": "https://b.example", "service": "b"},
                "items": {"baseURL": "https://b.example", "service": "b", "baseHeaders": []},
                "own": {"baseURL": "https://b.example", "service": "b", "baseHeaders": ["X-Team: b"], "baseQueryItems": ["api-version=2"]},
                "same": {"timeout": 3}
                """#
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        let headers = await Self.refusal(folder, service: "headers")
        #expect(headers?.key == "services.headers.baseHeaders")
        #expect(headers?.description.contains("X-Api-Key") == true)
        let items = await Self.refusal(folder, service: "items")
        #expect(items?.key == "services.items.baseQueryItems")
        let own = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "own")
        #expect(own.baseHeaders == ["X-Team": "b"] && own.baseQueryItems == ["api-version": "2"])
        let same = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "same")
        #expect(same.baseHeaders["X-Api-Key"] == "SECRET-H" && same.baseQueryItems["key"] == "SECRET-Q")

        // A header named by the configuration's masking rules, or its credential header, counts.
        let configured = try Self.folder(
            extra: #""baseHeaders": ["X-Tenant: t1"], "logging": {"maskedHeaders": ["X-Tenant"]},"#,
            services: #""b": {"baseURL": "https://b.example", "service": "b"}"#
        )
        defer { try? FileManager.default.removeItem(at: configured) }
        #expect(await Self.refusal(configured, service: "b")?.key == "services.b.baseHeaders")
        // A service's own masking rules do not make the top level's credential field ordinary.
        let unmasked = try Self.folder(
            extra: #""baseHeaders": ["X-Tenant: t1"], "logging": {"maskedHeaders": ["X-Tenant"]},"#,
            services: #""b": {"baseURL": "https://b.example", "service": "b", "logging": {"maskedHeaders": []}}"#
        )
        defer { try? FileManager.default.removeItem(at: unmasked) }
        #expect(await Self.refusal(unmasked, service: "b")?.key == "services.b.baseHeaders")
        let named = try Self.folder(
            authentication: #"{"storages": ["environment"], "headerName": "Tenant-Login"}"#, extra: #""baseHeaders": ["Tenant-Login: t1"],"#,
            services: #""b": {"baseURL": "https://b.example", "service": "b"}"#
        )
        defer { try? FileManager.default.removeItem(at: named) }
        #expect(await Self.refusal(named, service: "b")?.key == "services.b.baseHeaders")
    }

    @Test func aClientCertificateAndAProxyLoginAreNotInherited() async throws {
        let folder = try Self.folder(
            extra: #""http": {"tls": {"clientCertificateFile": "/etc/top.pem", "clientKeyFile": "/etc/top.key"}, "proxy": "http://127.0.0.1:3128", "proxyCredentialService": "proxy-login"},"#,
            services: #"""
                "tls": {"baseURL": "https://b.example", "service": "b"},
                "owntls": {"baseURL": "https://b.example", "service": "b", "http": {"tls": {"clientCertificateFile": "/etc/b.pem", "clientKeyFile": "/etc/b.key"}}},
                "proxy": {"http": {"proxy": "http://127.0.0.1:3129"}},
                "ownproxy": {"http": {"proxy": "http://127.0.0.1:3129", "proxyCredentialService": "b-proxy"}},
                "noproxy": {"http": {"proxy": "none"}}
                """#
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(await Self.refusal(folder, service: "tls")?.key == "services.tls.http.tls.clientCertificateFile")
        let owntls = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "owntls")
        #expect(owntls.http.tls.clientCertificateFile == "/etc/b.pem")
        #expect(await Self.refusal(folder, service: "proxy")?.key == "services.proxy.http.proxyCredentialService")
        let ownproxy = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "ownproxy")
        #expect(ownproxy.http.proxyCredentialService == "b-proxy")
        _ = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: [:], service: "noproxy")
        // A variable repeating the top level's value under the service's name is not the
        // service's own: the top level's identity and proxy login are still not inherited.
        let repeated = [
            "RESOURCEFUL_SERVICES_TLS_HTTP_TLS_CLIENT_CERTIFICATE_FILE": "/etc/top.pem", "RESOURCEFUL_SERVICES_TLS_HTTP_TLS_CLIENT_KEY_FILE": "/etc/top.key",
        ]
        #expect(await Self.refusal(folder, service: "tls", variables: repeated)?.key == "services.tls.http.tls.clientCertificateFile")
        let login = ["RESOURCEFUL_SERVICES_PROXY_HTTP_PROXY_CREDENTIAL_SERVICE": "proxy-login"]
        #expect(await Self.refusal(folder, service: "proxy", variables: login)?.key == "services.proxy.http.proxyCredentialService")
    }

    /// Through calls: the reviewer's configuration never sends the top level's token to the
    /// other server; a service with its own login sends its own; one on the same origin the top
    /// level's.
    @Test func callsToAnotherServerNeverCarryTheTopLevelsCredential() async throws {
        try await MockServer.withRunning { top in
            try await MockServer.withRunning { other in
                top.stub(.get, "/v1/w", .status(.noContent))
                other.stub(.get, "/v2/x", .status(.noContent))
                let folder = try Self.folder(
                    top: "\(top.baseURL.absoluteString)/v1",
                    services: """
                        "other": {"baseURL": "\(other.baseURL.absoluteString)/v2"},
                        "own": {"baseURL": "\(other.baseURL.absoluteString)/v2", "service": "other-api"},
                        "same": {"timeout": 5}
                        """
                )
                defer { try? FileManager.default.removeItem(at: folder) }
                let variables = ["RESOURCEFUL_AUTH_MYAPI_TOKEN": "SECRET-S", "RESOURCEFUL_AUTH_OTHER_API_TOKEN": "OTHER-T"]
                func dependencies(_ service: String) async throws -> APIDependencies {
                    try await APIDependencies.live(environment: "x", configDirectory: folder.path, environmentVariables: variables, service: service)
                }

                let refused = await #expect(throws: APIError.self) { _ = try await dependencies("other") }
                #expect((refused?.underlying as? APIConfigError)?.key == "services.other.service")
                #expect(other.requests.isEmpty)

                let own = try await dependencies("own")
                _ = try await API(dependencies: own).call(AdHocRequest<Empty, Empty>(.show, "x"))
                try await own.transport.shutdown()
                let same = try await dependencies("same")
                _ = try await API(dependencies: same).call(AdHocRequest<Empty, Empty>(.show, "w"))
                try await same.transport.shutdown()

                #expect(other.requests.map { $0.headerFields[.authorization] } == ["Bearer OTHER-T"])
                #expect(top.requests.map { $0.headerFields[.authorization] } == ["Bearer SECRET-S"])
            }
        }
    }
}
