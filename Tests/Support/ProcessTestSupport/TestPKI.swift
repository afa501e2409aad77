public import Foundation

/// A throwaway certificate authority made with `openssl` at test time, and certificates it issues.
public struct TestPKI: Sendable {
    /// Where the keys and certificates are.
    public let directory: URL
    /// The CA's certificate, PEM.
    public var caFile: String { directory.appendingPathComponent("ca.pem").path }

    /// Makes a CA (P-256, valid for a day) in a new folder under `parent`.
    public static func make(in parent: URL, name: String = "Resourceful Test CA") async throws -> TestPKI {
        let directory = parent.appendingPathComponent("pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let pki = TestPKI(directory: directory)
        try await pki.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", directory.appendingPathComponent("ca.key").path, "-out", pki.caFile, "-days", "1",
            "-subj", "/CN=\(name)",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        return pki
    }

    /// Issues a certificate named `name` (its files are `<name>.pem` and `<name>.key`).
    ///
    /// - Parameters:
    ///   - subjectAltName: Such as `DNS:localhost,IP:127.0.0.1`.
    ///   - usage: `serverAuth` or `clientAuth`.
    public func issue(_ name: String, subjectAltName: String, usage: String = "serverAuth") async throws -> (certificate: String, key: String) {
        let key = directory.appendingPathComponent("\(name).key").path
        let request = directory.appendingPathComponent("\(name).csr").path
        let certificate = directory.appendingPathComponent("\(name).pem").path
        let extensions = directory.appendingPathComponent("\(name).ext")
        try Data("subjectAltName=\(subjectAltName)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=\(usage)\n".utf8).write(to: extensions)
        try await openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", request, "-subj", "/CN=\(name)",
        ])
        try await openssl([
            "x509", "-req", "-in", request, "-CA", caFile, "-CAkey", directory.appendingPathComponent("ca.key").path,
            "-CAcreateserial", "-out", certificate, "-days", "1", "-extfile", extensions.path,
        ])
        return (certificate, key)
    }

    private func openssl(_ arguments: [String]) async throws {
        let result = try await Command.run("/usr/bin/openssl", arguments)
        guard result.status == 0 else { throw Command.Failed(result: result) }
    }
}

extension TestPKI {
    /// Runs `body` with a CA made in a new scratch folder, which is removed afterwards.
    public static func withScratchCA(_ body: (TestPKI) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try await body(try await make(in: scratch))
    }
}

extension Nginx {
    /// nginx serving TLS with a certificate `pki` issues for localhost and 127.0.0.1; `server` is
    /// the rest of its `server` block (`location`s, `ssl_protocols`, `ssl_verify_client` …).
    public static func startTLS(pki: TestPKI, listenOptions: String = "ssl", server: String) async throws -> Nginx {
        let certificate = try await pki.issue("server-\(UUID().uuidString)", subjectAltName: "DNS:localhost,IP:127.0.0.1")
        return try await start(
            listenOptions: listenOptions,
            server: "ssl_certificate \(certificate.certificate); ssl_certificate_key \(certificate.key); " + server
        )
    }
}
