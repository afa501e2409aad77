import NIOCore
import Resourceful
import Testing

/// A body is collected bytes or a stream; collecting either keeps the size limit, and a stream
/// over it is read no further than needed to tell.
@Suite struct TransportBodyTests {
    /// Counts the chunks it hands out.
    struct Chunks: AsyncSequence, Sendable {
        let count: Int
        let size: Int
        let handedOut: Locked<Int>
        struct AsyncIterator: AsyncIteratorProtocol {
            let parent: Chunks
            var index = 0
            mutating func next() async -> ByteBuffer? {
                guard index < parent.count else { return nil }
                index += 1
                parent.handedOut.withLock { $0 += 1 }
                return ByteBuffer(repeating: UInt8(ascii: "a"), count: parent.size)
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(parent: self) }
    }

    @Test func collectedBytesAreTheirOwnAnswer() async throws {
        let body = TransportBody("hello")
        #expect(body.bytes == ByteBuffer(string: "hello"))
        #expect(body.length == 5)
        #expect(!body.isEmpty && TransportBody().isEmpty)
        #expect(try await body.collect(upTo: 5) == ByteBuffer(string: "hello"))
        await #expect(throws: TransportError.self) { try await body.collect(upTo: 4) }
        var chunks: [ByteBuffer] = []
        for try await chunk in body { chunks.append(chunk) }
        #expect(chunks == [ByteBuffer(string: "hello")])
        for try await _ in TransportBody() { Issue.record("an empty body yielded a buffer") }
    }

    @Test func aStreamIsReadInOrderAndCollectedWhole() async throws {
        let handedOut = Locked(0)
        let body = TransportBody(stream: Chunks(count: 4, size: 3, handedOut: handedOut))
        #expect(body.bytes == nil && body.length == nil && !body.isEmpty)
        let collected = try await body.collect(upTo: 12)
        #expect(collected.readableBytes == 12)
        #expect(handedOut.value == 4)
    }

    @Test func aStreamOverTheLimitIsReadNoFurther() async throws {
        let handedOut = Locked(0)
        let body = TransportBody(stream: Chunks(count: 1000, size: 1024, handedOut: handedOut))
        let error = await #expect(throws: TransportError.self) { try await body.collect(upTo: 10 * 1024) }
        #expect(error?.description == "TransportError.responseTooLarge")
        #expect(handedOut.value == 11)
    }

    @Test func aStreamOfAnAnnouncedLengthOverTheLimitIsNotReadAtAll() async throws {
        let handedOut = Locked(0)
        let body = TransportBody(stream: Chunks(count: 10, size: 10, handedOut: handedOut), length: 100)
        await #expect(throws: TransportError.self) { try await body.collect(upTo: 99) }
        #expect(handedOut.value == 0)
    }
}
