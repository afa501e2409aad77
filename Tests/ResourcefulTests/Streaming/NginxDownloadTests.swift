import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Downloads from nginx, which answers `Range` and `If-Range` with its own ETags, from a
/// rate-limited location, through a relay that cuts the first connections mid-body
/// (`Tests/Support/PythonServers/cutting_relay.py`).
@Suite struct NginxDownloadTests {
    static let size = 8 << 20

    static func withNginx(_ body: (Nginx, Data) async throws -> Void) async throws {
        let content = try await onOwnThread { try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom")).readData(ofLength: size) }
        let nginx = try await Nginx.start(
            server: """
                location /files/ { }
                # The same files at 16 MiB/s, so that a cut comes in the middle of a transfer
                # still under way rather than after nginx has written everything.
                location /slow/ { rewrite ^/slow/(.*)$ /files/$1 break; limit_rate 16m; }
                """
        ) { nginx in
            let files = nginx.root.appendingPathComponent("files")
            try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
            try content.write(to: files.appendingPathComponent("asset.bin"))
            try nginx.makeReadable()
        }
        do {
            try await body(nginx, content)
        } catch {
            try await nginx.stop()
            throw error
        }
        try await nginx.stop()
    }

    static func api(_ url: URL) -> API {
        let config = APIConfig(baseURL: url, service: "files", timeout: .seconds(30))
        return API(dependencies: APIDependencies(apiConfig: config, transport: AsyncHTTPClientTransport()))
    }

    @Test func aDownloadCutTwiceResumesFromNginxToTheSameBytes() async throws {
        try await Self.withNginx { nginx, content in
            let relay = try await PythonServer("cutting_relay.py", ["--upstream-port", "\(nginx.port)", "--cut-after", "2000000", "--cuts", "2"])
            defer { Task { await relay.stop() } }
            let api = Self.api(relay.baseURL)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-nginx-download-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let destination = folder.appendingPathComponent("asset.bin")
            let progress = Locked<[DownloadProgress]>([])
            let result = try await api.download(AdHocRequest<Empty, Empty>(.show, "slow/asset.bin"), to: destination) { step in
                progress.withLock { $0.append(step) }
            }
            try await api.shutdown()
            #expect(result.connections == 3)
            #expect(result.status == .partialContent)
            #expect(result.bytes == Self.size)
            #expect(try Data(contentsOf: destination) == content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
            // nginx logged a whole answer, then two ranges that continued it.
            let statuses = nginx.accessLog.map { $0.split(separator: " ")[2] }
            #expect(statuses == ["200", "206", "206"])
            #expect(progress.withLock { $0.last?.bytesWritten } == Self.size)
        }
    }

    @Test func aFileChangedBetweenConnectionsStartsAgainWhole() async throws {
        try await Self.withNginx { nginx, content in
            let relay = try await PythonServer("cutting_relay.py", ["--upstream-port", "\(nginx.port)", "--cut-after", "2000000", "--cuts", "1"])
            defer { Task { await relay.stop() } }
            let api = Self.api(relay.baseURL)
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-nginx-download-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            // The file changes while the first connection runs: its ETag no longer matches, and
            // nginx answers the If-Range request with the whole new file.
            let changed = Data(content.reversed())
            let asset = nginx.root.appendingPathComponent("files/asset.bin")
            let replaced = Locked(false)
            let progress: @Sendable (DownloadProgress) -> Void = { step in
                // At the first head: nginx goes on sending the file it opened.
                let first = replaced.withLock { done in
                    defer { done = true }
                    return !done
                }
                if step.connections == 1, first {
                    let replacement = asset.deletingLastPathComponent().appendingPathComponent("next.bin")
                    try? changed.write(to: replacement)
                    // A later time than the first file's, whatever the clock's resolution: nginx's
                    // ETag is the time and size.
                    try? FileManager.default.setAttributes([.posixPermissions: 0o644, .modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: replacement.path)
                    rename(replacement.path, asset.path)
                }
            }
            let destination = folder.appendingPathComponent("asset.bin")
            let result = try await api.download(AdHocRequest<Empty, Empty>(.show, "files/asset.bin"), to: destination, progress: progress)
            try await api.shutdown()
            #expect(result.status == .ok)
            #expect(result.connections == 2)
            #expect(try Data(contentsOf: destination) == changed)
        }
    }
}
