import Foundation
import NIOCore
import ProcessTestSupport
import Resourceful
import Testing

@testable import ResourcefulOAuth2

#if canImport(Glibc)
    import Glibc
#endif

/// The loopback listener's end is final: a connection the listener accepted as the login ended,
/// but that NIO sets up only after (on its own event loop, which may run late), is closed with
/// nothing answered, not left open or served.
@Suite struct LoopbackRedirectEndTests {
    @Test func aConnectionSetUpAfterTheLoginEndedIsClosedUnanswered() async throws {
        let state = "state-\(UUID().uuidString)"
        // Long enough for a loaded machine: every wait below is a share of it.
        let deadline = ContinuousClock.now + .seconds(60)
        // The first connection's set-up is held back until the login has ended.
        let setUps = Locked(0)
        let heldBack = Locked<EventLoopPromise<Void>?>(nil)
        defer { heldBack.withLock { $0 }?.succeed() }
        let settingUp: @Sendable (any Channel) -> EventLoopFuture<Void> = { channel in
            let number = setUps.withLock {
                $0 += 1
                return $0
            }
            guard number == 1 else { return channel.eventLoop.makeSucceededVoidFuture() }
            let promise = channel.eventLoop.makePromise(of: Void.self)
            heldBack.withLock { $0 = promise }
            return promise.futureResult
        }
        let (addresses, address) = AsyncStream.makeStream(of: String.self)
        let receiving = Task {
            defer { address.finish() }
            return try await LoopbackRedirect.receive(state: state, deadline: deadline, settingUp: settingUp) { redirectURI in
                address.yield(redirectURI)
                address.finish()
            }
        }
        defer { receiving.cancel() }
        var iterator = addresses.makeAsyncIterator()
        let redirectURI = try #require(await iterator.next())
        let port = try #require(URLComponents(string: redirectURI)?.port)

        // A connection whose set-up is under way as the login ends, its request already sent.
        let late = try #require(LoopbackSocket.connectWithoutWaiting(to: port))
        defer { close(late) }
        while heldBack.withLock({ $0 }) == nil, ContinuousClock.now < deadline - .seconds(40) {
            try await Task.sleep(for: .milliseconds(5))
        }
        let promise = try #require(heldBack.withLock { $0 }, "the connection was never accepted")
        let request = Array("GET /callback?state=\(state)&code=late HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        var sent = 0
        while sent < request.count, ContinuousClock.now < deadline - .seconds(40) {
            let written = request[sent...].withUnsafeBytes { send(late, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if written > 0 { sent += written } else { try await Task.sleep(for: .milliseconds(5)) }
        }

        // The real redirect ends the login.
        let answer = try? await Command.run(
            "/usr/bin/curl",
            ["-sS", "--max-time", "20", "-o", "/dev/null", "-w", "%{http_code}", "\(redirectURI)?state=\(state)&code=real"]
        )
        #expect(answer?.output == "200")
        #expect(try await receiving.value.parameters["code"] == "real")

        // Only now is the late connection set up: it is closed, and nothing is answered.
        promise.succeed()
        var answered: [UInt8] = []
        var closed = false
        let watchedUntil = ContinuousClock.now + .seconds(10)
        while !closed, ContinuousClock.now < watchedUntil {
            var buffer = [UInt8](repeating: 0, count: 512)
            let read = recv(late, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if read > 0 {
                answered += buffer[0..<read]
            } else if read == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                closed = true
            } else {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(closed, "a connection set up after the login ended was left open")
        #expect(answered.isEmpty, "a connection set up after the login ended was answered")
    }
}
