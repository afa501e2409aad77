import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// The verb commands build their client from the configuration's `http` keys and pick a service,
/// against nginx with a CA made at test time, tinyproxy, and MockServers.
@Suite(.serialized) struct HTTPSettingsCommandTests {
    private func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-cli-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    private func tool(_ configs: URL, _ json: String, _ arguments: [String]) async throws -> Command.Result {
        try Data(json.utf8).write(to: configs.appendingPathComponent("test.json"))
        return try await Command.run(resourcefulTool, arguments + ["--env", "test", "--config-directory", configs.path])
    }

    @Test func trustProxyAndVersionComeFromTheConfiguration() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pki = try await TestPKI.make(in: directory)
        let nginx = try await Nginx.startTLS(
            pki: pki, listenOptions: "ssl http2",
            server: "ssl_protocols TLSv1.2; " + #"location /v1/ { default_type application/json; return 200 '{"protocol":"$server_protocol"}'; }"#
        )
        let proxy = try await Tinyproxy.start()
        let base = #""baseURL": "https://localhost:\#(nginx.port)/v1", "service": "cli", "retry": {"maxAttempts": 1}"#
        let http = #""proxy": "\#(proxy.url)", "connectTimeout": 5, "idleTimeout": 5, "maximumConnectionsPerHost": 2, "maxRedirects": 0, "decompression": false"#

        // Trusted through http.tls.caFile, over HTTP/1.1 as http.version asks.
        let trusted = try await tool(directory, #"{\#(base), "http": {\#(http), "version": "http1", "tls": {"caFile": "\#(pki.caFile)", "minimumVersion": "1.2"}}}"#, ["show", "x"])
        #expect(trusted.status == 0, "\(trusted.output)")
        #expect(trusted.output.contains("HTTP/1.1"))
        // A loopback target goes direct whatever http.proxy says (curl's rule).
        #expect(!proxy.requests.contains { $0.contains("localhost:\(nginx.port)") }, "\(proxy.requests)")
        // HTTP/2 where the server offers it.
        let automatic = try await tool(directory, #"{\#(base), "http": {"tls": {"caFile": "\#(pki.caFile)"}}}"#, ["show", "x"])
        #expect(automatic.output.contains("HTTP/2.0"), "\(automatic.output)")
        // Without the CA: the TLS exit status.
        let untrusted = try await tool(directory, #"{\#(base), "http": {\#(http)}}"#, ["show", "x"])
        #expect(untrusted.status == 7, "\(untrusted.output)")
        // A minimum version above the server's (TLS 1.2 only) is a TLS failure as well.
        let tooNew = try await tool(directory, #"{\#(base), "http": {"tls": {"caFile": "\#(pki.caFile)", "minimumVersion": "1.3"}}}"#, ["show", "x"])
        #expect(tooNew.status == 7, "\(tooNew.output)")
        // Verification switched off.
        let insecure = try await tool(directory, #"{\#(base), "http": {"dangerouslyDisableCertificateVerification": true}}"#, ["show", "x"])
        #expect(insecure.status == 0, "\(insecure.output)")
        try await proxy.stop()
        try await nginx.stop()
    }

    @Test func serviceSelectsAnUpstreamOfTheFile() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await MockServer.withRunning { users in
            try await MockServer.withRunning { billing in
                users.stub(.get, "/v1/x", .json(raw: #"{"from":"users"}"#))
                billing.stub(.get, "/v2/x", .json(raw: #"{"from":"billing"}"#))
                let json = #"{"baseURL": "\#(users.baseURL.absoluteString)/v1", "service": "users", "services": {"billing": {"baseURL": "\#(billing.baseURL.absoluteString)/v2", "service": "billing"}}}"#
                #expect(try await tool(directory, json, ["show", "x"]).output.contains("users"))
                #expect(try await tool(directory, json, ["show", "x", "--service", "billing"]).output.contains("billing"))
                let unknown = try await tool(directory, json, ["show", "x", "--service", "payroll"])
                #expect(unknown.status == 5)
                #expect(unknown.output.contains("services.payroll"))
            }
        }
    }
}
