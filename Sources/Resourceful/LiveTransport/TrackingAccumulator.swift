import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization

/// AsyncHTTPClient's `ResponseAccumulator` (whole body, size limit), noting whether the request's
/// head was written and whether any of the answer arrived: a connection that failed before the
/// head was written carried nothing of the request, so trying again is safe for every method; a
/// request whose connection closed before any of the answer can be sent again at once.
///
/// With `interceptsRedirects`, a redirect's head ends the request before the client can follow
/// it (AsyncHTTPClient asks its delegate about each head before it redirects, and a task that has
/// failed by then is not redirected): the head is kept in ``interceptedRedirect``.
final class TrackingAccumulator: HTTPClientResponseDelegate {
    typealias Response = AsyncHTTPClient.HTTPClient.Response

    /// A redirect taken from the client.
    struct Redirect: Sendable {
        var status: HTTPResponse.Status
        var headerFields: HTTPFields

        /// The redirect `head` names, when it is a `3xx` with a `Location`.
        init?(_ head: HTTPResponseHead) {
            guard (300..<400).contains(head.status.code), head.headers.contains(name: "location") else { return nil }
            var fields = HTTPFields()
            for (name, value) in head.headers {
                if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
            }
            status = HTTPResponse.Status(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase)
            headerFields = fields
        }
    }

    /// Why the request ended: its redirect was taken, to be answered as a response.
    struct RedirectIntercepted: Error {}

    private let inner: ResponseAccumulator
    private let answered = Atomic<Bool>(false)
    private let wrote = Atomic<Bool>(false)
    private let interceptsRedirects: Bool
    private let redirect = Mutex<Redirect?>(nil)
    /// Kept only for a request whose body is sent as it is read (``EarlyAnswer``).
    private let early: Locked<EarlyAnswer>?

    /// Whether the request's head was written (AsyncHTTPClient says so once the write succeeded).
    var wroteHead: Bool { wrote.load(ordering: .acquiring) }

    /// Whether the response head arrived.
    var receivedHead: Bool { answered.load(ordering: .acquiring) }

    /// The redirect taken from the client, if any.
    var interceptedRedirect: Redirect? { redirect.withLock { $0 } }

    /// The answer AsyncHTTPClient received whole before failing the request with `error`
    /// because the body's end came after it (``EarlyAnswer``).
    func earlyAnswer(endedBy error: any Error) -> (head: HTTPResponseHead, body: ByteBuffer)? {
        early?.withLock { $0.whole(endedBy: error) }
    }

    /// An accumulator of at most `maxBodySize` bytes; one for a request whose body `streamsBody`
    /// (is sent as it is read) also keeps an answer that comes before the body ends.
    init(request: AsyncHTTPClient.HTTPClient.Request, maxBodySize: Int, interceptsRedirects: Bool = false, streamsBody: Bool = false) {
        inner = ResponseAccumulator(request: request, maxBodySize: maxBodySize)
        self.interceptsRedirects = interceptsRedirects
        early = streamsBody ? Locked(EarlyAnswer(keepsBody: true)) : nil
    }

    func didSendRequestHead(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        wrote.store(true, ordering: .releasing)
    }

    func didVisitURL(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ request: AsyncHTTPClient.HTTPClient.Request, _ head: HTTPResponseHead) {
        guard interceptsRedirects, let taken = Redirect(head) else { return }
        redirect.withLock { $0 = taken }
        answered.store(true, ordering: .releasing)
        task.fail(reason: RedirectIntercepted())
    }

    func didReceiveHead(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        answered.store(true, ordering: .releasing)
        early?.withLock { $0.begin(head) }
        return inner.didReceiveHead(task: task, head)
    }

    func didReceiveBodyPart(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        early?.withLock { $0.add(buffer) }
        return inner.didReceiveBodyPart(task: task, buffer)
    }

    func didReceiveError(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ error: any Error) {
        inner.didReceiveError(task: task, error)
    }

    func didFinishRequest(task: AsyncHTTPClient.HTTPClient.Task<Response>) throws -> Response {
        try inner.didFinishRequest(task: task)
    }
}
