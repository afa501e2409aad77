import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// nginx serving HTTPS with a certificate nobody trusts: a failure no retry can mend.
@Suite struct TLSFailureTests {
    @Test func anUntrustedCertificateIsATLSFailureTriedOnce() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let cert = scratch.appendingPathComponent("cert.pem").path, key = scratch.appendingPathComponent("key.pem").path
        let made = try await Command.run(
            "/usr/bin/openssl",
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost"]
        )
        #expect(made.status == 0)
        let nginx = try await Nginx.start(
            listenOptions: "ssl",
            server: "ssl_certificate \(cert); ssl_certificate_key \(key); location / { return 204; }"
        )
        // Quick retries, and the default connect time-out: a slow handshake on a loaded machine must not
        // be mistaken for a connection failure.
        try await Harness.run(configure: { $0.retry = .init(maxAttempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20)); $0.timeout = .seconds(30) }) { harness in
            harness.dependencies.apiConfig.baseURL = URL(string: "https://localhost:\(nginx.port)/v1")!
            let start = ContinuousClock.now
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x")) }
            #expect(error?.kind == .tls)
            #expect(harness.attemptsLogged == 1)
            #expect(ContinuousClock.now - start < .seconds(15))
            #expect(harness.logsAreFreeOfSecrets)
        }
        #expect(nginx.requestCount == 0)
        // The same server, its certificate accepted: the failure was the certificate, not the server.
        try await Harness.run(configure: { $0.http.dangerouslyDisableCertificateVerification = true }) { harness in
            harness.dependencies.apiConfig.baseURL = URL(string: "https://localhost:\(nginx.port)/v1")!
            harness.dependencies.transport = AsyncHTTPClientTransport(settings: harness.dependencies.apiConfig.http)
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            try await harness.dependencies.transport.shutdown()
        }
        #expect(await nginx.requestCount(reaching: 1) == 1)
        try await nginx.stop()
    }
}
