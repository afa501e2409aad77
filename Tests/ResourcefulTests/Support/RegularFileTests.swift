import Foundation
@testable import Resourceful
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// One descriptor, checked and read: a FIFO, a directory or a file over the limit is a typed
/// failure at once, never a wait for a writer.
@Suite struct RegularFileTests {
    private func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("regular-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func readsARegularFileAndRefusesEverythingElse() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("config.json").path
        try Data("{\"a\": 1}".utf8).write(to: URL(fileURLWithPath: file))
        let (bytes, status) = try RegularFile.contents(of: file, maximumBytes: 64)
        #expect(bytes == Array("{\"a\": 1}".utf8))
        #expect(status.st_size == 8)

        // No writer ever opens this FIFO: a blocking open would wait for ever.
        let fifo = directory.appendingPathComponent("fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: RegularFile.Failure(reason: .notRegularFile)) { try RegularFile.contents(of: fifo, maximumBytes: 64) }
        #expect(throws: RegularFile.Failure(reason: .notRegularFile)) { try RegularFile.contents(of: directory.path, maximumBytes: 64) }
        #expect(throws: RegularFile.Failure(reason: .tooLarge(8))) { try RegularFile.contents(of: file, maximumBytes: 7) }
        #expect(throws: RegularFile.Failure(reason: .system(ENOENT))) {
            try RegularFile.contents(of: directory.appendingPathComponent("missing").path, maximumBytes: 64)
        }
    }

    /// A path swapped between a regular file and a FIFO while it is read, over and over: each
    /// read is the file's bytes or a refusal, and none waits.
    @Test func aFIFOSwappedInIsRefusedNeverWaitedOn() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ca.pem").path
        let content = Array("-----BEGIN CERTIFICATE-----\n".utf8)
        try Data(content).write(to: URL(fileURLWithPath: path))
        let rounds = 200
        // The swaps run on a thread of their own, off the cooperative pool.
        let swapper = Thread {
            for round in 0..<rounds {
                let next = directory.appendingPathComponent("next-\(round)").path
                if round.isMultiple(of: 2) {
                    _ = mkfifo(next, 0o600)
                } else {
                    _ = FileManager.default.createFile(atPath: next, contents: Data(content))
                }
                _ = rename(next, path)
            }
        }
        swapper.start()
        for _ in 0..<(rounds * 5) {
            do {
                let (bytes, _) = try RegularFile.contents(of: path, maximumBytes: 1024)
                #expect(bytes == content)
            } catch {
                #expect(error.reason == .notRegularFile)
            }
            await Task.yield()
        }
    }
}
