import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Testing

@Suite struct ResourcePathTests {
    @Test(arguments: [
        ("a/b", "a%2Fb"),
        ("two words", "two%20words"),
        ("what?", "what%3F"),
        ("#hash", "%23hash"),
        ("100%", "100%25"),
        ("ünï", "%C3%BCn%C3%AF"),
        ("../etc/passwd", "..%2Fetc%2Fpasswd"),
        ("plain-id_1.2~x", "plain-id_1.2~x"),
    ])
    func interpolatedValueIsOneEncodedSegment(value: String, expected: String) {
        let path: ResourcePath = "files/\(value)/raw"
        #expect(path.encoded == "files/\(expected)/raw")
        #expect(path.template == "files/{}/raw")
    }

    @Test func literalTextKeepsSlashesAndEncodesWhatAPathCannotHold() {
        let path: ResourcePath = "/v2/some path/ok"
        #expect(path.encoded == "v2/some%20path/ok")
    }

    @Test func integerInterpolation() {
        let id = 42
        let path: ResourcePath = "users/\(id)"
        #expect(path.encoded == "users/42")
    }

    @Test func serverReceivesEncodedSegmentsAndDecodesThemBack() async throws {
        try await Harness.run { harness in
            harness.server.stub(.get, "/v1/files/:name", .status(.noContent))
            let name = "../secret dir/ü?#%"
            _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.show, "files/\(name)"))
            let recorded = try #require(harness.server.requests.first)
            #expect(recorded.path == "/v1/files/..%2Fsecret%20dir%2F%C3%BC%3F%23%25")
            #expect(recorded.pathParameters["name"] == name)
        }
    }

    /// An empty value would address the collection; `.` and `..` too, once a server or URL parser
    /// normalises `%2E%2E` back to `..`: `DeleteUser(id: "..")` must not delete `users`.
    @Test(arguments: ["", ".", ".."])
    func unusableInterpolatedSegmentFailsBeforeSending(id: String) async throws {
        try await Harness.run { harness in
            harness.server.stub(.delete, "/v1/users", .status(.noContent))
            let error = await #expect(throws: APIError.self) {
                _ = try await harness.api.call(AdHocRequest<Empty, Empty>(.delete, "users/\(id)"))
            }
            #expect(error?.kind == .invalidRequest)
            #expect(error?.detail?.contains("'..'") == true)
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test func dotsInsideAValueStayPartOfOneSegment() {
        let path: ResourcePath = "files/\("...")/\(".env")/\("a..b")"
        #expect(path.encoded == "files/.../.env/a..b")
        #expect(!path.description.isEmpty)
    }
}
