import Foundation
import HTTPTypes
import NIOCore
@testable import Resourceful
import ResourcefulTesting
import Testing

/// A cURL export never shows a body its request redacts, a body that cannot be masked, or a
/// secret in a URL-valued header field.
@Suite struct CURLRedactionTests {
    struct Login: Encodable, Sendable {
        var username = "ada"
        var passwordHint = "hint"
        var passText = "login-PASS-8f1"
    }

    struct LogIn: ResourceRequest {
        typealias ResourceType = Empty
        let verb = ResourceVerb.create
        let path: ResourcePath = "sessions"
        let parameters = Login()
        var shouldRedactRequestBody: Bool { true }
    }

    static let config = APIConfig(baseURL: URL(string: "https://api.example.com/v1")!, service: "s")

    @Test func aRedactedBodyIsLeftOut() async throws {
        try await Harness.run { (harness: inout Harness) async throws in
            let exported = try await harness.api.curl(for: LogIn())
            #expect(!exported.contains("login-PASS-8f1"))
            #expect(!exported.contains("ada"))
            #expect(exported.contains("left out: the request redacts its body"))
            #expect(harness.server.requests.isEmpty)
        }
    }

    @Test(arguments: ["application/xml", "text/plain", nil, "application/json"])
    func aBodyThatCannotBeMaskedIsLeftOut(contentType: String?) {
        var fields: HTTPFields = [:]
        if let contentType { fields[.contentType] = contentType }
        // Not JSON, whatever its type says.
        let request = TransportRequest(
            method: .post, url: "https://api.example.com/v1/things", headerFields: fields,
            body: ByteBuffer(string: "<secret>xml-SECRET-5d2</secret>"), deadline: .now + .seconds(5), maxResponseBytes: 1024
        )
        let exported = CURLCommand(redactor: Redactor(settings: Self.config.redaction)).render(request)
        #expect(!exported.contains("xml-SECRET-5d2"))
        #expect(exported.contains("it cannot be masked"))
    }

    @Test func urlValuedFieldsAreMasked() {
        let request = TransportRequest(
            method: .get, url: "https://api.example.com/v1/things",
            headerFields: [.contentLocation: "https://api.example.com/x?access_token=at-SECRET-1&page=2"],
            deadline: .now + .seconds(5), maxResponseBytes: 1024
        )
        let exported = CURLCommand(redactor: Redactor(settings: Self.config.redaction)).render(request)
        #expect(!exported.contains("at-SECRET-1"))
        #expect(exported.contains("page=2"))
    }
}
