import Foundation
import InMemoryLogging
import Logging
import ProcessTestSupport
@testable import Resourceful
import Testing

/// A client certificate rotated on disk the ways Kubernetes and cert-manager do it, against nginx
/// answering with the subject of the certificate each connection presented.
@Suite struct ClientCertificateRotationTests {
    struct Subject: Decodable, Sendable { var subject: String }

    /// A folder laid out like a mounted Secret: `tls.crt` and `tls.key` link through `..data` to a
    /// folder of the current version, which a rotation replaces with one rename of `..data`.
    struct Mount {
        let directory: URL
        var certificate: String { directory.appendingPathComponent("tls.crt").path }
        var key: String { directory.appendingPathComponent("tls.key").path }

        func publish(certificate: String, key: String) throws {
            let files = FileManager.default
            let version = "..\(UUID().uuidString)"
            let folder = directory.appendingPathComponent(version)
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
            try files.copyItem(atPath: certificate, toPath: folder.appendingPathComponent("tls.crt").path)
            try files.copyItem(atPath: key, toPath: folder.appendingPathComponent("tls.key").path)
            let staged = directory.appendingPathComponent("..data_tmp").path
            try files.createSymbolicLink(atPath: staged, withDestinationPath: version)
            #expect(rename(staged, directory.appendingPathComponent("..data").path) == 0)
            for name in ["tls.crt", "tls.key"] where !files.fileExists(atPath: directory.appendingPathComponent(name).path) {
                try files.createSymbolicLink(atPath: directory.appendingPathComponent(name).path, withDestinationPath: "..data/\(name)")
            }
        }
    }

    @Test func newConnectionsPresentTheRotatedPairAndABrokenOneIsPassedOverAndLoggedOnce() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-rotation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let pki = try await TestPKI.make(in: scratch)
        let one = try await pki.issue("app-one", subjectAltName: "DNS:app.internal", usage: "clientAuth")
        let two = try await pki.issue("app-two", subjectAltName: "DNS:app.internal", usage: "clientAuth")
        let mount = Mount(directory: scratch.appendingPathComponent("mount"))
        try mount.publish(certificate: one.certificate, key: one.key)
        let nginx = try await Nginx.startTLS(
            pki: pki,
            server: "ssl_client_certificate \(pki.caFile); ssl_verify_client on; "
                + #"location / { default_type application/json; return 200 '{"subject":"$ssl_client_s_dn"}'; }"#
        )
        let logs = InMemoryLogHandler()
        var config = APIConfig(baseURL: URL(string: "https://localhost:\(nginx.port)")!, service: "s")
        config.http.tls = APIConfig.TLSSettings(caFile: pki.caFile, clientCertificateFile: mount.certificate, clientKeyFile: mount.key)
        let transport = AsyncHTTPClientTransport(
            settings: config.http, environment: [:], logger: Logger(label: "transport") { _ in logs }, clientCertificateCheckInterval: .zero
        )
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
        func presented() async throws -> String {
            try await api.call(AdHocRequest<Subject, Empty>(.show, "whoami")).subject
        }

        #expect(try await presented().contains("CN=app-one"))
        // cert-manager's renewal: a new version behind `..data`.
        try mount.publish(certificate: two.certificate, key: two.key)
        #expect(try await presented().contains("CN=app-two"))
        // Half a rotation (the new certificate beside the old key): the current pair stays, one warning.
        try mount.publish(certificate: one.certificate, key: two.key)
        #expect(try await presented().contains("CN=app-two"))
        #expect(try await presented().contains("CN=app-two"))
        let warnings = logs.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(!logs.entries.contains { "\($0.message) \($0.metadata)".contains("BEGIN") })
        // Files renamed into place, without the symlinks.
        for (file, source) in [(mount.certificate, one.certificate), (mount.key, one.key)] {
            let staged = file + ".new"
            try FileManager.default.copyItem(atPath: source, toPath: staged)
            #expect(rename(staged, file) == 0)
        }
        #expect(try await presented().contains("CN=app-one"))
        try await api.shutdown()
        try await nginx.stop()
    }
}
