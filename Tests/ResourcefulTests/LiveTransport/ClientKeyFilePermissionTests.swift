import Foundation
import ProcessTestSupport
@testable import Resourceful
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `http.tls.clientKeyFile` is read as ssh reads a key: a regular file of this user's, readable by
/// them alone, not a link (but an orchestrator's link inside its folder), checked on the
/// descriptor it is read from.
@Suite struct ClientKeyFilePermissionTests {
    /// A scratch folder with a CA and a client pair from it, the key at mode 0600.
    struct Scratch {
        let folder: URL
        let pki: TestPKI
        let certificate: String
        let key: String

        static func make() async throws -> Scratch {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-client-key-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let pki = try await TestPKI.make(in: folder)
            let client = try await pki.issue("app", subjectAltName: "DNS:app.internal", usage: "clientAuth")
            #expect(chmod(client.key, 0o600) == 0)
            return Scratch(folder: folder, pki: pki, certificate: client.certificate, key: client.key)
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }

        /// The TLS configuration for the pair with `key` as its key file, or the error.
        func configure(key: String) -> TransportError? {
            var settings = APIConfig.HTTPSettings()
            settings.tls = APIConfig.TLSSettings(caFile: pki.caFile, clientCertificateFile: certificate, clientKeyFile: key)
            do {
                _ = try TLSTrust.configuration(for: settings, environment: [:])
                return nil
            } catch {
                return error
            }
        }
    }

    @Test func aKeyReadableByYouAloneIsUsed() async throws {
        let scratch = try await Scratch.make()
        defer { scratch.remove() }
        #expect(scratch.configure(key: scratch.key) == nil)
    }

    @Test func aKeyOpenToGroupOrOthersIsRefusedWithTheChmodThatFixesIt() async throws {
        let scratch = try await Scratch.make()
        defer { scratch.remove() }
        for mode: mode_t in [0o644, 0o640, 0o604, 0o620] {
            #expect(chmod(scratch.key, mode) == 0)
            let error = scratch.configure(key: scratch.key)
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.detail?.contains("http.tls.clientKeyFile") == true)
            #expect(error?.detail?.contains("chmod 600 \(scratch.key)") == true, "\(String(describing: error?.detail))")
            #expect(error?.description.contains("PRIVATE KEY") == false)
        }
    }

    @Test func aLinkToAKeyElsewhereIsRefused() async throws {
        let scratch = try await Scratch.make()
        defer { scratch.remove() }
        let elsewhere = scratch.folder.appendingPathComponent("mount")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let link = elsewhere.appendingPathComponent("tls.key").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: scratch.key)
        let error = scratch.configure(key: link)
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.detail?.contains("symbolic link") == true, "\(String(describing: error?.detail))")
    }

    @Test func anOrchestratorsLinkInsideTheKeysFolderIsFollowedUnderTheSameRule() async throws {
        let scratch = try await Scratch.make()
        defer { scratch.remove() }
        // A Kubernetes Secret: tls.key → ..data/tls.key, ..data → ..2026_11_27 (a folder).
        let mount = scratch.folder.appendingPathComponent("mount")
        let version = mount.appendingPathComponent("..2026_11_27")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: scratch.key, toPath: version.appendingPathComponent("tls.key").path)
        try FileManager.default.createSymbolicLink(atPath: mount.appendingPathComponent("..data").path, withDestinationPath: "..2026_11_27")
        let key = mount.appendingPathComponent("tls.key").path
        try FileManager.default.createSymbolicLink(atPath: key, withDestinationPath: "..data/tls.key")
        #expect(scratch.configure(key: key) == nil)
        // Its target open to others is refused as a file of its own would be.
        #expect(chmod(version.appendingPathComponent("tls.key").path, 0o644) == 0)
        let error = scratch.configure(key: key)
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.detail?.contains("chmod 600") == true, "\(String(describing: error?.detail))")
    }

    @Test func aFIFOIsRefusedWithoutWaiting() async throws {
        let scratch = try await Scratch.make()
        defer { scratch.remove() }
        let fifo = scratch.folder.appendingPathComponent("fifo.key").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let error = scratch.configure(key: fifo)
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.detail?.contains("not a regular file") == true, "\(String(describing: error?.detail))")
    }

    @Test func anotherUsersKeyIsRefused() async throws {
        // Only root can give a file away.
        guard geteuid() == 0 else { return }
        let scratch = try await Scratch.make()
        defer { scratch.remove() }
        #expect(chown(scratch.key, 65_534, 65_534) == 0)
        let error = scratch.configure(key: scratch.key)
        #expect(error?.kind == .invalidConfiguration)
        #expect(error?.detail?.contains("another user") == true, "\(String(describing: error?.detail))")
    }
}
