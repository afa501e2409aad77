import Foundation
import HTTPTypes
import NIOCore
import Resourceful
import ResourcefulTesting
import Testing

/// Streams of lines and events in bounded memory whatever the mix of lengths: one long line
/// then many short ones must not give each short one a buffer as large as the long one.
@Suite(.serialized) struct StreamMemoryTests {
    /// The process's peak virtual size (`VmPeak`), in bytes: what buffers reserved, touched or not.
    static func peakVirtualBytes() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmPeak:") })
        let kilobytes = try #require(Int(line.dropFirst(7).trimmingCharacters(in: .whitespaces).dropLast(3).trimmingCharacters(in: .whitespaces)))
        return kilobytes * 1024
    }

    @Test func recordsAfterALongLineHoldOnlyTheirOwnBytes() throws {
        let long = 1 << 20
        var splitter = LineSplitter(maxBytes: 4 << 20, separator: .lineFeed)
        var records: [[UInt8]] = []
        // The long line arrives in two buffers, so that it is assembled in the splitter's own.
        try splitter.feed(ByteBuffer(repeating: UInt8(ascii: " "), count: long / 2), into: &records)
        try splitter.feed(ByteBuffer(bytes: [UInt8](repeating: UInt8(ascii: " "), count: long / 2) + [0x0A]), into: &records)
        let short = [UInt8](repeating: 0, count: 4096).flatMap { _ in [UInt8(ascii: "1"), 0x0A] }
        // A short line split between buffers too, then four thousand whole ones.
        try splitter.feed(ByteBuffer(bytes: [UInt8(ascii: "2")]), into: &records)
        try splitter.feed(ByteBuffer(bytes: [UInt8(ascii: "2"), 0x0A] + short), into: &records)
        #expect(records.count == 4098)
        #expect(records[1] == [UInt8(ascii: "2"), UInt8(ascii: "2")])
        let retained = records.dropFirst().reduce(0) { $0 + $1.capacity }
        // A few bytes each; before, each held a buffer of the long line's size (4 GiB in all).
        #expect(retained < 4098 * 64, "the short records hold \(retained) bytes")
        #expect(records[0].capacity < 2 * long)
    }

    @Test func aLongLineThenManyShortOnesStaysInBoundedMemory() async throws {
        // 8 MiB of one value (a number, then spaces), then 16 chunks of 16,384 short lines, sent
        // chunked by a real server.
        let long = 8 << 20
        var longLine = Data("7".utf8)
        longLine.append(Data(repeating: UInt8(ascii: " "), count: long - 1))
        longLine.append(0x0A)
        let chunk = Data(String(repeating: "1\n", count: 16384).utf8)
        try await Harness.run(configure: { $0.maxResponseBytes = 16 << 20 }) { harness in
            var response = MockResponse(headerFields: [.contentType: "application/x-ndjson"])
            response.parts = [longLine] + Array(repeating: chunk, count: 16)
            harness.server.stub(.get, "/v1/rows", response)
            let before = try Self.peakVirtualBytes()
            var count = 0
            var sum = 0
            for try await value in harness.api.lines(AdHocRequest<Int, Empty>(.index, "rows")) {
                count += 1
                sum += value
            }
            let after = try Self.peakVirtualBytes()
            #expect(count == 1 + 16 * 16384)
            #expect(sum == 7 + 16 * 16384)
            // The long line a few times over, and room for the rest of the process; before, each
            // short line reserved 8 MiB: 128 GiB per chunk.
            #expect(after - before < 2 << 30, "the peak virtual size grew by \((after - before) >> 20) MiB")
        }
    }

    @Test func eventsAfterALongLineInManyBuffersStayCorrect() throws {
        var parser = ServerSentEventParser(maxBytes: 4 << 20)
        var events: [ServerSentEventParser.Event] = []
        let long = String(repeating: "x", count: 1 << 20)
        try parser.feed(ByteBuffer(string: "data: " + long.prefix(1000)), into: &events)
        try parser.feed(ByteBuffer(string: long.dropFirst(1000) + "\n\n"), into: &events)
        for index in 0..<2000 {
            try parser.feed(ByteBuffer(string: "da"), into: &events)
            try parser.feed(ByteBuffer(string: "ta: \(index)\n\n"), into: &events)
        }
        #expect(events.count == 2001)
        #expect(events.first?.data == long)
        #expect(events.dropFirst().map(\.data) == (0..<2000).map(String.init))
    }
}
