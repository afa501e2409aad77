import Foundation
import ProcessTestSupport
import Resourceful
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback listener a browser login waits on, against another user of the machine who
/// connects to its port: nothing they do keeps the real redirect out.
@Suite struct LoopbackRedirectTests {
    /// Holds `count` connections to `port` open until cancelled, half of them idle and half with
    /// a request head begun and never finished, opening a new one whenever the listener closes
    /// one (counted in `closed`).
    static func holdConnections(_ count: Int, to port: Int, closed: Locked<Int>) async {
        struct Held {
            var descriptor: Int32
            var partialHead: Bool
            var sent = false
        }
        var held: [Held] = []
        defer { for connection in held { close(connection.descriptor) } }
        var serial = 0
        while !Task.isCancelled {
            held = held.filter { connection in
                var byte: UInt8 = 0
                let read = recv(connection.descriptor, &byte, 1, Int32(MSG_DONTWAIT))
                if read < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN { return true }
                close(connection.descriptor)
                closed.withLock { $0 += 1 }
                return false
            }
            while held.count < count, let descriptor = LoopbackSocket.connectWithoutWaiting(to: port) {
                serial += 1
                held.append(Held(descriptor: descriptor, partialHead: serial % 2 == 0))
            }
            for index in held.indices where held[index].partialHead && !held[index].sent {
                let head = Array("GET /callback?state=".utf8)
                held[index].sent = send(held[index].descriptor, head, head.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) == head.count
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func connectionsHeldOpenDoNotKeepTheRealRedirectOut() async throws {
        let state = "state-\(UUID().uuidString)"
        let deadline = ContinuousClock.now + .seconds(20)
        let (addresses, address) = AsyncStream.makeStream(of: String.self)
        async let received = LoopbackRedirect.receive(state: state, deadline: deadline) { redirectURI in
            address.yield(redirectURI)
            address.finish()
        }
        var iterator = addresses.makeAsyncIterator()
        let redirectURI = try #require(await iterator.next())
        let port = try #require(URLComponents(string: redirectURI)?.port)
        // Another user keeps more connections open than the listener serves, renewing each one
        // it closes, for the whole login.
        let closed = Locked(0)
        let holding = Task { await Self.holdConnections(40, to: port, closed: closed) }
        defer { holding.cancel() }
        // The listener is full once it has closed some of them.
        while closed.withLock({ $0 }) < 8, ContinuousClock.now < deadline - .seconds(12) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(closed.withLock { $0 } >= 8, "the listener never filled")
        // The browser brings the real redirect, and the login has it well within its time.
        let answer = try? await Command.run(
            "/usr/bin/curl", ["-sS", "--max-time", "8", "-o", "/dev/null", "-w", "%{http_code}", "\(redirectURI)?state=\(state)&code=real"]
        )
        let redirect = try await received
        #expect(answer?.output == "200")
        #expect(redirect.parameters["code"] == "real")
        #expect(ContinuousClock.now < deadline - .seconds(8))
        holding.cancel()
        await holding.value
    }

    @Test func aConnectionThatSendsNoRequestHeadIsClosedSoon() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        let (addresses, address) = AsyncStream.makeStream(of: String.self)
        async let received = LoopbackRedirect.receive(state: "s", deadline: deadline) { redirectURI in
            address.yield(redirectURI)
            address.finish()
        }
        var iterator = addresses.makeAsyncIterator()
        let redirectURI = try #require(await iterator.next())
        let port = try #require(URLComponents(string: redirectURI)?.port)
        // One idle, one with half a request line: neither sends a whole head.
        let idle = try #require(LoopbackSocket.connectWithoutWaiting(to: port))
        let partial = try #require(LoopbackSocket.connectWithoutWaiting(to: port))
        defer {
            close(idle)
            close(partial)
        }
        let start = ContinuousClock.now
        let head = Array("GET /callback?st".utf8)
        var sent = false
        var open: Set<Int32> = [idle, partial]
        while !open.isEmpty, ContinuousClock.now < start + LoopbackRedirect.connectionTimeout {
            if !sent { sent = send(partial, head, head.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) == head.count }
            for descriptor in open {
                var byte: UInt8 = 0
                let read = recv(descriptor, &byte, 1, Int32(MSG_DONTWAIT))
                if !(read < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) { open.remove(descriptor) }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let held = ContinuousClock.now - start
        #expect(open.isEmpty, "a connection without a request head was held")
        // Closed after the head's limit, well before the whole request's.
        #expect(held < LoopbackRedirect.headTimeout + (LoopbackRedirect.connectionTimeout - LoopbackRedirect.headTimeout) / 2)
        // The login goes on: the real redirect still counts.
        let answer = try? await Command.run(
            "/usr/bin/curl", ["-sS", "--max-time", "8", "-o", "/dev/null", "-w", "%{http_code}", "\(redirectURI)?state=s&code=real"]
        )
        #expect(answer?.output == "200")
        #expect(try await received.parameters["code"] == "real")
    }
}
