import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import MetricsTestKit
import ProcessTestSupport
@testable import Resourceful
import ResourcefulTesting
import Testing

/// `HTTPCacheMiddleware` against nginx serving files: its `ETag`, `Last-Modified` and `304`s,
/// and `Cache-Control`, `Expires` and `Vary` fields set per location.
@Suite(.serialized) struct HTTPCacheNginxTests {
    struct Item: Codable, Sendable, Equatable { var id: Int; var name: String }

    static let server = """
        location /fresh/ { add_header Cache-Control "max-age=60"; if ($request_method = POST) { return 201 '{"id":0,"name":"new"}'; } }
        location /expires/ { add_header Expires "Thu, 01 Jan 2099 00:00:00 GMT"; }
        location /expired/ { add_header Expires "0"; }
        location /vary/ { add_header Vary "Accept-Language"; add_header Cache-Control "max-age=60"; }
        location /nostore/ { add_header Cache-Control "no-store"; }
        location /nocache/ { add_header Cache-Control "no-cache, max-age=60"; }
        location /public/ { add_header Cache-Control "public, max-age=60"; }
        location /big/ { add_header Cache-Control "max-age=60"; }
        """

    /// nginx with an `item.json` in each location, and three padded ones in `big/`.
    static func startNginx() async throws -> Nginx {
        try await Nginx.start(server: server) { nginx in
            for folder in ["fresh", "expires", "expired", "vary", "nostore", "nocache", "public", "plain"] {
                let directory = nginx.root.appendingPathComponent(folder)
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try JSONEncoder().encode(Item(id: 1, name: folder)).write(to: directory.appendingPathComponent("item.json"))
            }
            let big = nginx.root.appendingPathComponent("big")
            try FileManager.default.createDirectory(at: big, withIntermediateDirectories: true)
            for name in ["a", "b", "c"] {
                try JSONEncoder().encode(Item(id: 2, name: String(repeating: name, count: 1000))).write(to: big.appendingPathComponent("\(name).json"))
            }
            try nginx.makeReadable()
        }
    }

    /// An API over nginx with the cache last, its log lines and metrics kept.
    struct Cached {
        let api: API
        let storage: InMemoryHTTPCacheStorage
        let logs: InMemoryLogHandler
        let metrics: TestMetrics
        let transport: AsyncHTTPClientTransport

        init(_ nginx: Nginx, token: String? = nil, maxBytes: Int = 1 << 20, configure: (inout APIConfig) -> Void = { _ in }) throws {
            var config = APIConfig(baseURL: try #require(URL(string: "http://127.0.0.1:\(nginx.port)")), service: "nginx")
            configure(&config)
            let storage = InMemoryHTTPCacheStorage(maxBytes: maxBytes)
            let logs = InMemoryLogHandler()
            let metrics = TestMetrics()
            var logger = Logger(label: "cache") { _ in logs }
            logger.logLevel = .debug
            let transport = AsyncHTTPClientTransport()
            let credentials = InMemoryAuthenticationStorage(token.map { ["nginx": $0] } ?? [:])
            let dependencies = APIDependencies(apiConfig: config, authenticationStorage: credentials, transport: transport, logger: logger)
            let cache = HTTPCacheMiddleware(storage: storage, factory: metrics, now: { Date() })
            api = API(dependencies: dependencies, middlewares: API.defaultMiddlewares + [cache])
            self.storage = storage
            self.logs = logs
            self.metrics = metrics
            self.transport = transport
        }

        func get(_ path: String, language: String? = nil) async throws -> Item {
            try await api.call(Show(path: ResourcePath(encoded: path), language: language))
        }

        /// The cache results logged, in order.
        var results: [String] {
            logs.entries.compactMap { entry in entry.metadata["resourceful.cache"].map { "\($0)" } }
        }
    }

    struct Show: ResourceRequest {
        typealias ResourceType = Item
        let verb = ResourceVerb.show
        let path: ResourcePath
        let language: String?
        var headers: [String: String] { language.map { ["Accept-Language": $0] } ?? [:] }
    }

    /// What nginx logged: status and method of each request to `uri`.
    static func served(_ nginx: Nginx, _ uri: String) -> [String] {
        nginx.accessLog.compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count >= 5 && parts[4] == uri ? "\(parts[3]) \(parts[2])" : nil
        }
    }

    @Test func aSecondCallRevalidatesAndIsAnsweredFromTheCache() async throws {
        let nginx = try await Self.startNginx()
        let cached = try Cached(nginx)
        #expect(try await cached.get("plain/item.json") == Item(id: 1, name: "plain"))
        #expect(try await cached.get("plain/item.json") == Item(id: 1, name: "plain"))
        #expect(try await cached.get("expired/item.json") == Item(id: 1, name: "expired"))
        #expect(try await cached.get("expired/item.json") == Item(id: 1, name: "expired"))
        _ = await nginx.requestCount(reaching: 4)
        #expect(Self.served(nginx, "/plain/item.json") == ["GET 200", "GET 304"])
        #expect(Self.served(nginx, "/expired/item.json") == ["GET 200", "GET 304"])
        #expect(cached.results == ["miss", "revalidated", "miss", "revalidated"])
        #expect(try cached.metrics.expectCounter(HTTPCacheMiddleware.metricLabel, [("result", "revalidated")]).totalValue == 2)
        // `no-cache`: stored, but revalidated every time, whatever its max-age.
        _ = try await cached.get("nocache/item.json")
        _ = try await cached.get("nocache/item.json")
        _ = await nginx.requestCount(reaching: 6)
        #expect(Self.served(nginx, "/nocache/item.json") == ["GET 200", "GET 304"])
        // A request's own `no-cache` revalidates a fresh entry.
        _ = try await cached.get("fresh/item.json")
        _ = try await cached.api.call(AdHocRequest<Item, Empty>(.show, "fresh/item.json", headers: ["Cache-Control": "no-cache"]))
        _ = await nginx.requestCount(reaching: 8)
        #expect(Self.served(nginx, "/fresh/item.json") == ["GET 200", "GET 304"])
        try await cached.transport.shutdown()
        try await nginx.stop()
    }

    @Test func maxAgeAndExpiresAvoidTheNetwork() async throws {
        let nginx = try await Self.startNginx()
        let cached = try Cached(nginx)
        for _ in 0..<3 {
            #expect(try await cached.get("fresh/item.json").name == "fresh")
            #expect(try await cached.get("expires/item.json").name == "expires")
        }
        _ = await nginx.requestCount(reaching: 2)
        #expect(Self.served(nginx, "/fresh/item.json") == ["GET 200"])
        #expect(Self.served(nginx, "/expires/item.json") == ["GET 200"])
        #expect(cached.results.filter { $0 == "hit" }.count == 4)
        let response = try await cached.api.response(Show(path: "fresh/item.json", language: nil))
        #expect(response.headerFields[.age] != nil)
        try await cached.transport.shutdown()
        try await nginx.stop()
    }

    @Test func varyAndNoStoreAreHonoured() async throws {
        let nginx = try await Self.startNginx()
        let cached = try Cached(nginx)
        _ = try await cached.get("vary/item.json", language: "en")
        _ = try await cached.get("vary/item.json", language: "en")
        _ = try await cached.get("vary/item.json", language: "fr")
        _ = try await cached.get("nostore/item.json")
        _ = try await cached.get("nostore/item.json")
        _ = await nginx.requestCount(reaching: 4)
        #expect(Self.served(nginx, "/vary/item.json").count == 2)
        #expect(Self.served(nginx, "/nostore/item.json").count == 2)
        #expect(cached.results == ["miss", "hit", "miss", "miss", "miss"])
        #expect(cached.storage.count == 1)
        try await cached.transport.shutdown()
        try await nginx.stop()
    }

    @Test func anUnsafeCallInvalidatesItsURL() async throws {
        let nginx = try await Self.startNginx()
        let cached = try Cached(nginx)
        _ = try await cached.get("fresh/item.json")
        _ = try await cached.get("fresh/item.json")
        let created = try await cached.api.call(AdHocRequest<Item, Item>(.create, ResourcePath(encoded: "fresh/item.json"), parameters: Item(id: 0, name: "new")))
        #expect(created.name == "new")
        _ = try await cached.get("fresh/item.json")
        _ = await nginx.requestCount(reaching: 3)
        // The GET after the POST missed and went to nginx. nginx logs a POST once it has read its
        // body, which may be after it answered the next GET on another connection: the log is
        // compared as a multiset, the order comes from the cache's own results.
        #expect(cached.results == ["miss", "hit", "miss"])
        #expect(Self.served(nginx, "/fresh/item.json").sorted() == ["GET 200", "GET 200", "POST 201"])
        try await cached.transport.shutdown()
        try await nginx.stop()
    }

    @Test func theByteBoundEvictsTheLeastRecentlyUsed() async throws {
        let nginx = try await Self.startNginx()
        // Room for two of the three padded answers.
        let cached = try Cached(nginx, maxBytes: 2800)
        for name in ["a", "b", "a", "c", "a", "b"] { _ = try await cached.get("big/\(name).json") }
        // a and b stored; a used again; c evicts b, the least recently used; b comes back from nginx.
        _ = await nginx.requestCount(reaching: 4)
        #expect(Self.served(nginx, "/big/a.json").count == 1)
        #expect(Self.served(nginx, "/big/b.json").count == 2)
        #expect(Self.served(nginx, "/big/c.json").count == 1)
        #expect(cached.storage.totalBytes <= 2800)
        try await cached.transport.shutdown()
        try await nginx.stop()
    }

    @Test func anAnswerToACredentialedRequestIsStoredOnlyWhenAllowed() async throws {
        let nginx = try await Self.startNginx()
        let token = "Bearer cache-t0ken"
        let cached = try Cached(nginx, token: token)
        _ = try await cached.get("fresh/item.json")
        _ = try await cached.get("fresh/item.json")
        _ = try await cached.get("public/item.json")
        _ = try await cached.get("public/item.json")
        _ = await nginx.requestCount(reaching: 3)
        #expect(Self.served(nginx, "/fresh/item.json").count == 2)
        #expect(Self.served(nginx, "/public/item.json").count == 1)
        let allowed = try Cached(nginx, token: token) { $0.cache.storesAuthorizedResponses = true }
        _ = try await allowed.get("fresh/item.json")
        _ = try await allowed.get("fresh/item.json")
        _ = await nginx.requestCount(reaching: 4)
        #expect(Self.served(nginx, "/fresh/item.json").count == 3)
        #expect(!cached.logs.entries.map { "\($0.metadata)" }.joined().contains("cache-t0ken"))
        try await cached.transport.shutdown()
        try await allowed.transport.shutdown()
        try await nginx.stop()
    }
}
