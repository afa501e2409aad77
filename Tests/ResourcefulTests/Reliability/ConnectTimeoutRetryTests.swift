import Foundation
import ProcessTestSupport
import Resourceful
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A server that does not answer a connection at all (its queue of connections is full, so the
/// kernel drops new ones): nothing of the request was sent, so the connection is tried again
/// within the connect-retry budget, for every method, each try bounded by `http.connectTimeout`.
@Suite struct ConnectTimeoutRetryTests {
    /// A socket listening on 127.0.0.1 with a queue of one connection, filled and never
    /// accepted: further connections are not answered.
    final class FullListener: Sendable {
        let port: Int
        private let descriptors: [Int32]

        init() throws {
            let (listening, port) = try LoopbackSocket.bound(listening: 0)
            // Fills the queue without waiting: connections that are not answered stay pending.
            descriptors = [listening] + (0..<2).compactMap { _ in LoopbackSocket.connectWithoutWaiting(to: port) }
            self.port = port
        }

        func stop() {
            for descriptor in descriptors { _ = close(descriptor) }
        }
    }

    @Test func aCreateIsTriedAgainWhenNoConnectionIsAnswered() async throws {
        let listener = try FullListener()
        defer { listener.stop() }
        let timeout = Duration.seconds(60)
        var config = APIConfig(baseURL: try #require(URL(string: "http://127.0.0.1:\(listener.port)/v1")), service: "s", timeout: timeout)
        config.http.connectTimeout = .milliseconds(150)
        // Long enough for more than one connection on a loaded machine, where the first one
        // (the client's set-up with it) can take seconds.
        config.http.connectRetryBudget = .seconds(15)
        let transport = AsyncHTTPClientTransport(settings: config.http)
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
        let start = ContinuousClock.now
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.create, "items")) }
        let elapsed = ContinuousClock.now - start
        try await transport.shutdown()
        #expect(error?.kind == .transport)
        let description = error?.description ?? ""
        #expect(description.contains("127.0.0.1:\(listener.port) was not answered within http.connectTimeout"), "\(description)")
        #expect((ConnectFailure.attempts(description) ?? 0) > 1, "\(description)")
        #expect(elapsed < timeout / 2)
    }
}
