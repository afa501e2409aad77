import Foundation
import HTTPTypes
@testable import Resourceful
import ResourcefulTesting
import Testing

/// Same-origin decisions compare the exact scheme, host and port: a host that differs from the
/// API's only by a character left out of messages (`127.0.0!.1`) is another origin.
@Suite struct OriginTests {
    @Test(arguments: [
        ("https://api.example.com/a", "https://api.example.com/b", true),
        ("https://api.example.com/a", "HTTPS://API.Example.COM:443/b", true),
        ("http://api.example.com/a", "http://api.example.com:80/b", true),
        ("https://api.example.com/a", "https://api.exam!ple.com/x", false),
        ("https://api.example.com/a", "https://api.example.com./x", false),
        ("https://api.example.com/a", "https://api.example.com:8443/x", false),
        ("https://api.example.com/a", "http://api.example.com/x", false),
        ("https://api.example.com/a", "https://api.example.com.evil.test/x", false),
        ("http://[::1]:8080/a", "http://[::1]:8080/b", true),
        ("http://[::1]:8080/a", "http://[::2]:8080/b", false),
        ("http://127.0.0.1:8080/a", "http://127.0.0!.1:8080/b", false),
        ("file:///etc/passwd", "file:///etc/passwd", false),
    ])
    func origins(first: String, second: String, same: Bool) throws {
        let a = try #require(URL(string: first)), b = try #require(URL(string: second))
        #expect(Origin.same(a, b) == same)
        #expect(Origin.same(b, a) == same)
    }

    @Test func theMessageFormKeepsOnlyHostCharacters() throws {
        let odd = try #require(URL(string: "https://api.exam!ple.com/x"))
        let plain = try #require(URL(string: "https://api.example.com"))
        let origin = try #require(Origin(odd))
        #expect(origin.description == "https://api.example.com:443")
        #expect(origin != Origin(plain))
    }

    /// A redirect to `127.0.0!.1`, which the transport resolves to the same server (as curl's
    /// `--resolve` would): the request that arrives there carries no credential.
    @Test func aRedirectToAHostDifferingInOneCharacterDropsTheCredential() async throws {
        try await Harness.run(configure: { $0.baseHeaders = ["X-Api-Key": "key-ORIGIN-SECRET"] }) { harness in
            let port = harness.server.port
            harness.dependencies.transport = ResolvingTransport(
                base: harness.dependencies.transport, host: "127.0.0!.1", to: "127.0.0.1"
            )
            harness.server.stub(.get, "/v1/x", MockResponse(status: .temporaryRedirect, headerFields: [.location: "http://127.0.0!.1:\(port)/elsewhere"]))
            harness.server.stub(.get, "/elsewhere", .status(.noContent))
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "x"))
            let requests = harness.server.requests
            #expect(requests.map(\.path) == ["/v1/x", "/elsewhere"])
            #expect(requests.first?.headerFields[.authorization] == Harness.token)
            #expect(requests.last?.headerFields[.authorization] == nil)
            #expect(requests.last?.headerFields[HTTPField.Name("X-Api-Key")!] == nil)
        }
    }

    /// A `Link` naming `127.0.0!.1` is another origin: the next page is not fetched.
    @Test func aNextLinkToAHostDifferingInOneCharacterIsRefused() async throws {
        try await Harness.run { harness in
            let port = harness.server.port
            harness.dependencies.transport = ResolvingTransport(
                base: harness.dependencies.transport, host: "127.0.0!.1", to: "127.0.0.1"
            )
            harness.server.route(.get, "/v1/numbers") { _ in
                var response = try MockResponse.json([1, 2, 3])
                response.headerFields[HTTPField.Name("Link")!] = "<http://127.0.0!.1:\(port)/v1/numbers?page=2>; rel=\"next\""
                return response
            }
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.all(PaginationTests.ListNumbers())
            }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.server.requests.count == 1)
        }
    }
}

/// Sends requests for `host` to `address` instead, the way curl's `--resolve` does, so a host
/// name that no resolver knows reaches a loopback server.
struct ResolvingTransport: HTTPTransport {
    let base: any HTTPTransport
    let host: String
    let address: String

    init(base: any HTTPTransport, host: String, to address: String) {
        self.base = base
        self.host = host
        self.address = address
    }

    func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
        var request = request
        request.url = request.url.replacingOccurrences(of: "://\(host):", with: "://\(address):")
        return try await base.send(request)
    }
}
