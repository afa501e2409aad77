import Foundation
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
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.EMFILE) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            guard bound == 0, named == 0, listen(fd, 0) == 0 else {
                close(fd)
                throw POSIXError(.EADDRINUSE)
            }
            var descriptors = [fd]
            // Fills the queue without waiting: connections that are not answered stay pending.
            for _ in 0..<2 {
                let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                guard client >= 0 else { break }
                _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) } }
                descriptors.append(client)
            }
            self.descriptors = descriptors
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        func stop() {
            for descriptor in descriptors { _ = close(descriptor) }
        }
    }

    /// The number of connections a failure's description says were tried.
    static func attempts(_ description: String) -> Int? {
        guard let match = description.firstMatch(of: /\((\d+) attempts? within http\.connectRetryBudget\)/) else { return nil }
        return Int(match.1)
    }

    @Test func aCreateIsTriedAgainWhenNoConnectionIsAnswered() async throws {
        let listener = try FullListener()
        defer { listener.stop() }
        let timeout = Duration.seconds(60)
        var config = APIConfig(baseURL: try #require(URL(string: "http://127.0.0.1:\(listener.port)/v1")), service: "s", timeout: timeout)
        config.http.connectTimeout = .milliseconds(150)
        // Long enough for more than one connection on a loaded machine.
        config.http.connectRetryBudget = .seconds(4)
        let transport = AsyncHTTPClientTransport(settings: config.http)
        let api = API(dependencies: APIDependencies(apiConfig: config, httpClient: transport))
        let start = ContinuousClock.now
        let error = await #expect(throws: APIError.self) { _ = try await api.call(AdHocRequest<Empty, Empty>(.create, "items")) }
        let elapsed = ContinuousClock.now - start
        try await transport.shutdown()
        #expect(error?.kind == .transport)
        let description = error?.description ?? ""
        #expect(description.contains("127.0.0.1:\(listener.port) was not answered within http.connectTimeout"), "\(description)")
        #expect((Self.attempts(description) ?? 0) > 1, "\(description)")
        #expect(elapsed < timeout / 2)
    }
}
