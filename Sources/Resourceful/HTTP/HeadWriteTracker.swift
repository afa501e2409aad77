import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

/// A ``TrackingAccumulator`` that also notes whether the request's head was written to the
/// connection: a connection that failed before then (reset during the TLS handshake, or closed
/// as the request was handed to it) carried nothing of the request, so trying again is safe for
/// every method.
final class HeadWriteTracker: HTTPClientResponseDelegate {
    typealias Response = TrackingAccumulator.Response

    /// The delegate that collects the answer.
    let inner: TrackingAccumulator
    private let wrote = Atomic<Bool>(false)

    /// Whether the request's head was written (AsyncHTTPClient says so once the write succeeded).
    var wroteHead: Bool { wrote.load(ordering: .acquiring) }

    init(_ inner: TrackingAccumulator) {
        self.inner = inner
    }

    func didSendRequestHead(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ head: HTTPRequestHead) {
        wrote.store(true, ordering: .releasing)
        inner.didSendRequestHead(task: task, head)
    }

    func didSendRequestPart(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ part: IOData) {
        inner.didSendRequestPart(task: task, part)
    }

    func didSendRequest(task: AsyncHTTPClient.HTTPClient.Task<Response>) {
        inner.didSendRequest(task: task)
    }

    func didVisitURL(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ request: AsyncHTTPClient.HTTPClient.Request, _ head: HTTPResponseHead) {
        inner.didVisitURL(task: task, request, head)
    }

    func didReceiveHead(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        inner.didReceiveHead(task: task, head)
    }

    func didReceiveBodyPart(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        inner.didReceiveBodyPart(task: task, buffer)
    }

    func didReceiveError(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ error: any Error) {
        inner.didReceiveError(task: task, error)
    }

    func didFinishRequest(task: AsyncHTTPClient.HTTPClient.Task<Response>) throws -> Response {
        try inner.didFinishRequest(task: task)
    }
}
