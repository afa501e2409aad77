import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import Synchronization

/// AsyncHTTPClient's `ResponseAccumulator` (whole body, size limit), noting whether any of the
/// answer arrived: a request whose connection closed before that can be sent again at once.
final class TrackingAccumulator: HTTPClientResponseDelegate {
    typealias Response = AsyncHTTPClient.HTTPClient.Response

    private let inner: ResponseAccumulator
    private let answered = Atomic<Bool>(false)

    /// Whether the response head arrived.
    var receivedHead: Bool { answered.load(ordering: .acquiring) }

    init(request: AsyncHTTPClient.HTTPClient.Request, maxBodySize: Int) {
        inner = ResponseAccumulator(request: request, maxBodySize: maxBodySize)
    }

    func didReceiveHead(task: AsyncHTTPClient.HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        answered.store(true, ordering: .releasing)
        return inner.didReceiveHead(task: task, head)
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
