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
    /// one (counted in `closed`). Once a connection is refused the listener is gone, and its port
    /// may be another server's soon: nothing more is opened.
    static func holdConnections(_ count: Int, to port: Int, closed: Locked<Int>) async {
        struct Held {
            var descriptor: Int32
            var partialHead: Bool
            var sent = false
        }
        var held: [Held] = []
        defer { for connection in held { close(connection.descriptor) } }
        var serial = 0
        var refused = false
        while !Task.isCancelled {
            held = held.filter { connection in
                var byte: UInt8 = 0
                let read = recv(connection.descriptor, &byte, 1, Int32(MSG_DONTWAIT))
                if read < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN { return true }
                if read < 0, errno == ECONNREFUSED {
                    refused = true
                } else {
                    closed.withLock { $0 += 1 }
                }
                close(connection.descriptor)
                return false
            }
            while !refused, !Task.isCancelled, held.count < count, let descriptor = LoopbackSocket.connectWithoutWaiting(to: port) {
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

    /// Runs `body` while ``holdConnections(_:to:closed:)`` holds `count` connections to `port`,
    /// and stops the flood (cancelled and awaited) however `body` ends.
    static func whileHolding<T>(
        _ count: Int,
        to port: Int,
        closed: Locked<Int>,
        _ body: () async throws -> T
    ) async throws -> T {
        let holding = Task { await holdConnections(count, to: port, closed: closed) }
        do {
            let result = try await body()
            holding.cancel()
            await holding.value
            return result
        } catch {
            holding.cancel()
            await holding.value
            throw error
        }
    }

    @Test func connectionsHeldOpenDoNotKeepTheRealRedirectOut() async throws {
        let state = "state-\(UUID().uuidString)"
        // Long enough for a loaded machine: every wait below is a share of it.
        let deadline = ContinuousClock.now + .seconds(60)
        let (addresses, address) = AsyncStream.makeStream(of: String.self)
        let receiving = Task {
            // The address stream ends with the login, so that a login that fails early ends the
            // wait for its address too.
            defer { address.finish() }
            return try await LoopbackRedirect.receive(state: state, deadline: deadline) { redirectURI in
                address.yield(redirectURI)
                address.finish()
            }
        }
        defer { receiving.cancel() }
        var iterator = addresses.makeAsyncIterator()
        let redirectURI = try #require(await iterator.next())
        let port = try #require(URLComponents(string: redirectURI)?.port)
        // Another user keeps more connections open than the listener serves, renewing each one
        // it closes, for the whole login.
        let closed = Locked(0)
        let (answer, redirect, closedBefore) = try await Self.whileHolding(40, to: port, closed: closed) {
            // The listener is full once it has closed some of them (evicted or timed out).
            while closed.withLock({ $0 }) < 8, ContinuousClock.now < deadline - .seconds(30) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let closedBefore = closed.withLock { $0 }
            // The browser brings the real redirect while the flood goes on, and the login has it
            // well within its time.
            let answer = try? await Command.run(
                "/usr/bin/curl", ["-sS", "--max-time", "20", "-o", "/dev/null", "-w", "%{http_code}", "\(redirectURI)?state=\(state)&code=real"]
            )
            return (answer, try await receiving.value, closedBefore)
        }
        #expect(closedBefore >= 8, "the listener never filled")
        #expect(answer?.output == "200")
        #expect(redirect.parameters["code"] == "real")
        #expect(ContinuousClock.now < deadline - .seconds(10))
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
