import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import Synchronization

/// Hands an AsyncHTTPClient response over head first, its body as an async sequence with
/// back-pressure: a body part the reader has no room for holds the connection's reads
/// (AsyncHTTPClient reads on when the future of ``didReceiveBodyPart(task:_:)`` completes) until
/// the reader asks for more.
///
/// Also watches the time between body parts (``TransportRequest/idleTimeout``; the wait is paused
/// while the reader is the slow side) and closes the connection when the reader drops the body
/// or its task is cancelled: a body not read to its end never goes back to the pool.
///
/// Notes, as ``TrackingAccumulator`` does, whether the request's head was written and whether
/// any of the answer arrived, for ``ConnectRetry``.
final class StreamingDelegate: HTTPClientResponseDelegate {
    typealias Response = Void
    typealias Body = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, Demand
    >

    /// The body was idle for longer than ``TransportRequest/idleTimeout``.
    struct IdleTimeout: Error {}

    private struct State {
        var head: CheckedContinuation<HTTPResponseHead, any Error>?
        var headResult: Result<HTTPResponseHead, any Error>?
        var task: HTTPClient.Task<Void>?
        /// AsyncHTTPClient waits on this while the reader has no room.
        var waiting: EventLoopPromise<Void>?
        var idleTimer: Scheduled<Void>?
        var readerGone = false
        var finished = false
        /// The reader asked for more while no part was waiting: the next part that finds the
        /// queue full goes on at once instead of waiting for a request that already came.
        var demanded = false
    }

    /// Tells the delegate the reader wants more, or has gone.
    final class Demand: NIOAsyncSequenceProducerDelegate {
        private let owner: Locked<StreamingDelegate?> = Locked(nil)

        func attach(_ delegate: StreamingDelegate) { owner.withLock { $0 = delegate } }

        func produceMore() { owner.withLock { $0 }?.readerWantsMore() }

        func didTerminate() {
            // The reader dropped the body, or was cancelled: the delegate is released too.
            let delegate = owner.withLock { value in
                defer { value = nil }
                return value
            }
            delegate?.readerLeft()
        }
    }

    private let state = Locked(State())
    private let source: Body.Source
    /// The body, until it is handed to the response's one reader: the delegate must not keep
    /// it, or a body dropped unread would never tell the delegate its reader left.
    private let unclaimedBody: Locked<Body?>
    private let idleTimeout: Duration?
    private let interceptsRedirects: Bool
    private let answered = Atomic<Bool>(false)
    private let wrote = Atomic<Bool>(false)
    /// What arrived of an answer, counted, for a request whose body is sent as it is read: one
    /// received whole before that body ended ends the body as received, not with
    /// AsyncHTTPClient's error (``EarlyAnswer``).
    private let early: Locked<EarlyAnswer>?
    private let redirect = Locked<TrackingAccumulator.Redirect?>(nil)

    /// Whether the request's head was written.
    var wroteHead: Bool { wrote.load(ordering: .acquiring) }
    /// Whether the response head arrived.
    var receivedHead: Bool { answered.load(ordering: .acquiring) }
    /// The redirect taken from the client, if any.
    var interceptedRedirect: TrackingAccumulator.Redirect? { redirect.withLock { $0 } }

    /// A delegate for a request whose body `streamsBody` (is sent as it is read) keeps count of an
    /// answer that comes before that body ends.
    init(idleTimeout: Duration?, interceptsRedirects: Bool, streamsBody: Bool = false) {
        self.idleTimeout = idleTimeout
        self.interceptsRedirects = interceptsRedirects
        early = streamsBody ? Locked(EarlyAnswer(keepsBody: false)) : nil
        let demand = Demand()
        // Up to 16 parts (about 256 KiB at AsyncHTTPClient's usual sizes) wait for the reader.
        let made = Body.makeSequence(
            elementType: ByteBuffer.self,
            failureType: (any Error).self,
            backPressureStrategy: .init(lowWatermark: 4, highWatermark: 16),
            finishOnDeinit: true,
            delegate: demand
        )
        source = made.source
        unclaimedBody = Locked(made.sequence)
        demand.attach(self)
    }

    /// The body, once: the response's reader owns it from here.
    func takeBody() -> Body? {
        unclaimedBody.withLock { body in
            defer { body = nil }
            return body
        }
    }

    /// Starts watching `task`: its end ends the body, and the idle wait for the head begins.
    func attach(_ task: HTTPClient.Task<Void>) {
        let gone = state.withLock { state in
            state.task = task
            return state.readerGone
        }
        if gone { task.cancel() }
        armIdleTimer(on: task.eventLoop)
        task.futureResult.whenComplete { [self] result in
            disarmIdleTimer()
            switch result {
            case .success: finish(nil)
            case .failure(let error): finish(early?.withLock { $0.whole(endedBy: error) } == nil ? error : nil)
            }
        }
    }

    /// Waits for the response head; throws what ended the request before it.
    func head() async throws -> HTTPResponseHead {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<HTTPResponseHead, any Error>? = state.withLock { state in
                if let result = state.headResult { return result }
                state.head = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    private func deliverHead(_ result: Result<HTTPResponseHead, any Error>) {
        let waiting: CheckedContinuation<HTTPResponseHead, any Error>? = state.withLock { state in
            guard state.headResult == nil else { return nil }
            state.headResult = result
            defer { state.head = nil }
            return state.head
        }
        waiting?.resume(with: result)
    }

    private func finish(_ error: (any Error)?) {
        let pending: EventLoopPromise<Void>? = state.withLock { state in
            state.finished = true
            defer { state.waiting = nil }
            return state.waiting
        }
        deliverHead(.failure(error ?? TransportError.connectionFailed(ClosedBeforeHead())))
        if let error { source.finish(error) } else { source.finish() }
        pending?.succeed()
    }

    // MARK: The reader's side

    private func readerWantsMore() {
        let (pending, task): (EventLoopPromise<Void>?, HTTPClient.Task<Void>?) = state.withLock { state in
            defer { state.waiting = nil }
            if state.waiting == nil { state.demanded = true }
            return (state.waiting, state.task)
        }
        guard let pending else { return }
        if let task { armIdleTimer(on: task.eventLoop) }
        pending.succeed()
    }

    private func readerLeft() {
        let (task, pending, finished): (HTTPClient.Task<Void>?, EventLoopPromise<Void>?, Bool) = state.withLock { state in
            state.readerGone = true
            defer { state.waiting = nil }
            return (state.task, state.waiting, state.finished)
        }
        // A body not read to its end: the connection is closed rather than pooled half-read.
        if !finished { task?.cancel() }
        pending?.fail(CancellationError())
    }

    // MARK: The idle wait

    private func armIdleTimer(on eventLoop: any EventLoop) {
        guard let idleTimeout else { return }
        let timer = eventLoop.scheduleTask(in: .nanoseconds(idleTimeout.nanoseconds)) { [self] in
            let task = state.withLock { $0.task }
            task?.fail(reason: IdleTimeout())
        }
        let previous = state.withLock { state in
            defer { state.idleTimer = state.finished ? nil : timer }
            return state.idleTimer
        }
        previous?.cancel()
        if state.withLock({ $0.finished }) { timer.cancel() }
    }

    private func disarmIdleTimer() {
        state.withLock { state in
            defer { state.idleTimer = nil }
            return state.idleTimer
        }?.cancel()
    }

    // MARK: AsyncHTTPClient's side

    func didSendRequestHead(task: HTTPClient.Task<Void>, _ head: HTTPRequestHead) {
        wrote.store(true, ordering: .releasing)
    }

    func didVisitURL(task: HTTPClient.Task<Void>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        guard interceptsRedirects, let taken = TrackingAccumulator.Redirect(head) else { return }
        redirect.withLock { $0 = taken }
        answered.store(true, ordering: .releasing)
        task.fail(reason: TrackingAccumulator.RedirectIntercepted())
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        answered.store(true, ordering: .releasing)
        early?.withLock { $0.begin(head) }
        armIdleTimer(on: task.eventLoop)
        deliverHead(.success(head))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        // A request for more that came before this part is spent by it.
        state.withLock { $0.demanded = false }
        early?.withLock { $0.add(buffer) }
        switch source.yield(buffer) {
        case .produceMore:
            armIdleTimer(on: task.eventLoop)
            return task.eventLoop.makeSucceededVoidFuture()
        case .stopProducing:
            // The reader is the slow side: no idle limit while it catches up.
            disarmIdleTimer()
            let promise = task.eventLoop.makePromise(of: Void.self)
            enum Next { case gone, goOn, wait }
            let next: Next = state.withLock { state in
                if state.readerGone { return .gone }
                if state.demanded {
                    // The reader's request came between the yield and here.
                    state.demanded = false
                    return .goOn
                }
                state.waiting = promise
                return .wait
            }
            switch next {
            case .gone:
                promise.fail(CancellationError())
            case .goOn:
                armIdleTimer(on: task.eventLoop)
                promise.succeed()
            case .wait:
                break
            }
            return promise.futureResult
        case .dropped:
            return task.eventLoop.makeFailedFuture(CancellationError())
        }
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

    /// The request ended without a response head and without an error of its own.
    struct ClosedBeforeHead: Error, CustomStringConvertible {
        var description: String { "the connection closed before the response head arrived" }
    }
}
