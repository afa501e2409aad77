import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A download whose destination is on a file system that does not answer (a FUSE mount whose
/// daemon never replies, as a hung network mount behaves) returns a typed error by its deadline,
/// or as soon as it is cancelled; it never waits for the file system without end.
@Suite(.serialized, .enabled(if: HungFileSystem.available, "needs root and /dev/fuse"))
struct HungFileSystemTests {
    struct Asset: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.show
        let path: ResourcePath = "asset"
        let streamTimeout: Duration?
        func configure(_ options: inout RequestOptions) { options.streamTimeout = streamTimeout }
    }

    @Test(.timeLimit(.minutes(2)), arguments: [false, true])
    func aDestinationThatHangsFailsByTheDeadline(keepsPartialFile: Bool) async throws {
        try await HungFileSystem.with { folder in
            try await Harness.run { harness in
                DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
                // Every name on the mount is built without looking at it (`isDirectory: false`):
                // looking waits as long as the file system does.
                let streamTimeout = Duration.seconds(1)
                let start = ContinuousClock.now
                let error = await #expect(throws: APIError.self) {
                    _ = try await harness.api.download(
                        Asset(streamTimeout: streamTimeout),
                        to: folder.appendingPathComponent("asset.bin", isDirectory: false),
                        options: DownloadOptions(keepsPartialFile: keepsPartialFile)
                    )
                }
                #expect(error?.kind == .timeout)
                // The deadline, and as long again for a loaded machine: the file system never answers.
                #expect(ContinuousClock.now - start < streamTimeout * 2 + .seconds(1))
                #expect(harness.server.requests.isEmpty)
            }
        }
    }

    /// Without a deadline for the whole download, each wait for the file system is bounded by
    /// the request's time-out, as each silence of the server is (the command line's `--timeout`).
    @Test(.timeLimit(.minutes(2)))
    func aDestinationThatHangsFailsWithinTheRequestsTimeOut() async throws {
        try await HungFileSystem.with { folder in
            try await Harness.run { (harness: inout Harness) async throws in
                DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
                let timeout = Duration.seconds(1)
                harness.dependencies.apiConfig.timeout = timeout
                let api = harness.api
                let start = ContinuousClock.now
                let error = await #expect(throws: APIError.self) {
                    _ = try await api.download(Asset(streamTimeout: nil), to: folder.appendingPathComponent("asset.bin", isDirectory: false))
                }
                #expect(error?.kind == .timeout)
                #expect(error?.detail?.contains("request's time-out") == true, "\(String(describing: error))")
                // The time-out, and as long again for a loaded machine: the file system never answers.
                #expect(ContinuousClock.now - start < timeout * 2 + .seconds(1))
                #expect(harness.server.requests.isEmpty)
            }
        }
    }

    @Test(.timeLimit(.minutes(2))) func aCancelledDownloadToADestinationThatHangsReturns() async throws {
        try await HungFileSystem.with { folder in
            try await Harness.run { harness in
                DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
                let api = harness.api
                let work = Task { try await api.download(Asset(streamTimeout: nil), to: folder.appendingPathComponent("asset.bin", isDirectory: false)) }
                // Cancelled once a thread of this process waits on the mount, not after a guess.
                let giveUp = ContinuousClock.now + .seconds(20)
                while !HungFileSystem.aThreadWaits(), ContinuousClock.now < giveUp { try await Task.sleep(for: .milliseconds(5)) }
                #expect(HungFileSystem.aThreadWaits(), "the download never reached the file system")
                let cancelled = ContinuousClock.now
                work.cancel()
                let error = await #expect(throws: APIError.self) { _ = try await work.value }
                #expect(error?.kind == .cancelled)
                #expect(ContinuousClock.now - cancelled < .seconds(2))
                #expect(harness.server.requests.isEmpty)
            }
        }
    }
}

extension HungFileSystemTests {
    @Test(.timeLimit(.minutes(2))) func downloadsOntoAHungFileSystemLeaveOtherDownloadsTheirThreads() async throws {
        // More downloads onto the hung mount than NIO's shared thread pool has threads (one a
        // core): each holds a thread of its own, and a download to a folder that answers, started
        // after them, finishes. Before, they held every thread of the pool and it waited too.
        let hung = ProcessInfo.processInfo.activeProcessorCount + 1
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await HungFileSystem.with { hungFolder in
            try await Harness.run { harness in
                DownloadTests.serve(harness.server, cuts: 0, cutAt: 0)
                let api = harness.api
                let waiting = (0..<hung).map { number in
                    Task {
                        try await api.download(
                            Asset(streamTimeout: .seconds(90)), to: hungFolder.appendingPathComponent("asset-\(number).bin", isDirectory: false))
                    }
                }
                defer { for download in waiting { download.cancel() } }
                let giveUp = ContinuousClock.now + .seconds(15)
                while HungFileSystem.threadsWaiting(named: "resourceful-io") < hung, ContinuousClock.now < giveUp {
                    try await Task.sleep(for: .milliseconds(5))
                }
                // At least as many as NIO's pool has threads (a loaded machine may start the last
                // download late): before, those were the pool's, and no thread of its own waited.
                #expect(
                    HungFileSystem.threadsWaiting(named: "resourceful-io") >= hung - 1,
                    "the downloads do not each wait on a thread of their own: \(HungFileSystem.threadStates())")

                let start = ContinuousClock.now
                let result = try await api.download(
                    Asset(streamTimeout: .seconds(10)), to: folder.appendingPathComponent("asset.bin", isDirectory: false))
                #expect(result.bytes == DownloadTests.content.count)
                #expect(ContinuousClock.now - start < .seconds(10))
                for download in waiting {
                    download.cancel()
                    let error = await #expect(throws: APIError.self) { _ = try await download.value }
                    #expect(error?.kind == .cancelled)
                }
            }
        }
    }
}

/// A FUSE mount without a daemon: every call that looks into it waits until the connection is
/// closed. The mount sits in a folder of its own under the temporary folder.
enum HungFileSystem {
    /// Every thread of this process as `name:state`, for a failure's message.
    static func threadStates() -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> String? in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let start = stat.firstIndex(of: "("), let end = stat.lastIndex(of: ")")
            else { return nil }
            return "\(stat[stat.index(after: start)..<end]):\(stat[stat.index(after: end)...].split(separator: " ").first ?? "?")"
        }.sorted().joined(separator: " ")
    }

    /// How many threads of this process named `name` wait in the kernel (state `D`), as calls
    /// into the hung mount do.
    static func threadsWaiting(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.count { task in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let start = stat.firstIndex(of: "("), let end = stat.lastIndex(of: ")")
            else { return false }
            return stat[stat.index(after: start)..<end] == name && stat[stat.index(after: end)...].split(separator: " ").first == "D"
        }
    }

    /// Whether a thread of this process waits in the kernel (state `D`: a FUSE request waits
    /// killably for its answer), as a call into the hung mount does.
    static func aThreadWaits() -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains { task in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return false }
            return stat[stat.index(after: end)...].split(separator: " ").first == "D"
        }
    }

    /// Whether this process may mount one (root, `/dev/fuse`).
    static let available: Bool = geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0

    /// Mounts a hung file system, runs `body` with a folder on it, then ends the connection (the
    /// calls waiting on it fail) and unmounts it, whatever `body` does. A call still waiting after
    /// 30 s is released too, so that a download that waits without end fails its test rather than
    /// hang it.
    static func with(_ body: (URL) async throws -> Void) async throws {
        let base = try DownloadTests.folder()
        let mountPoint = base.appendingPathComponent("hung")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let connection = open("/dev/fuse", O_RDWR | O_CLOEXEC)
        try #require(connection >= 0)
        let options = "fd=\(connection),rootmode=40000,user_id=0,group_id=0"
        guard options.withCString({ mount("resourceful-hung", mountPoint.path, "fuse", 0, $0) }) == 0 else {
            close(connection)
            Issue.record("mount: \(String(cString: strerror(errno)))")
            return
        }
        let released = Mutex(false)
        let release: @Sendable () -> Void = {
            released.withLock { done in
                guard !done else { return }
                done = true
                // Closing the connection aborts it: every waiting call fails with ENOTCONN.
                close(connection)
                umount2(mountPoint.path, Int32(MNT_DETACH))
            }
        }
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(30))
            release()
        }
        defer {
            watchdog.cancel()
            release()
        }
        try await body(mountPoint)
    }
}
