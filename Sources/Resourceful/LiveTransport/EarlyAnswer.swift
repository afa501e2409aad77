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
    /// The length the answer announced: only an answer that announced one can be known whole.
    private var announced: Int?
    private var body = ByteBuffer()
    private var received = 0
    /// Whether the answer's body is kept (a collected response) or only counted (a streamed one,
    /// whose parts went to the reader).
    private let keepsBody: Bool

    init(keepsBody: Bool) {
        self.keepsBody = keepsBody
    }

    /// Notes an answer's head; only one of 300 or more can end a request early, and only one whose
    /// body is counted as it was sent (not compressed: the parts are counted decompressed).
    mutating func begin(_ head: HTTPResponseHead) {
        guard head.status.code >= 300, head.headers.first(name: "content-encoding").map({ $0.lowercased() == "identity" }) ?? true
        else { return }
        self.head = head
        announced = head.headers.first(name: "content-length").flatMap { Int($0) }
    }

    /// Notes a part of the answer's body; kept only while the answer can still be whole, so that
    /// at most its announced length is held (which the client's own limit has already bounded).
    mutating func add(_ part: ByteBuffer) {
        guard head != nil else { return }
        received += part.readableBytes
        guard keepsBody, let announced, received <= announced else { return }
        var part = part
        body.writeBuffer(&part)
    }

    /// The answer and its body, when `error` is AsyncHTTPClient ending a request whose answer
    /// had arrived whole before its body was sent; `nil` otherwise.
    func whole(endedBy error: any Error) -> (head: HTTPResponseHead, body: ByteBuffer)? {
        guard let head, let error = error as? HTTPClientError, error == .requestStreamCancelled else { return nil }
        let hasNoBody = head.status == .noContent || head.status == .notModified
        guard announced == received || (announced == nil && hasNoBody && received == 0) else { return nil }
        return (head, keepsBody ? body : ByteBuffer())
    }
}
