import Foundation
import HTTPTypes
import InMemoryLogging
import Logging
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct PaginationTests {
    struct Page: Codable, Sendable, Equatable {
        var items: [Int]
        var nextCursor: String?
    }

    struct ListNumbers: ResourceRequest {
        typealias ResourceType = [Int]
        struct Parameters: Encodable, Sendable { var page: Int }
        let verb = ResourceVerb.index
        let path: ResourcePath = "numbers"
        var parameters = Parameters(page: 1)
    }

    struct ListByCursor: ResourceRequest {
        typealias ResourceType = Page
        struct Parameters: Encodable, Sendable { var cursor: String? }
        let verb = ResourceVerb.index
        let path: ResourcePath = "cursored"
        var parameters = Parameters(cursor: nil)
    }

    /// Three pages of three numbers, each linking to the next (relative, absolute, none).
    private func serveLinkedPages(_ server: MockServer) {
        server.route(.get, "/v1/numbers") { request in
            let page = Int(request.queryItems.first { $0.name == "page" }?.value ?? "1") ?? 1
            var response = try MockResponse.json(Array((page - 1) * 3 + 1...page * 3))
            let link = HTTPField.Name("Link")!
            switch page {
            case 1: response.headerFields[link] = #"</v1/numbers?page=2>; rel="next", </v1/numbers?page=3>; rel="last""#
            case 2: response.headerFields[link] = #"<\#(server.baseURL.absoluteString)/v1/numbers?page=3>; rel="prev next""#
            default: break
            }
            return response
        }
    }

    @Test func threePagesByLink() async throws {
        try await Harness.run { harness in
            serveLinkedPages(harness.server)
            var pages: [[Int]] = []
            for try await page in harness.api.pages(ListNumbers()) { pages.append(page) }
            #expect(pages == [[1, 2, 3], [4, 5, 6], [7, 8, 9]])
            #expect(harness.server.requests.map(\.query) == ["page=1", "page=2", "page=3"])
            #expect(harness.server.requests.allSatisfy { $0.headerFields[.authorization] == Harness.token })
            let all = try await harness.api.all(ListNumbers())
            #expect(all == Array(1...9))
            let some = try await harness.api.all(ListNumbers(), limit: 4)
            #expect(some == [1, 2, 3, 4])
        }
    }

    @Test func eachPagesLogLinesNameItsOwnPathAndQuery() async throws {
        try await Harness.run { harness in
            serveLinkedPages(harness.server)
            _ = try await harness.api.all(ListNumbers())
            let sent = harness.logs.entries.filter { $0.message.description == "Sending request" }
            let paths = sent.map { $0.metadata["resourceful.path"]?.description ?? "" }
            let queries = sent.map { $0.metadata["resourceful.query"]?.description ?? "" }
            #expect(paths == ["/numbers", "/numbers", "/numbers"])
            #expect(queries == ["page=1", "page=2", "page=3"])
        }
    }

    @Test func threePagesByCursor() async throws {
        try await Harness.run { harness in
            harness.server.route(.get, "/v1/cursored") { request in
                switch request.queryItems.first(where: { $0.name == "cursor" })?.value {
                case nil: try .json(Page(items: [1, 2], nextCursor: "c2"))
                case "c2": try .json(Page(items: [3, 4], nextCursor: "c3"))
                default: try .json(Page(items: [5], nextCursor: nil))
                }
            }
            let pagination = Pagination<ListByCursor>.cursor { response in
                response.value.nextCursor.map { ListByCursor(parameters: .init(cursor: $0)) }
            }
            var items: [Int] = []
            for try await page in harness.api.pages(ListByCursor(), pagination: pagination) { items += page.items }
            #expect(items == [1, 2, 3, 4, 5])
            #expect(harness.server.requests.map(\.query) == ["", "cursor=c2", "cursor=c3"])
        }
    }

    @Test func aLinkToAnotherOriginIsRefused() async throws {
        try await Harness.run { harness in
            var response = try MockResponse.json([1])
            response.headerFields[HTTPField.Name("Link")!] = #"<https://elsewhere.example/steal?page=2>; rel="next""#
            harness.server.stub(.get, "/v1/numbers", response)
            var iterator = harness.api.pages(ListNumbers()).makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first == [1])
            let error = await #expect(throws: APIError.self) { _ = try await iterator.next() }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func aLinkCarryingUserInformationIsRefused() async throws {
        try await Harness.run { harness in
            var response = try MockResponse.json([1])
            // The same origin, with a user and password the server chose.
            let port = harness.server.baseURL.port ?? 80
            response.headerFields[HTTPField.Name("Link")!] = "<http://planted:pw@127.0.0.1:\(port)/v1/numbers?page=2>; rel=\"next\""
            harness.server.stub(.get, "/v1/numbers", response)
            var iterator = harness.api.pages(ListNumbers()).makeAsyncIterator()
            _ = try await iterator.next()
            let error = await #expect(throws: APIError.self) { _ = try await iterator.next() }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.description.contains("user information") == true)
            #expect(harness.server.requests.count == 1)
        }
    }

    @Test func aLinkLoopEnds() async throws {
        try await Harness.run { harness in
            var response = try MockResponse.json([1])
            response.headerFields[HTTPField.Name("Link")!] = #"</v1/numbers?page=1>; rel="next""#
            harness.server.stub(.get, "/v1/numbers", response)
            let error = await #expect(throws: APIError.self) { _ = try await harness.api.all(ListNumbers()) }
            #expect(error?.kind == .invalidRequest)
            #expect(harness.server.requests.count <= 3)
        }
    }
}
