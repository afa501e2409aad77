import AsyncHTTPClient
import NIOCore
import NIOHTTP1
@testable import Resourceful
import Testing

/// What AsyncHTTPClient's `requestStreamCancelled` leaves of an answer that came before the
/// request's body ended: the answer, when it arrived whole, and nothing otherwise.
@Suite struct EarlyAnswerTests {
    static func head(_ status: HTTPResponseStatus, length: Int?) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        if let length { headers.add(name: "Content-Length", value: String(length)) }
        return HTTPResponseHead(version: .http1_1, status: status, headers: headers)
    }

    @Test func anAnswerReceivedWholeIsTheAnswer() throws {
        var early = EarlyAnswer(keepsBody: true)
        early.begin(Self.head(.payloadTooLarge, length: 11))
        early.add(ByteBuffer(string: "too "))
        early.add(ByteBuffer(string: "large"))
        #expect(early.whole(endedBy: HTTPClientError.requestStreamCancelled) == nil)
        early.add(ByteBuffer(string: "!!"))
        let answer = try #require(early.whole(endedBy: HTTPClientError.requestStreamCancelled))
        #expect(answer.head.status == .payloadTooLarge)
        #expect(String(buffer: answer.body) == "too large!!")
    }

    @Test func anAnswerWithNoBodyIsWholeAtItsHead() {
        var early = EarlyAnswer(keepsBody: false)
        early.begin(Self.head(.notModified, length: nil))
        #expect(early.whole(endedBy: HTTPClientError.requestStreamCancelled)?.head.status == .notModified)
    }

    @Test func anythingElseStaysAFailure() {
        // A success is never ended early: AsyncHTTPClient waits for the body.
        var success = EarlyAnswer(keepsBody: true)
        success.begin(Self.head(.ok, length: 0))
        #expect(success.whole(endedBy: HTTPClientError.requestStreamCancelled) == nil)
        // An answer whose length was not announced cannot be known whole.
        var chunked = EarlyAnswer(keepsBody: true)
        chunked.begin(Self.head(.unauthorized, length: nil))
        chunked.add(ByteBuffer(string: "no"))
        #expect(chunked.whole(endedBy: HTTPClientError.requestStreamCancelled) == nil)
        // Another error is that error, whatever arrived.
        var whole = EarlyAnswer(keepsBody: true)
        whole.begin(Self.head(.unauthorized, length: 0))
        #expect(whole.whole(endedBy: HTTPClientError.remoteConnectionClosed) == nil)
        #expect(whole.whole(endedBy: HTTPClientError.requestStreamCancelled) != nil)
        // A compressed answer is counted decompressed: its announced length says nothing of it.
        var compressed = EarlyAnswer(keepsBody: true)
        var head = Self.head(.unauthorized, length: 2)
        head.headers.add(name: "Content-Encoding", value: "gzip")
        compressed.begin(head)
        compressed.add(ByteBuffer(string: "no"))
        #expect(compressed.whole(endedBy: HTTPClientError.requestStreamCancelled) == nil)
        // More than announced is not the answer either.
        var longer = EarlyAnswer(keepsBody: true)
        longer.begin(Self.head(.unauthorized, length: 2))
        longer.add(ByteBuffer(string: "nope"))
        #expect(longer.whole(endedBy: HTTPClientError.requestStreamCancelled) == nil)
        // No head, nothing to give.
        #expect(EarlyAnswer(keepsBody: true).whole(endedBy: HTTPClientError.requestStreamCancelled) == nil)
    }
}
