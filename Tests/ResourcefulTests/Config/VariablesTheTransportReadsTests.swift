import Foundation
import HTTPTypes
import ProcessTestSupport
@testable import Resourceful
import ResourcefulTesting
import Testing

/// The variables the transport reads itself (OpenSSL's `SSL_CERT_FILE` and `SSL_CERT_DIR`, the
/// standard proxy variables) meet the rule of variables over a file's credentials, as do the
/// credentials a program adds after loading.
@Suite struct VariablesTheTransportReadsTests {
    typealias Files = VariablesOverFileCredentialsTests

    @Test(arguments: [("SSL_CERT_FILE", "http.tls.caFile"), ("SSL_CERT_DIR", "http.tls.caDirectory")])
    func anOpenSSLVariableIsRefusedUnderTheFilesCredential(_ variable: String, key: String) async throws {
        let folder = try Files.folder(Files.credentialed())
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T"]
        let error = await Files.refusal(folder, token.merging([variable: "/srv/attacker-ca"]) { $1 })
        #expect(error?.kind == .movedByVariable)
        #expect(error?.source == variable && error?.key == key)
        #expect(error?.description.contains("authentication.storages") == true)
        #expect(error?.description.contains("attacker") == false, "the value is not repeated")
        // Empty, it names nothing; without a credential, it is taken.
        #expect(await Files.refusal(folder, token.merging([variable: ""]) { $1 }) == nil)
        let plain = try Files.folder(#"{"baseURL": "https://api.example/v1", "service": "s"}"#)
        defer { try? FileManager.default.removeItem(at: plain) }
        #expect(await Files.refusal(plain, [variable: "/srv/attacker-ca"]) == nil)
        // The system's own store, as many distributions and Nix set them: taken.
        let system = variable == "SSL_CERT_DIR" ? "/etc/ssl/certs/:/etc/pki/tls/certs" : "/etc/ssl/certs/ca-certificates.crt"
        #expect(await Files.refusal(folder, token.merging([variable: system]) { $1 }) == nil)
        // A system folder and another: refused.
        if variable == "SSL_CERT_DIR" {
            #expect(await Files.refusal(folder, token.merging([variable: "/etc/ssl/certs:/tmp/evil"]) { $1 })?.source == variable)
        }
        // A file with a CA of its own: the variable is not read.
        let own = try Files.folder(Files.credentialed(#""http": {"tls": {"caFile": "/etc/own-ca.pem", "trustSystemRoots": false}}"#))
        defer { try? FileManager.default.removeItem(at: own) }
        #expect(await Files.refusal(own, token.merging([variable: "/srv/attacker-ca"]) { $1 }) == nil)
    }

    /// Against a real TLS server whose certificate an attacker's CA issued: the file's credential
    /// is never sent; with the CA in the file, the call goes.
    @Test func anOpenSSLVariableDoesNotLetTheFilesCredentialReachAServerItsCAVouchesFor() async throws {
        try await TestPKI.withScratchCA { pki in
            let nginx = try await Nginx.startTLS(pki: pki, server: "location / { return 204; }")
            do {
                try await Self.sendsNothingUnderTheVariable(pki: pki, nginx: nginx)
                try await nginx.stop()
            } catch {
                try? await nginx.stop()
                throw error
            }
        }
    }

    private static func sendsNothingUnderTheVariable(pki: TestPKI, nginx: Nginx) async throws {
        let base = "https://localhost:\(nginx.port)/v1"
        let folder = try Files.folder(Files.credentialed(base: base))
        defer { try? FileManager.default.removeItem(at: folder) }
        let variables = ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T", "SSL_CERT_FILE": pki.caFile]
        do {
            _ = try await APIDependencies.live(environment: "x", configDirectory: folder.path, environmentVariables: variables)
            Issue.record("the dependencies were made")
        } catch let error as APIError {
            #expect((error.underlying as? APIConfigError)?.kind == .movedByVariable)
            #expect(error.description.contains("SSL_CERT_FILE"))
        }
        #expect(nginx.requestCount == 0)
        // The file's own CA: the call goes, with the credential.
        let chosen = try Files.folder(Files.credentialed(#""http": {"tls": {"caFile": "\#(pki.caFile)", "trustSystemRoots": false}}"#, base: base))
        defer { try? FileManager.default.removeItem(at: chosen) }
        let dependencies = try await APIDependencies.live(environment: "x", configDirectory: chosen.path, environmentVariables: variables)
        _ = try await API(dependencies: dependencies).call(AdHocRequest<Empty, Empty>(.show, "x"))
        try await dependencies.transport.shutdown()
        #expect(await nginx.requestCount(reaching: 1) == 1)
    }

    @Test func httpProxyIsRefusedWhenTheCredentialWouldCrossItInClear() async throws {
        let folder = try Files.folder(Files.credentialed(base: "http://api.internal.example/v1"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T"]
        let proxied = token.merging(["http_proxy": "http://127.0.0.1:4444"]) { $1 }
        let error = await Files.refusal(folder, proxied)
        #expect(error?.kind == .movedByVariable)
        #expect(error?.source == "http_proxy" && error?.key == "http.proxy")
        #expect(error?.description.contains("4444") == false)
        // Exempted by no_proxy (direct), or the proxy for https targets alone: taken.
        #expect(await Files.refusal(folder, proxied.merging(["no_proxy": ".internal.example"]) { $1 }) == nil)
        #expect(await Files.refusal(folder, token.merging(["https_proxy": "http://127.0.0.1:4444"]) { $1 }) == nil)
        // The file says where its proxy is, or that there is none: the file's choice.
        for proxy in ["none", "http://127.0.0.1:3128"] {
            let own = try Files.folder(Files.credentialed(#""http": {"proxy": "\#(proxy)"}"#, base: "http://api.internal.example/v1"))
            defer { try? FileManager.default.removeItem(at: own) }
            #expect(await Files.refusal(own, proxied) == nil, "\(proxy)")
        }
        // https (the proxy sees a CONNECT), or loopback (never proxied): taken.
        for base in ["https://api.internal.example/v1", "http://127.0.0.1:9/v1", "http://localhost:9/v1"] {
            let other = try Files.folder(Files.credentialed(base: base))
            defer { try? FileManager.default.removeItem(at: other) }
            #expect(await Files.refusal(other, token.merging(["http_proxy": "http://127.0.0.1:4444", "https_proxy": "http://127.0.0.1:4444"]) { $1 }) == nil, "\(base)")
        }
        // No credential: nothing to see.
        let plain = try Files.folder(#"{"baseURL": "http://api.internal.example/v1", "service": "s"}"#)
        defer { try? FileManager.default.removeItem(at: plain) }
        #expect(await Files.refusal(plain, proxied) == nil)
    }

    /// The proxy a variable names gets nothing: the dependencies are not made.
    @Test func httpProxyGetsNoRequestCarryingTheFilesCredential() async throws {
        try await MockServer.withRunning { proxy in
            proxy.stub(.get, "/v1/x", .status(.noContent))
            let folder = try Files.folder(Files.credentialed(base: "http://api.internal.example/v1"))
            defer { try? FileManager.default.removeItem(at: folder) }
            await #expect(throws: APIError.self) {
                _ = try await APIDependencies.live(
                    environment: "x", configDirectory: folder.path,
                    environmentVariables: ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T", "http_proxy": proxy.baseURL.absoluteString]
                )
            }
            #expect(proxy.requests.isEmpty)
        }
    }

    /// A credential added after loading meets the checks the file's own met.
    @Test func aCredentialAddedAfterLoadingMeetsTheSameChecks() async throws {
        let folder = try Files.folder(#"{"baseURL": "http://api.internal.example/v1", "service": "s"}"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [(variables: [String: String], named: String)] = [
            (["RESOURCEFUL_HTTP_TLS_CA_FILE": "/srv/attacker-ca.pem"], "RESOURCEFUL_HTTP_TLS_CA_FILE"),
            (["SSL_CERT_FILE": "/srv/attacker-ca.pem"], "SSL_CERT_FILE"),
            (["RESOURCEFUL_HTTP_PROXY": "http://127.0.0.1:4444"], "RESOURCEFUL_HTTP_PROXY"),
            (["http_proxy": "http://127.0.0.1:4444"], "http_proxy"),
        ]
        for (variables, named) in cases {
            let config = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: variables)
            // Nothing sent: nothing to refuse.
            #expect(throws: Never.self) { try config.refuseVariablesMovingCredentials(sentBy: [], variables: variables) }
            do {
                try config.refuseVariablesMovingCredentials(sentBy: ["--account"], variables: variables)
                Issue.record("\(named) was taken")
            } catch {
                let underlying = error.underlying as? APIConfigError
                #expect(underlying?.kind == .movedByVariable && underlying?.source == named)
                #expect(error.description.contains("--account"))
            }
        }
        // Read without a file: nothing checked (the program chose everything).
        let code = APIConfig(baseURL: URL(string: "http://api.internal.example/v1")!, service: "s")
        #expect(throws: Never.self) { try code.refuseVariablesMovingCredentials(sentBy: ["--account"], variables: ["SSL_CERT_FILE": "/x"]) }
    }

    /// A file loaded without variables (or with others than the process has) is checked again
    /// where its transport is made, against the variables that transport reads: the checks and
    /// the transport never see two different environments.
    @Test func theTransportsVariablesAreCheckedWhereTheTransportIsMade() async throws {
        let folder = try Files.folder(Files.credentialed(base: "http://api.internal.example/v1"))
        defer { try? FileManager.default.removeItem(at: folder) }
        let token = ["RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T"]
        let config = try await APIConfig.load(environment: "x", configDirectory: folder.path, environmentVariables: token)
        let refused: [(variables: [String: String], named: String)] = [
            (["SSL_CERT_FILE": "/srv/attacker-ca.pem"], "SSL_CERT_FILE"),
            (["SSL_CERT_DIR": "/srv/attacker-certs"], "SSL_CERT_DIR"),
            (["http_proxy": "http://127.0.0.1:4444"], "http_proxy"),
        ]
        for (variables, named) in refused {
            do {
                let dependencies = try await APIDependencies.live(config: config, environmentVariables: token.merging(variables) { $1 })
                try? await dependencies.transport.shutdown()
                Issue.record("\(named) reached the transport")
            } catch {
                #expect(error.kind == .invalidConfiguration)
                #expect((error.underlying as? APIConfigError)?.source == named, "\(error)")
                #expect(!error.description.contains("attacker") && !error.description.contains("SECRET"))
            }
        }
        // The system's own store, or no variable at all: the transport is made.
        for variables in [["SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"], ["no_proxy": "*", "http_proxy": "http://127.0.0.1:4444"]] {
            let dependencies = try await APIDependencies.live(config: config, environmentVariables: token.merging(variables) { $1 })
            try await dependencies.transport.shutdown()
        }
    }

    /// A file that names no base URL leaves the host to a variable, and its credentials stay
    /// behind: the variable alone would choose where they go.
    @Test func aBaseURLFromAVariableForAFileWithoutOneTakesNoneOfItsCredentials() async throws {
        let folder = try Files.folder(#"{"service": "s", "authentication": {"storages": ["environment"]}, "baseHeaders": ["X-Tenant: acme"]}"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = try await APIConfig.load(
            environment: "x", configDirectory: folder.path,
            environmentVariables: ["RESOURCEFUL_BASE_URL": "http://127.0.0.1:9/v1", "RESOURCEFUL_AUTH_S_TOKEN": "SECRET-T"]
        )
        #expect(config.authentication.storages.isEmpty)
        #expect(config.baseHeaders.isEmpty)
        #expect(config.authentication.withheldBy?.variable == "RESOURCEFUL_BASE_URL")
    }

    /// The process environment as the library reads it: the transport's variables as the C
    /// library gives them (`getenv`), whatever Foundation's copy holds.
    @Test func theProcessEnvironmentHoldsTheTransportsVariablesAsTheTransportReadsThem() {
        let process = TransportEnvironment.process()
        #expect(TransportEnvironment.restricted(process) == TransportEnvironment.current())
        #expect(process["PATH"] == ProcessInfo.processInfo.environment["PATH"])
    }

    /// A base URL a variable moves to another origin takes none of the file's base header fields
    /// or query items, as a redirect there would not (the command-line tool drops them too).
    @Test func aMovedBaseURLTakesNoneOfTheFilesBaseFields() async throws {
        let folder = try Files.folder(#"{"baseURL": "https://api.example/v1", "service": "s", "baseHeaders": ["X-Tenant: acme"], "baseQueryItems": ["sig=Q7"]}"#)
        defer { try? FileManager.default.removeItem(at: folder) }
        let moved = try await APIConfig.load(
            environment: "x", configDirectory: folder.path, environmentVariables: ["RESOURCEFUL_BASE_URL": "https://elsewhere.example/v1"]
        )
        #expect(moved.baseHeaders.isEmpty && moved.baseQueryItems.isEmpty)
        #expect(moved.authentication.withheldBy?.keys == ["baseHeaders", "baseQueryItems"])
    }
}
