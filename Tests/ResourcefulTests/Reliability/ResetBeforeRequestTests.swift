import Foundation
import ProcessTestSupport
import Resourceful
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A server that resets each connection as soon as it accepts it, as one that is going down
/// does: the TLS handshake breaks before any of the request is written, so the connection is
/// tried again within the connect-retry budget for every method, a create included.
@Suite struct ResetBeforeRequestTests {
    /// Accepts on 127.0.0.1 and resets each connection at once (`SO_LINGER` 0), on a thread of
    /// its own: nothing here waits on the cooperative pool.
    final class ResettingListener: Sendable {
        let port: Int
        let accepted = Atomic<Int>(0)
        private let descriptor: Int32

        init() throws {
            let (fd, port) = try LoopbackSocket.bound(listening: 64)
            descriptor = fd
            self.port = port
            let thread = Thread { [self] in
                while true {
                    let connection = accept(fd, nil, nil)
                    guard connection >= 0 else { return }
                    self.accepted.add(1, ordering: .relaxed)
                    var reset = linger(l_onoff: 1, l_linger: 0)
                    _ = setsockopt(connection, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
                    close(connection)
                }
            }
            thread.start()
        }

        /// Stops accepting: the blocked `accept` returns and the thread ends.
        func stop() {
            shutdown(descriptor, Int32(SHUT_RDWR))
            close(descriptor)
        }
    }

    @Test func aCreateIsTriedOnNewConnectionsWhileTheyAreResetBeforeTheRequest() async throws {
        let listener = try ResettingListener()
        defer { listener.stop() }
        let timeout = Duration.seconds(60)
        var config = APIConfig(baseURL: try #require(URL(string: "https://127.0.0.1:\(listener.port)/v1")), service: "s", timeout: timeout)
        // Long enough for more than one connection on a loaded machine, where the first one
        // (the client's set-up with it) can take seconds.
        config.http.connectRetryBudget = .seconds(15)
        let transport = AsyncHTTPClientTransport(settings: config.http)
        let api = API(dependencies: APIDependencies(apiConfig: config, transport: transport))
        let start = ContinuousClock.now
        // A create that does not opt into retries.
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.create, "items")) }
        let elapsed = ContinuousClock.now - start
        try await transport.shutdown()
        #expect(error?.kind == .transport, "\(String(describing: error?.underlying))")
        let description = error?.description ?? ""
        #expect(description.contains("127.0.0.1:\(listener.port) was closed before the request was sent"), "\(description)")
        #expect(listener.accepted.load(ordering: .relaxed) > 1)
        #expect(elapsed < timeout / 2)
    }
}
