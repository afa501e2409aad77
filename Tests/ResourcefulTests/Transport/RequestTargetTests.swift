import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

/// A request's target is structure from the builder to the transport: the URL string is made
/// from it, and every view of the call reads its parts.
@Suite struct RequestTargetTests {
    @Test(arguments: [
        "https://api.example.com/v1/users?page=2&tags%5B%5D=a+b",
        "http://127.0.0.1:8080/",
        "https://h.example/a/b?flag&x=&y=%2F%3D",
        "https://h.example/signed?X-Amz-Signature=ab%2Bcd&X-Amz-Date=20261125T000000Z",
        "http://[::1]:9000/x?q=%E2%9C%93",
    ])
    func aParsedURLGoesOutByteForByte(url: String) {
        #expect(RequestTarget(parsing: url).url == url)
    }

    @Test func partsAreReadAsStructure() {
        let base = RequestTarget(origin: "https://api.example.com", basePath: "/v1", path: "")
        let target = RequestTarget(parsing: "https://api.example.com/v1/users/a%20b?page=2&name=Ada+L%C3%B6&flag#section", base: base)
        #expect(target.origin == "https://api.example.com")
        #expect(target.basePath == "/v1")
        #expect(target.path == "users/a%20b")
        #expect(target.query.map(\.name) == ["page", "name", "flag"])
        #expect(target.query.map(\.value) == ["2", "Ada Lö", nil])
        #expect(target.url == "https://api.example.com/v1/users/a%20b?page=2&name=Ada+L%C3%B6&flag")
        // Outside the base path, or on another origin, the path is the whole path.
        #expect(RequestTarget(parsing: "https://api.example.com/v10/users", base: base).path == "v10/users")
        #expect(RequestTarget(parsing: "https://other.example/v1/users", base: base).path == "v1/users")
    }

    @Test func plainItemsAreEncodedAndDecodedBack() {
        let item = RequestTarget.QueryItem(name: "filter[name]", value: "a&b=c ✓")
        #expect(item.encodedName == "filter%5Bname%5D")
        #expect(item.encodedValue == "a%26b%3Dc%20%E2%9C%93")
        #expect(item.name == "filter[name]")
        #expect(item.value == "a&b=c ✓")
        // A `%` without two hex digits after it is kept as written.
        #expect(RequestTarget.QueryItem(encodedName: "x", encodedValue: "100%").value == "100%")
    }

    @Test func theTransportGetsTheURLTheBuilderMade() async throws {
        try await Harness.run(configure: { $0.baseQueryItems = ["api_key": "k-51f"] }) { harness in
            let request = try await harness.api.transportRequest(
                for: AdHocRequest<Empty, [String: String]>(.index, "teams/\("a b")", parameters: ["q": "x y"])
            )
            #expect(request.target.path == "teams/a%20b")
            #expect(request.target.basePath == "/v1")
            #expect(request.target.query.map(\.name) == ["api_key", "q"])
            #expect(request.url == harness.server.baseURL.absoluteString + "/v1/teams/a%20b?api_key=k-51f&q=x%20y")
        }
    }

    /// A path written with a literal query keeps it as query items, so that the path in log lines
    /// holds no query value and masked ones are masked.
    @Test func aLiteralQueryInThePathIsQueryNotPath() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/login", .json(raw: "{}"))
            let request = AdHocRequest<Empty, [String: String]>(.show, ResourcePath(encoded: "login?api_key=lit-7c1e&lang=en"), parameters: ["page": "1"])
            let sent = try await harness.api.transportRequest(for: request)
            #expect(sent.target.path == "login")
            #expect(sent.target.encodedQuery == "api_key=lit-7c1e&lang=en&page=1")
            _ = try await harness.api.call(request)
            #expect(harness.server.requests.first.map { $0.path + "?" + $0.query } == "/v1/login?api_key=lit-7c1e&lang=en&page=1")
            #expect(harness.logText.contains("resourceful.path=/login "))
            #expect(harness.logText.contains("api_key=***&lang=en&page=1"))
            #expect(!harness.logText.contains("lit-7c1e"))
        }
    }
}
