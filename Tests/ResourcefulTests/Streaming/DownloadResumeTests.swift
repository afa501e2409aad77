import Foundation
import HTTPTypes
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#endif

/// `DownloadOptions.keepsPartialFile` (curl's `-C -`): a download that stops keeps its part and
/// what resuming it needs, private, and the next one continues it; nothing planted beside the
/// destination is used.
@Suite struct DownloadResumeTests {
    static let request = AdHocRequest<Empty, Empty>(.show, "asset")
    static let keeping = DownloadOptions(keepsPartialFile: true)

    /// Serves `DownloadTests.content` with `ETag "v1"`: slowly (64 KiB every 100 ms) without a
    /// `Range`, at once as a `206` with one whose `If-Range` matches.
    static func serve(_ server: MockServer) {
        server.route(.get, "/v1/asset") { request in
            var fields: HTTPFields = [.contentType: "application/octet-stream", .eTag: "\"v1\""]
            var start = 0
            var status = HTTPResponse.Status.ok
            if let range = request.headerFields[.range], request.headerFields[.ifRange] == "\"v1\"", let first = Int(range.dropFirst(6).dropLast()) {
                start = first
                status = .partialContent
                fields[.contentRange] = "bytes \(first)-\(DownloadTests.content.count - 1)/\(DownloadTests.content.count)"
            }
            let body = DownloadTests.content[start...]
            fields[.contentLength] = String(body.count)
            var response = MockResponse(status: status, headerFields: fields)
            response.parts = stride(from: body.startIndex, to: body.endIndex, by: 64 * 1024).map { Data(body[$0..<min($0 + 64 * 1024, body.endIndex)]) }
            if status == .ok { response.partDelay = .milliseconds(100) }
            return response
        }
    }

    static func mode(_ path: String) -> mode_t? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        return status.st_mode
    }

    /// Starts a download with `options` and cancels it once the server sent `bytes` of the body.
    static func interrupted(_ api: API, _ server: MockServer, to destination: URL, after bytes: Int) async throws -> APIError? {
        let work = Task { try await api.download(Self.request, to: destination, options: Self.keeping) }
        let giveUp = ContinuousClock.now + .seconds(60)
        while server.bodyBytesSent < bytes, ContinuousClock.now < giveUp {
            try await Task.sleep(for: .milliseconds(10))
        }
        work.cancel()
        do {
            _ = try await work.value
            return nil
        } catch {
            return error as? APIError
        }
    }

    @Test func aCancelledDownloadKeepsItsPartPrivateAndTheNextOneResumesIt() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        let partial = DownloadOptions.partialFile(for: destination).path
        let state = DownloadOptions.partialStateFile(for: destination).path
        try await Harness.run { harness in
            Self.serve(harness.server)
            let error = try await Self.interrupted(harness.api, harness.server, to: destination, after: 200_000)
            #expect(error?.kind == .cancelled)
            let kept = try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int ?? 0
            #expect(kept > 0 && kept < DownloadTests.content.count)
            #expect(Self.mode(partial).map { $0 & 0o7777 } == 0o600)
            #expect(Self.mode(state).map { $0 & 0o7777 } == 0o600)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            // The state names the request by a digest only.
            let text = try String(contentsOfFile: state, encoding: .utf8)
            #expect(!text.contains("asset"))
            #expect(text.contains("\"v1\""))

            let result = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
            #expect(result.status == .partialContent)
            let last = try #require(harness.server.requests.last)
            #expect(last.headerFields[.range] == "bytes=\(kept)-")
            #expect(last.headerFields[.ifRange] == "\"v1\"")
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
        }
    }

    @Test func aWholeDownloadWithoutTheOptionRemovesAnOlderPart() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        let partial = DownloadOptions.partialFile(for: destination).path
        try await Harness.run { harness in
            Self.serve(harness.server)
            let error = try await Self.interrupted(harness.api, harness.server, to: destination, after: 200_000)
            #expect(error?.kind == .cancelled)
            #expect(FileManager.default.fileExists(atPath: partial))
            // The whole body, without resuming: the part is older than the file, and goes.
            let result = try await harness.api.download(Self.request, to: destination)
            #expect(result.status == .ok)
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
        }
    }

    @Test func withoutTheOptionACancelledDownloadKeepsNothing() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await Harness.run { harness in
            Self.serve(harness.server)
            let api = harness.api
            let work = Task { try await api.download(Self.request, to: folder.appendingPathComponent("asset.bin")) }
            let giveUp = ContinuousClock.now + .seconds(60)
            while harness.server.bodyBytesSent < 200_000, ContinuousClock.now < giveUp {
                try await Task.sleep(for: .milliseconds(10))
            }
            work.cancel()
            _ = try? await work.value
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        }
    }

    /// What another user (or a mistake) may leave at the part's name.
    enum Planted: String, CaseIterable {
        case symbolicLink, fifo, writableByOthers, hardLink
    }

    @Test(arguments: Planted.allCases)
    func aPartPlantedBesideTheDestinationIsNotUsed(planted: Planted) async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        let partial = DownloadOptions.partialFile(for: destination).path
        let target = folder.appendingPathComponent("precious").path
        try Data("precious".utf8).write(to: URL(fileURLWithPath: target))
        switch planted {
        case .symbolicLink: try #require(symlink(target, partial) == 0)
        case .fifo: try #require(mkfifo(partial, 0o600) == 0)
        case .writableByOthers:
            try Data("x".utf8).write(to: URL(fileURLWithPath: partial))
            try #require(chmod(partial, 0o666) == 0)
        case .hardLink: try #require(link(target, partial) == 0)
        }
        try await Harness.run { harness in
            Self.serve(harness.server)
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
            }
            #expect(error?.kind == .file)
            #expect(error?.detail?.contains(partial) == true, "\(String(describing: error))")
            #expect(harness.server.requests.isEmpty)
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "precious")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func aStateForAnotherRequestOrNotWrittenByADownloadStartsFromTheFirstByte() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        let partial = DownloadOptions.partialFile(for: destination).path
        let state = DownloadOptions.partialStateFile(for: destination).path
        let states = [
            "resourceful-partial 1\n" + String(repeating: "0", count: 64) + "\n1048576\n\"v1\"\n",
            "resourceful-partial 1\nx\n1048576\n\"v1\"\r\nX-Injected: 1\n",
            "something else",
        ]
        try await Harness.run { harness in
            Self.serve(harness.server)
            for text in states {
                try Data(repeating: 9, count: 1000).write(to: URL(fileURLWithPath: partial))
                try #require(chmod(partial, 0o600) == 0)
                try Data(text.utf8).write(to: URL(fileURLWithPath: state))
                try #require(chmod(state, 0o600) == 0)
                let before = harness.server.requests.count
                _ = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
                let sent = harness.server.requests.dropFirst(before)
                #expect(sent.allSatisfy { $0.headerFields[.range] == nil && $0.headerFields[.ifRange] == nil })
                #expect(try Data(contentsOf: destination) == DownloadTests.content)
                #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
            }
        }
    }

    @Test func aSecondDownloadToTheSameFileDoesNotWriteIntoThePartTheFirstHolds() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        try await Harness.run { harness in
            Self.serve(harness.server)
            let api = harness.api
            let first = Task { try await api.download(Self.request, to: destination, options: Self.keeping) }
            let giveUp = ContinuousClock.now + .seconds(60)
            while harness.server.bodyBytesSent == 0, ContinuousClock.now < giveUp {
                try await Task.sleep(for: .milliseconds(10))
            }
            let error = await #expect(throws: APIError.self) {
                _ = try await api.download(Self.request, to: destination, options: Self.keeping)
            }
            #expect(error?.kind == .file)
            #expect(error?.detail?.contains("another download") == true, "\(String(describing: error))")
            let result = try await first.value
            #expect(result.bytes == DownloadTests.content.count)
            #expect(try Data(contentsOf: destination) == DownloadTests.content)
        }
    }

    @Test func aPartTheServerCannotContinueStartsAgain() async throws {
        let folder = try DownloadTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("asset.bin")
        try await Harness.run { harness in
            Self.serve(harness.server)
            _ = try await Self.interrupted(harness.api, harness.server, to: destination, after: 200_000)
            // The file on the server shrank under the same ETag: the range cannot be satisfied.
            harness.server.route(.get, "/v1/asset") { request in
                if request.headerFields[.range] != nil {
                    return MockResponse(status: .rangeNotSatisfiable, headerFields: [.contentRange: "bytes */10"])
                }
                var response = MockResponse(headerFields: [.eTag: "\"v2\"", .contentLength: "10"])
                response.body = Data("0123456789".utf8)
                return response
            }
            let result = try await harness.api.download(Self.request, to: destination, options: Self.keeping)
            #expect(result.bytes == 10)
            #expect(try Data(contentsOf: destination) == Data("0123456789".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["asset.bin"])
        }
    }
}
