import Foundation
import HTTPTypes
import NIOCore
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

/// Servers that send what a client must not trust: bombs, endless pages, huge waits, response
/// text meant for an error message, bodies it cannot decode.
@Suite struct HostileServerTests {
    /// `data` compressed by Python's `gzip` or `zlib` module (zlib's own deflate format).
    static func compressed(_ data: Data, _ format: String) async throws -> Data {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in"), output = directory.appendingPathComponent("out")
        try data.write(to: input)
        let script = "import gzip, zlib, sys; d = open(sys.argv[1], 'rb').read(); open(sys.argv[2], 'wb').write(gzip.compress(d) if sys.argv[3] == 'gzip' else zlib.compress(d))"
        let run = try await Command.run("/usr/bin/env", ["python3", "-c", script, input.path, output.path, format])
        guard run.status == 0 else { throw Command.Failed(result: run) }
        return try Data(contentsOf: output)
    }

    static let users = Data(#"[{"id":1,"name":"Ada"},{"id":2,"name":"Grace"}]"#.utf8)

    @Test(arguments: ["gzip", "deflate"])
    func aCompressedBodySentUnaskedIsDecoded(format: String) async throws {
        try await Harness.run { harness in
            var response = MockResponse.json(raw: try await Self.compressed(Self.users, format))
            response.headerFields[.contentEncoding] = format
            harness.server.stub(.get, "/v1/users", response)
            let users = try await harness.api.call(AdHocRequest<[User], Empty>(.index, "users"))
            #expect(users.map(\.name) == ["Ada", "Grace"])
            #expect(harness.server.requests.first?.headerFields[.acceptEncoding]?.contains("gzip") == true)
        }
    }

    @Test func aDecompressionBombIsResponseTooLarge() async throws {
        let bomb = try await Self.compressed(Data(repeating: 0x20, count: 64 << 20), "gzip")
        #expect(bomb.count < 200_000)
        try await Harness.run(configure: { $0.retry = .never }) { harness in
            var response = MockResponse.json(raw: bomb)
            response.headerFields[.contentEncoding] = "gzip"
            harness.server.stub(.get, "/v1/bomb", response)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[User], Empty>(.show, "bomb")) }
            #expect(error?.kind == .responseTooLarge)
        }
        // Within the ratio, the size cap applies to the decompressed body.
        try await Harness.run(configure: { $0.http.maxDecompressionRatio = 100_000; $0.maxResponseBytes = 1 << 20 }) { harness in
            var response = MockResponse.json(raw: bomb)
            response.headerFields[.contentEncoding] = "gzip"
            harness.server.stub(.get, "/v1/bomb", response)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[User], Empty>(.show, "bomb")) }
            #expect(error?.kind == .responseTooLarge)
        }
    }

    @Test func anEncodingThatIsNotDecodedHasItsOwnError() async throws {
        try await Harness.run { harness in
            var brotli = MockResponse.json(raw: Data([0x1B, 0x03, 0x00, 0xF8]))
            brotli.headerFields[.contentEncoding] = "br"
            harness.server.stub(.get, "/v1/br", brotli)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[User], Empty>(.show, "br")) }
            #expect(error?.kind == .unsupportedContentEncoding)
            #expect(error?.description.contains("br") == true)
        }
        try await Harness.run(configure: { $0.http.decompression = false }) { harness in
            var gzip = MockResponse.json(raw: try await Self.compressed(Self.users, "gzip"))
            gzip.headerFields[.contentEncoding] = "gzip"
            harness.server.stub(.get, "/v1/users", gzip)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[User], Empty>(.index, "users")) }
            #expect(error?.kind == .unsupportedContentEncoding)
            #expect(harness.server.requests.first?.headerFields[.acceptEncoding] == nil)
        }
    }

    @Test func nginxCompressingJSONIsReadAsTheSameValue() async throws {
        let users = (1...200).map { User(id: $0, name: "User number \($0)") }
        let nginx = try await Nginx.start(server: "gzip on; gzip_types application/json; gzip_min_length 1;") { nginx in
            try JSONEncoder().encode(users).write(to: nginx.root.appendingPathComponent("users"))
            try nginx.makeReadable()
        }
        try await AsyncHTTPClientTransport.withTransport { transport in
            let config = APIConfig(baseURL: URL(string: "http://127.0.0.1:\(nginx.port)")!, service: "nginx")
            let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
            let response = try await api.response(AdHocRequest<[User], Empty>(.index, "users"))
            #expect(response.value == users)
            #expect(response.headerFields[.contentEncoding] == nil)
            // nginx did compress it: asked by a transport that does not decompress, the body is gzip.
            let plainTransport = AsyncHTTPClientTransport(settings: .init(decompression: false))
            let raw = try await plainTransport.send(
                TransportRequest(method: .get, url: "http://127.0.0.1:\(nginx.port)/users", headerFields: [.acceptEncoding: "gzip"], deadline: .now + .seconds(60), maxResponseBytes: 1 << 20)
            )
            try await plainTransport.shutdown()
            let plain = try JSONEncoder().encode(users)
            #expect(raw.headerFields[.contentEncoding] == "gzip")
            #expect((raw.body.length ?? .max) < plain.count / 2)
        }
        try await nginx.stop()
    }

    @Test func endlessNextLinksStopAtThePageLimit() async throws {
        try await Harness.run { harness in
            harness.server.route(.get, "/v1/items") { request in
                let page = Int(request.queryItems.first { $0.name == "page" }?.value ?? "0") ?? 0
                var response = MockResponse.json(raw: "[\(page)]")
                response.headerFields[HTTPField.Name("Link")!] = "</v1/items?page=\(page + 1)>; rel=\"next\""
                return response
            }
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.all(AdHocRequest<[Int], Empty>(.index, "items"), maxPages: 7)
            }
            #expect(error?.kind == .tooManyPages)
            #expect(harness.server.requests.count == 7)
            var pages = 0
            let sequenceError = await #expect(throws: APIError.self) {
                for try await _ in harness.api.pages(AdHocRequest<[Int], Empty>(.index, "items"), maxPages: 3) { pages += 1 }
            }
            #expect(sequenceError?.kind == .tooManyPages)
            #expect(pages == 3)
        }
    }

    @Test func aHugeRetryAfterEndsTheCallWithTheAnswerInsteadOfWaiting() async throws {
        let deadline = Duration.seconds(60)
        try await Harness.run(configure: { $0.timeout = deadline }) { harness in
            var response = MockResponse.status(.serviceUnavailable)
            response.headerFields[.retryAfter] = "99999999999999999999"
            harness.server.stub(.get, "/v1/x", response, .status(.noContent))
            var date = MockResponse.status(.tooManyRequests)
            date.headerFields[.retryAfter] = "Fri, 31 Dec 9999 23:59:59 GMT"
            harness.server.stub(.get, "/v1/y", date, .status(.noContent))
            let start = ContinuousClock.now
            for path in ["x", "y"] {
                let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "\(path)")) }
                #expect(error?.kind == .unacceptableStatus)
            }
            // At once: not the years asked for, nor the deadline (half of it allows for a loaded
            // machine).
            #expect(ContinuousClock.now - start < deadline / 2)
        }
    }

    @Test func aKeyFromTheBodyNeverReachesTheErrorDescription() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/users", .json(raw: #"{"sk_live_SECRET_KEY_9":{"id":1,"name":5}}"#))
            harness.server.stub(.get, "/v1/list", .json(raw: #"[{"id":1,"name":"a"},{"id":2,"name":false}]"#))
            for decoder in [APIConfig.DecoderChoice.fast, .foundation] {
                harness.dependencies.responseDecoder = APIConfig.Coding(decoder: decoder).makeResponseDecoder()
                let error = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[String: User], Empty>(.index, "users")) }
                #expect(error?.kind == .decodingFailed)
                #expect(error?.codingPath == "*.name")
                #expect(!"\(error.map { "\($0)" } ?? "")".contains("SECRET"))
                let listError = await #expect(throws: APIError.self) { _ = try await harness.api.call(AdHocRequest<[User], Empty>(.index, "list")) }
                #expect(listError?.codingPath == "[1].name")
            }
        }
    }
}
