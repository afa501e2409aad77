import Foundation
import HTTPTypes
import Resourceful
import ResourcefulTesting
import Synchronization
import Testing

/// Only a connection failure a transport reports as a ``TransportError`` is tried again: any other
/// error it throws (a replay that no recording answers, a transport's own fault) would come again,
/// so the call fails after one attempt.
@Suite struct TransportFailureRetryTests {
    /// Counts the requests that reach `inner`.
    final class CountingTransport: HTTPTransport {
        let inner: any HTTPTransport
        let sends = Atomic<Int>(0)

        init(_ inner: any HTTPTransport) { self.inner = inner }

        func send(_ request: TransportRequest) async throws(TransportError) -> TransportResponse {
            sends.add(1, ordering: .relaxed)
            return try await inner.send(request)
        }
    }

    /// An error of a transport's own.
    struct OwnFailure: Error {}

    static func api(_ transport: some HTTPTransport) -> API {
        let config = APIConfig(
            baseURL: URL(string: "http://127.0.0.1:9/v1")!, service: "s", timeout: .seconds(30),
            retry: .init(maxAttempts: 3, baseDelay: .milliseconds(1), maxDelay: .milliseconds(5))
        )
        return API(dependencies: APIDependencies(apiConfig: config, transport: transport))
    }

    @Test func aReplayThatNoRecordingAnswersFailsAfterOneAttempt() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("resourceful-replay-miss-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = try RecordingTransport(StubTransport { _ in TransportResponse(status: .noContent) }, file: file)
        _ = try await Self.api(recorder).call(AdHocRequest<Empty, Empty>(.show, "recorded"))
        let counting = CountingTransport(try ReplayingTransport(file: file))
        let api = Self.api(counting)
        _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "recorded"))
        #expect(counting.sends.load(ordering: .relaxed) == 1)

        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.show, "not-recorded")) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying is CassetteError)
        #expect(counting.sends.load(ordering: .relaxed) == 2)
    }

    @Test func anErrorThatIsNotATransportErrorIsNotRetried() async throws {
        let counting = CountingTransport(StubTransport { _ in throw OwnFailure() })
        let error = await #expect(throws: APIError.self) { _ = try await Self.api(counting).call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(error?.kind == .transport)
        #expect(error?.underlying is OwnFailure)
        #expect(counting.sends.load(ordering: .relaxed) == 1)
    }

    @Test func aConnectionFailureIsStillRetried() async throws {
        let counting = CountingTransport(StubTransport { _ in throw TransportError.connectionFailed(OwnFailure()) })
        let error = await #expect(throws: APIError.self) { _ = try await Self.api(counting).call(AdHocRequest<Empty, Empty>(.show, "x")) }
        #expect(error?.kind == .transport)
        #expect(counting.sends.load(ordering: .relaxed) == 3)
    }
}
