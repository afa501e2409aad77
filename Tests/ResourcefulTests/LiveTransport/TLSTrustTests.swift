import Foundation
import HTTPTypes
import ProcessTestSupport
@testable import Resourceful
import ResourcefulTesting
import Testing

/// A private CA, trusted through `http.tls.*` (or OpenSSL's variables), against nginx serving
/// certificates it issued; host names and versions checked; bad CA files typed errors.
@Suite(.serialized) struct TLSTrustTests {
    /// A scratch folder, a CA, and nginx serving a certificate for localhost and 127.0.0.1 over
    /// TLS 1.2 only.
    private func withServer(_ body: (TestPKI, Nginx) async throws -> Void) async throws {
        try await TestPKI.withScratchCA { pki in
            let nginx = try await Nginx.startTLS(pki: pki, server: "ssl_protocols TLSv1.2; location / { return 204; }")
            do {
                try await body(pki, nginx)
                try await nginx.stop()
            } catch {
                try? await nginx.stop()
                throw error
            }
        }
    }

    /// One call to `url` with the settings `configure` makes; the error, if any.
    private func call(
        _ url: String,
        environment: [String: String] = [:],
        configure: (inout APIConfig.HTTPSettings) -> Void = { _ in }
    ) async throws -> APIError? {
        await liveCall(url, environment: environment, configure: configure)
    }

    @Test func aPrivateCAIsTrustedThroughCAFileAndNotWithout() async throws {
        try await withServer { pki, nginx in
            let url = "https://localhost:\(nginx.port)"
            let untrusted = try await call(url)
            #expect(untrusted?.kind == .tls)
            #expect(untrusted?.description.contains("http.tls.caFile") == true)
            #expect(untrusted?.description.contains("BEGIN CERTIFICATE") == false)
            #expect(nginx.requestCount == 0)
            #expect(try await call(url) { $0.tls.caFile = pki.caFile } == nil)
            #expect(try await call(url) { $0.tls.caFile = pki.caFile; $0.tls.trustSystemRoots = false } == nil)
            #expect(await nginx.requestCount(reaching: 2) == 2)
        }
    }

    @Test func aCADirectoryIsTrusted() async throws {
        try await withServer { pki, nginx in
            let directory = pki.directory.appendingPathComponent("cas")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: pki.caFile, toPath: directory.appendingPathComponent("company-ca.crt").path)
            // What a Kubernetes ConfigMap mount adds beside the files: hidden entries and a folder.
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("..data"), withIntermediateDirectories: true)
            #expect(try await call("https://127.0.0.1:\(nginx.port)") { $0.tls.caDirectory = directory.path; $0.tls.trustSystemRoots = false } == nil)
        }
    }

    @Test func openSSLVariablesAreHonouredWhenNothingIsConfigured() async throws {
        try await withServer { pki, nginx in
            let url = "https://localhost:\(nginx.port)"
            #expect(try await call(url, environment: ["SSL_CERT_FILE": pki.caFile]) == nil)
            #expect(try await call(url, environment: ["SSL_CERT_DIR": "/etc/ssl/certs:\(pki.directory.path)"]) == nil)
            // Only what the variables name: the system's roots are not among them.
            let elsewhere = try await TestPKI.make(in: pki.directory, name: "Another CA")
            #expect(try await call(url, environment: ["SSL_CERT_FILE": elsewhere.caFile])?.kind == .tls)
            let missing = try await call(url, environment: ["SSL_CERT_FILE": pki.directory.appendingPathComponent("gone.pem").path])
            #expect(missing?.kind == .invalidConfiguration)
            #expect(missing?.description.contains("SSL_CERT_FILE") == true)
            // A configured CA takes the place of the variables.
            let other = try await TestPKI.make(in: pki.directory, name: "Another CA")
            let refused = try await call(url, environment: ["SSL_CERT_FILE": pki.caFile]) { $0.tls.caFile = other.caFile; $0.tls.trustSystemRoots = false }
            #expect(refused?.kind == .tls)
        }
    }

    @Test func aCertificateForAnotherHostIsRefusedOnce() async throws {
        try await withServer { pki, _ in
            let elsewhere = try await pki.issue("elsewhere", subjectAltName: "DNS:elsewhere.example")
            let nginx = try await Nginx.start(
                listenOptions: "ssl",
                server: "ssl_certificate \(elsewhere.certificate); ssl_certificate_key \(elsewhere.key); location / { return 204; }"
            )
            let error = try await call("https://localhost:\(nginx.port)") { $0.tls.caFile = pki.caFile }
            #expect(error?.kind == .tls)
            #expect(nginx.requestCount == 0)
            try await nginx.stop()
        }
    }

    @Test func aMinimumVersionAboveTheServersIsATLSFailure() async throws {
        try await withServer { pki, nginx in
            let error = try await call("https://localhost:\(nginx.port)") { $0.tls.caFile = pki.caFile; $0.tls.minimumVersion = .v1_3 }
            #expect(error?.kind == .tls)
            #expect(nginx.requestCount == 0)
        }
    }

    @Test func aClientCertificateIsPresentedToAServerThatAsksForOne() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-mtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let pki = try await TestPKI.make(in: scratch)
        let client = try await pki.issue("app", subjectAltName: "DNS:app.internal", usage: "clientAuth")
        // Mounted the way cert-manager mounts them: PEM files named tls.crt and tls.key.
        let certificate = scratch.appendingPathComponent("tls.crt").path
        let key = scratch.appendingPathComponent("tls.key").path
        try FileManager.default.copyItem(atPath: client.certificate, toPath: certificate)
        try FileManager.default.copyItem(atPath: client.key, toPath: key)
        let nginx = try await Nginx.startTLS(
            pki: pki, server: "ssl_client_certificate \(pki.caFile); ssl_verify_client on; location / { return 204; }"
        )
        let url = "https://localhost:\(nginx.port)"
        var paired = APIConfig.TLSSettings(caFile: pki.caFile, clientCertificateFile: certificate, clientKeyFile: key)
        let accepted = try await call(url, tls: paired)
        #expect(accepted == nil)
        // Without the pair nginx answers 400 ("No required SSL certificate was sent").
        let refused = try await call(url, tls: APIConfig.TLSSettings(caFile: pki.caFile))
        #expect(refused?.status?.code == 400)
        // A key that is not one: a configuration error naming the key, nothing sent.
        paired.clientKeyFile = certificate
        let broken = try await call(url, tls: paired)
        #expect(broken?.kind == .invalidConfiguration)
        #expect(broken?.description.contains("http.tls.clientKeyFile") == true)
        #expect(broken?.description.contains("BEGIN") == false)
        #expect(await nginx.requestCount(reaching: 2) == 2)
        try await nginx.stop()
    }

    /// One call to `url` trusting and presenting what `tls` names.
    private func call(_ url: String, tls: APIConfig.TLSSettings) async throws -> APIError? {
        try await call(url) { $0.tls = tls }
    }

    @Test func aCAFileThatCannotBeUsedFailsEveryCallBeforeAnythingIsSent() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let garbage = scratch.appendingPathComponent("garbage.pem").path
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: garbage))
        let fifo = scratch.appendingPathComponent("fifo.pem").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let empty = scratch.appendingPathComponent("empty").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let cases: [(String, (inout APIConfig.HTTPSettings) -> Void)] = [
            ("http.tls.caFile", { $0.tls.caFile = scratch.appendingPathComponent("missing.pem").path }),
            ("http.tls.caFile", { $0.tls.caFile = garbage }),
            ("http.tls.caFile", { $0.tls.caFile = fifo }),
            ("http.tls.caDirectory", { $0.tls.caDirectory = empty }),
        ]
        // A read that waited (for the FIFO's writer, which never comes) would end at the call's
        // deadline as a time-out: half of it leaves a loaded machine room.
        let deadline = APIConfig(baseURL: URL(fileURLWithPath: "/"), service: "s").timeout
        try await MockServer.withRunning { server in
            server.stub(.get, "/x", .status(.noContent))
            for (key, configure) in cases {
                let start = ContinuousClock.now
                let error = try await call(server.baseURL.absoluteString, configure: configure)
                #expect(error?.kind == .invalidConfiguration)
                #expect(error?.description.contains(key) == true, "\(String(describing: error))")
                #expect(ContinuousClock.now - start < deadline / 2)
            }
            #expect(server.requests.isEmpty)
        }
    }
}
