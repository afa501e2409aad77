import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A CA file, client certificate or key on a file system that does not answer (a FUSE mount
/// without a daemon, as a hung network mount behaves): making the transport ends within its bound
/// with a typed error naming the file; it never waits for the file system without end. In the
/// hung file system's suite, whose tests run one at a time: they count the threads waiting on a
/// mount.
extension HungFileSystemTests {
    @Test(.timeLimit(.minutes(2)), arguments: ["http.tls.caFile", "http.tls.clientCertificateFile"])
    func aTLSFileOnAFileSystemThatHangsFailsTheTransportInTime(_ key: String) async throws {
        try await HungFileSystem.with { folder in
            let path = folder.appendingPathComponent("tls.pem", isDirectory: false).path
            var settings = APIConfig.HTTPSettings()
            if key == "http.tls.caFile" {
                settings.tls = APIConfig.TLSSettings(caFile: path)
            } else {
                settings.tls = APIConfig.TLSSettings(clientCertificateFile: path, clientKeyFile: path)
            }
            // Read within a bound of its own: a typed error naming the key and the file.
            var start = ContinuousClock.now
            let error = #expect(throws: TransportError.self) {
                _ = try TLSTrust.configuration(for: settings, environment: [:], fileWait: .seconds(1))
            }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.detail?.contains("\(key): \(path) did not answer") == true, "\(error?.detail ?? "")")
            #expect(ContinuousClock.now - start < .seconds(15))

            // A transport made with these settings (its `init` is synchronous) is made within the
            // default bound, and every call fails, naming the file, without sending anything.
            start = ContinuousClock.now
            let transport = AsyncHTTPClientTransport(settings: settings, environment: [:])
            #expect(ContinuousClock.now - start < TLSTrust.fileWait + .seconds(10), "the transport waited for the file system")
            let request = TransportRequest(method: .get, url: "https://127.0.0.1:9/", deadline: .now + .seconds(5), maxResponseBytes: 10)
            let failure = await #expect(throws: TransportError.self) { _ = try await transport.send(request) }
            #expect(failure.map { "\($0)" }?.contains(path) == true, "\(failure.map { "\($0)" } ?? "")")
            try await transport.shutdown()
        }
    }
}
