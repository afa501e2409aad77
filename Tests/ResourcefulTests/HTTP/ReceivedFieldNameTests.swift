import HTTPTypes
import Testing

@testable import Resourceful

/// Received field names taken as they are must be the names HTTPTypes would make of them.
@Suite struct ReceivedFieldNameTests {
    @Test(arguments: [
        "Server", "Date", "Content-Type", "Content-Length", "Connection", "Transfer-Encoding", "Content-Encoding",
        "Cache-Control", "ETag", "Last-Modified", "Vary", "Accept-Ranges", "content-type", "etag", "X-Request-ID", "Link",
    ])
    func receivedNamesAreTheNamesHTTPTypesMakes(name: String) throws {
        let received = try #require(HTTPField.Name.received(name))
        let made = try #require(HTTPField.Name(name))
        #expect(received == made)
        #expect(received.rawName == name)
        #expect(received.canonicalName == name.lowercased())
    }

    @Test func invalidNamesAreRefused() {
        #expect(HTTPField.Name.received("Bad Name") == nil)
        #expect(HTTPField.Name.received("") == nil)
    }
}
