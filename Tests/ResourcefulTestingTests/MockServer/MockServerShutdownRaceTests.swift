import Foundation
import ProcessTestSupport
import Resourceful
import ResourcefulTesting
import Testing

#if canImport(Glibc)
import CDispatch
import CoreFoundation
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Connections that arrive while a ``MockServer`` shuts down: none may crash the process (an
/// asynchronous channel dropped before it became active traps in NIO), and every one is closed.
@Suite struct MockServerShutdownRaceTests {
    /// Opens raw connections to `port` as fast as a thread can until `stop` is set, keeping the
    /// newest `limit` open (older ones are closed to make room): their descriptors.
    private static func flood(_ port: Int, limit: Int, opened: Flag) -> [Int32] {
        var descriptors: [Int32] = []
        var total = 0
        while !opened.isStopped {
            if descriptors.count >= limit { close(descriptors.removeFirst()) }
            if let descriptor = LoopbackSocket.connectWithoutWaiting(to: port) { descriptors.append(descriptor) }
            total += 1
            opened.count(total)
        }
        return descriptors
    }

    @Test func connectionsArrivingDuringShutdownNeitherCrashNorStayOpen() async throws {
        for _ in 0..<50 {
            let server = try await MockServer.start()
            let flag = Flag()
            let flood = Task { try await onOwnThread { Self.flood(server.port, limit: 100, opened: flag) } }
            // Shut down once some connections are in, while more keep coming.
            let started = ContinuousClock.now + .seconds(30)
            while flag.opened < 2, ContinuousClock.now < started {
                try? await Task.sleep(for: .milliseconds(1))
            }
            try await server.shutdown()
            flag.stop()
            let descriptors = try await flood.value
            defer { for descriptor in descriptors { close(descriptor) } }
            // Every connection ends (closed by the server, reset or refused): none is left open
            // with nobody serving it.
            let deadline = ContinuousClock.now + .seconds(30)
            var pending = descriptors
            while !pending.isEmpty, ContinuousClock.now < deadline {
                // A byte from the client side: a connection the kernel completed but nobody
                // accepted (a full backlog) is reset, and only one the server holds open stays.
                for descriptor in pending { Self.poke(descriptor) }
                pending = pending.filter { !Self.hasEnded($0) }
                if !pending.isEmpty { try? await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(pending.isEmpty, "\(pending.count) of \(descriptors.count) connections were left open after shutdown")
        }
    }

    /// Writes one byte on `descriptor` without waiting (and without `SIGPIPE`).
    private static func poke(_ descriptor: Int32) {
        var byte = UInt8(ascii: "x")
        _ = send(descriptor, &byte, 1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
    }

    /// Whether the connection on `descriptor` has ended: closed by the peer, reset or refused.
    private static func hasEnded(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return false }
        if entry.revents & Int16(POLLERR | POLLHUP) != 0 { return true }
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
    }
}

/// Shared between a test and its flood: when to stop, and how many connections are open (under
/// the package's lock, which ThreadSanitizer understands).
private final class Flag: Sendable {
    private struct State: Sendable {
        var stopped = false
        var opened = 0
    }
    private let state = Locked(State())

    var isStopped: Bool { state.withLock { $0.stopped } }
    var opened: Int { state.withLock { $0.opened } }
    func stop() { state.withLock { $0.stopped = true } }
    func count(_ opened: Int) { state.withLock { $0.opened = opened } }
}
