import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// An answer that came while the request's body was still being sent, kept so that the call
/// ends with it.
///
/// AsyncHTTPClient ends a request answered with a status of 300 or more before its body was
/// sent (a `413` from the body's length, a `401`, a redirect) as soon as the answer has arrived;
/// when the body's end reaches it after that, it fails the request with
/// `HTTPClientError.requestStreamCancelled` instead of giving the answer. Which comes first is a
/// race between threads, most often lost on a loaded machine. An answer received whole (its
/// announced length, or a status that has no body) is the server's answer all the same.
struct EarlyAnswer {
    private var head: HTTPResponseHead?
    private var parts: [ByteBuffer] = []
    private var received = 0
    /// Whether the answer's body is kept (a collected response) or only counted (a streamed one,
    /// whose parts went to the reader).
    private let keepsBody: Bool

    init(keepsBody: Bool) {
        self.keepsBody = keepsBody
    }

    /// Notes an answer's head; only one of 300 or more can end a request early.
    mutating func begin(_ head: HTTPResponseHead) {
        guard head.status.code >= 300 else { return }
        self.head = head
    }

    /// Notes a part of the answer's body.
    mutating func add(_ part: ByteBuffer) {
        guard head != nil else { return }
        received += part.readableBytes
        if keepsBody { parts.append(part) }
    }

    /// The answer and its body, when `error` is AsyncHTTPClient ending a request whose answer
    /// had arrived whole before its body was sent; `nil` otherwise.
    func whole(endedBy error: any Error) -> (head: HTTPResponseHead, body: ByteBuffer)? {
        guard let head, let error = error as? HTTPClientError, error == .requestStreamCancelled else { return nil }
        let announced = head.headers.first(name: "content-length").flatMap { Int($0) }
        let hasNoBody = head.status == .noContent || head.status == .notModified
        guard announced == received || (announced == nil && hasNoBody && received == 0) else { return nil }
        var body = ByteBuffer()
        body.reserveCapacity(received)
        for var part in parts { body.writeBuffer(&part) }
        return (head, body)
    }
}
