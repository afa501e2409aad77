import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Exchanges recorded from a MockServer through the live transport, then replayed with the
/// server gone: the five verbs, pagination, a retried 503, an error body, a binary body.
@Suite struct RecordAndReplayTests {
    typealias User = CassetteFixture.User

    /// Every call the suite makes, with what it returned, as text to compare.
    private func calls(_ api: API) async throws -> [String] {
        var results: [String] = []
        let shown = try await api.call(AdHocRequest<User, Empty>(.show, "users/1"))
        results.append("show \(shown)")
        let all = try await api.all(AdHocRequest<[User], Empty>(.index, "users"))
        results.append("index \(all)")
        let created = try await api.call(AdHocRequest<User, User>(.create, "users", parameters: User(id: 0, name: "Grace")))
        results.append("create \(created)")
        let updated = try await api.call(AdHocRequest<User, User>(.update, "users/1", parameters: User(id: 1, name: "Ada L.")))
        results.append("update \(updated)")
        _ = try await api.call(AdHocRequest<Empty, Empty>(.delete, "users/1"))
        results.append("delete")
        let retried = try await api.call(AdHocRequest<User, Empty>(.show, "flaky"))
        results.append("retried \(retried)")
        do {
            _ = try await api.call(ShowMissingUser())
            results.append("missing: no error")
        } catch {
            results.append("missing \(error.status?.code ?? 0) \(error.errorResponse(as: ShowMissingUser.Problem.self)?.error ?? "no body")")
        }
        let session = try await api.call(
            AdHocRequest<CassetteFixture.Session, CassetteFixture.Login>(
                .create, ResourcePath(encoded: "login?api_key=\(CassetteFixture.apiKey)"),
                parameters: CassetteFixture.Login(username: "ada", password: CassetteFixture.password)
            )
        )
        results.append("login \(session.user)")
        return results
    }

    private func stubs(_ server: MockServer) throws {
        let base = server.baseURL.absoluteString
        server.stub(.get, "/users/1", try .json(User(id: 1, name: "Ada")))
        var firstPage = try MockResponse.json([User(id: 1, name: "Ada")])
        firstPage.headerFields[HTTPField.Name("Link")!] = "<\(base)/users?page=2>; rel=\"next\""
        let first = firstPage
        server.route(.get, "/users") { request in
            request.query.contains("page=2") ? .json(raw: #"[{"id":2,"name":"Grace"}]"#) : first
        }
        server.stub(.post, "/users", try .json(User(id: 3, name: "Grace"), status: .created))
        server.stub(.put, "/users/1", try .json(User(id: 1, name: "Ada L.")))
        server.stub(.delete, "/users/1", .status(.noContent))
        server.stub(.get, "/flaky", .status(.serviceUnavailable), try .json(User(id: 7, name: "Flaky")))
        server.stub(.get, "/users/404", .json(raw: #"{"error":"no such user"}"#, status: .notFound))
        var login = try MockResponse.json(CassetteFixture.Session(accessToken: CassetteFixture.accessToken, user: "ada"))
        login.headerFields[.setCookie] = CassetteFixture.cookie
        server.stub(.post, "/login", login)
    }

    @Test func recordsFromALiveServerAndReplaysWithItGone() async throws {
        let file = try CassetteFixture.scratchFile()
        let (baseURL, recorded, requestsSeen) = try await MockServer.withTransport { server, live in
            try stubs(server)
            let recorder = try Cassette(file, mode: .record).transport(network: live)
            let recorded = try await calls(CassetteFixture.api(server.baseURL, recorder))
            return (server.baseURL, recorded, server.requests.count)
        }

        #expect(requestsSeen == 10)
        #expect(recorded.contains("retried User(id: 7, name: \"Flaky\")"))
        #expect(recorded.contains("missing 404 no such user"))
        #expect(recorded.contains("index [ResourcefulTestingTests.CassetteFixture.User(id: 1, name: \"Ada\"), ResourcefulTestingTests.CassetteFixture.User(id: 2, name: \"Grace\")]"))
        #expect(try CassetteFixture.secretsIn(file) == [])

        let replayer = try Cassette(file, mode: .replay).transport(network: StubTransport { _ in
            Issue.record("replay used the network")
            return TransportResponse(status: .internalServerError)
        })
        let replayed = try await calls(CassetteFixture.api(baseURL, replayer))
        #expect(replayed == recorded)
    }

    @Test func binaryAndCompressedBodiesAreKeptAsHARKeepsThem() async throws {
        let file = try CassetteFixture.scratchFile()
        let bytes = Data((0...255).map(UInt8.init) + (0...255).reversed().map(UInt8.init))
        try await MockServer.withRunning { server in
            server.stub(.get, "/blob", MockResponse(status: .ok, headerFields: [.contentType: "application/octet-stream"], body: bytes))
            let gzipped = try await Self.gzip(Data(#"{"id":5,"name":"Zipped"}"#.utf8))
            server.stub(.get, "/zipped", MockResponse(status: .ok, headerFields: [.contentType: "application/json", .contentEncoding: "gzip"], body: gzipped))
            // A transport that leaves bodies compressed: the recording must still keep the plain one.
            var settings = APIConfig.HTTPSettings()
            settings.decompression = false
            try await AsyncHTTPClientTransport.withTransport(settings: settings) { live in
                let recorder = try RecordingTransport(live, file: file, keepingBodiesThatCannotBeMasked: true)
                let blob = try await recorder.send(Self.get(server.baseURL, "blob"))
                #expect(Data(buffer: blob.body.bytes ?? ByteBuffer()) == bytes)
                let zipped = try await recorder.send(Self.get(server.baseURL, "zipped"))
                #expect(zipped.headerFields[.contentEncoding] == "gzip")
            }

            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(text.contains(#""encoding" : "base64""#))
            #expect(text.contains(#"{\"id\":5,\"name\":\"Zipped\"}"#))

            let replayer = try ReplayingTransport(file: file)
            let replayedBlob = try await replayer.send(Self.get(server.baseURL, "blob"))
            #expect(Data(buffer: replayedBlob.body.bytes ?? ByteBuffer()) == bytes)
            #expect(replayedBlob.headerFields[.contentType] == "application/octet-stream")
            let replayedZip = try await replayer.send(Self.get(server.baseURL, "zipped"))
            #expect(String(buffer: replayedZip.body.bytes ?? ByteBuffer()) == #"{"id":5,"name":"Zipped"}"#)
            #expect(replayedZip.headerFields[.contentEncoding] == nil)
        }
    }

    static func get(_ base: URL, _ path: String) -> TransportRequest {
        TransportRequest(method: .get, url: base.absoluteString + "/" + path, deadline: .now + .seconds(60), maxResponseBytes: 1 << 20)
    }

    /// `data` compressed by the system's gzip.
    static func gzip(_ data: Data) async throws -> Data {
        let input = try CassetteFixture.scratchFile("body.json")
        try data.write(to: input)
        let result = try await Command.run("/bin/gzip", ["-k", input.path])
        guard result.status == 0 else { throw Command.Failed(result: result) }
        return try Data(contentsOf: input.appendingPathExtension("gz"))
    }
}

/// A replayed request that no recording answers fails the call at once: trying again cannot
/// make a recording appear.
@Suite struct ReplayMissTests {
    @Test func aRequestNoRecordingAnswersIsNotRetried() async throws {
        let file = try CassetteFixture.scratchFile()
        _ = try RecordingTransport(StubTransport { _ in TransportResponse(status: .noContent) }, file: file)
        let replayer = try ReplayingTransport(file: file)
        let sends = Locked(0)
        let counting = StubTransport { request in
            sends.withLock { $0 += 1 }
            return try await replayer.send(request)
        }
        let api = CassetteFixture.api(URL(string: "http://127.0.0.1:9")!, counting)
        let error = await #expect(throws: APIError.self) { _ = try await api.call(ShowMissingUser()) }
        #expect(error?.kind == .transport)
        #expect((error?.underlying as? CassetteError)?.kind == .noRecording)
        #expect(sends.withLock { $0 } == 1)
    }
}
