@testable import Resourceful
import NIOCore
import Testing

/// The event stream parser against the cases of the WHATWG HTML standard's "Interpreting an
/// event stream", each fed whole, a byte at a time, and split in two at every position.
@Suite struct ServerSentEventParserTests {
    struct E: Equatable, CustomStringConvertible {
        var type: String
        var data: String
        var id: String
        var description: String { "(\(type.debugDescription), \(data.debugDescription), id=\(id.debugDescription))" }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var input: [UInt8]
        var expected: [E]
        var retry: Int? = nil
        var extraSplits: [[[UInt8]]] = []
        var testDescription: String { name }
    }

    static func M(_ data: String, type: String = "message", id: String = "") -> E { E(type: type, data: data, id: id) }
    static func b(_ s: String) -> [UInt8] { Array(s.utf8) }
    static let BOM: [UInt8] = [0xEF, 0xBB, 0xBF]

    static let cases: [Case] = [
        Case(name: "LF endings", input: b("data: a\n\ndata: b\n\n"), expected: [M("a"), M("b")]),
        Case(name: "CR endings", input: b("data: a\r\rdata: b\r\r"), expected: [M("a"), M("b")]),
        Case(name: "CRLF endings", input: b("data: a\r\n\r\ndata: b\r\n\r\n"), expected: [M("a"), M("b")]),
        Case(name: "CRLF split across chunks = one line end", input: b("data: a\r\ndata: b\r\n\r\n"), expected: [M("a\nb")],
             extraSplits: [[b("data: a\r"), b("\ndata: b\r\n\r\n")], [b("data: a\r\ndata: b\r"), b("\n\r"), b("\n")]]),
        Case(name: "mixed endings", input: b("data: a\r\ndata: b\ndata: c\r\r\ndata: d\n\r\n"), expected: [M("a\nb\nc"), M("d")]),
        Case(name: "CR CR = blank line", input: b("data: a\r\r\ndata: b\r\n\n"), expected: [M("a"), M("b")]),
        Case(name: "BOM at stream start skipped", input: BOM + b("data: a\n\n"), expected: [M("a")]),
        Case(name: "BOM later in stream NOT skipped", input: BOM + b("data: a\n\n") + BOM + b("data: b\n\n"), expected: [M("a")]),
        Case(name: "only one BOM skipped", input: BOM + BOM + b("data: a\n\n"), expected: []),
        Case(name: "multi-line data joined with LF", input: b("data: a\ndata: b\ndata: c\n\n"), expected: [M("a\nb\nc")]),
        Case(name: "only last trailing LF removed", input: b("data: a\ndata:\ndata:\n\n"), expected: [M("a\n\n")]),
        Case(name: "event field + type reset", input: b("event: foo\ndata: x\n\ndata: y\n\n"), expected: [M("x", type: "foo"), M("y")]),
        Case(name: "empty event field -> message", input: b("event:\ndata: x\n\n"), expected: [M("x")]),
        Case(name: "no data => not dispatched (event only)", input: b("event: foo\n\ndata: x\n\n"), expected: [M("x")]),
        Case(name: "no data => not dispatched, id still applies", input: b("id: 5\n\ndata: x\n\n"), expected: [M("x", id: "5")]),
        Case(name: "no data => not dispatched, retry still applies", input: b("retry: 100\n\ndata: x\n\n"), expected: [M("x")], retry: 100),
        Case(name: "bare blank lines dispatch nothing", input: b("\n\n\ndata: x\n\n\n"), expected: [M("x")]),
        Case(name: "id persists to later events", input: b("id: 1\ndata: a\n\ndata: b\n\n"), expected: [M("a", id: "1"), M("b", id: "1")]),
        Case(name: "id with NUL ignored", input: b("id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\n"), expected: [M("a", id: "1"), M("b", id: "1")]),
        Case(name: "id: (empty) resets", input: b("id: 1\ndata: a\n\nid:\ndata: b\n\n"), expected: [M("a", id: "1"), M("b", id: "")]),
        Case(name: "id (no colon) resets", input: b("id: 1\ndata: a\n\nid\ndata: b\n\n"), expected: [M("a", id: "1"), M("b", id: "")]),
        Case(name: "retry digits", input: b("retry: 5000\ndata: x\n\n"), expected: [M("x")], retry: 5000),
        Case(name: "retry: 0 valid", input: b("retry: 0\ndata: x\n\n"), expected: [M("x")], retry: 0),
        Case(name: "retry: 12a ignored", input: b("retry: 12a\ndata: x\n\n"), expected: [M("x")], retry: nil),
        Case(name: "retry: (empty) ignored", input: b("retry:\ndata: x\n\n"), expected: [M("x")], retry: nil),
        Case(name: "retry: -5 ignored", input: b("retry: -5\ndata: x\n\n"), expected: [M("x")], retry: nil),
        Case(name: "retry: +5 ignored", input: b("retry: +5\ndata: x\n\n"), expected: [M("x")], retry: nil),
        Case(name: "retry: 7 then 12a keeps 7", input: b("retry: 7\ndata: x\n\nretry: 12a\ndata: y\n\n"), expected: [M("x"), M("y")], retry: 7),
        Case(name: "comments ignored", input: b(": hi\ndata: x\n:\n:: z\n\n"), expected: [M("x")]),
        Case(name: "`data` no colon -> empty value", input: b("data\ndata\n\n"), expected: [M("\n")]),
        Case(name: "`data` alone -> \"\" dispatched", input: b("data\n\n"), expected: [M("")]),
        Case(name: "`data` no colon after data: a", input: b("data: a\ndata\n\n"), expected: [M("a\n")]),
        Case(name: "`data` no colon before data: a", input: b("data\ndata: a\n\n"), expected: [M("\na")]),
        Case(name: "one leading space stripped", input: b("data:  x\n\ndata:x\n\ndata: \n\n"), expected: [M(" x"), M("x"), M("")]),
        Case(name: "value containing colons", input: b("data: a: b:c\n\n"), expected: [M("a: b:c")]),
        Case(name: "unknown fields ignored (case-sensitive)", input: b("foo: bar\nDATA: y\ndata : z\ndata: x\n\n"), expected: [M("x")]),
        Case(name: "incomplete last event not dispatched (LF)", input: b("data: a\n\ndata: b\n"), expected: [M("a")]),
        Case(name: "incomplete last event not dispatched (no EOL)", input: b("data: a\n\ndata: b"), expected: [M("a")]),
        Case(name: "incomplete last event not dispatched (CR)", input: b("data: a\n\ndata: b\r"), expected: [M("a")]),
        Case(name: "incomplete last (id only) not dispatched", input: b("data: a\n\nid: 9"), expected: [M("a")]),
        Case(name: "non-ASCII UTF-8 split anywhere", input: b("data: héllo €😀 日本\n\n"), expected: [M("héllo €😀 日本")]),
        Case(name: "combining mark after colon", input: b("data:\u{301}x\n\n"), expected: [M("\u{301}x")]),
        Case(name: "combining mark after the stripped space", input: b("data: \u{301}x\n\n"), expected: [M("\u{301}x")]),
        Case(name: "NUL inside data kept", input: b("data: a\u{0}b\n\n"), expected: [M("a\u{0}b")]),
        Case(name: "invalid UTF-8 -> U+FFFD", input: b("data: ") + [0xFF] + b("\n\n"), expected: [M("\u{FFFD}")]),
    ]

    static func parse(_ chunks: [[UInt8]]) throws -> ([E], Int?) {
        var parser = ServerSentEventParser(maxBytes: 1 << 20)
        var events: [ServerSentEventParser.Event] = []
        for chunk in chunks { try parser.feed(ByteBuffer(bytes: chunk), into: &events) }
        return (events.map { E(type: $0.type, data: $0.data, id: $0.lastEventID) }, parser.retry)
    }

    @Test(arguments: cases) func eachSplitGivesTheStandardsEvents(_ example: Case) throws {
        var splits: [[[UInt8]]] = [[example.input], example.input.map { [$0] }] + example.extraSplits
        for cut in 0...example.input.count {
            splits.append([Array(example.input[..<cut]), Array(example.input[cut...])])
        }
        for chunks in splits {
            let (events, retry) = try Self.parse(chunks)
            #expect(events == example.expected, "split \(chunks.map(\.count))")
            #expect(retry == example.retry, "split \(chunks.map(\.count))")
        }
    }

    @Test func anIDBecomesTheLastEventIDOnlyWhenItsEventIsDispatched() throws {
        var parser = ServerSentEventParser(maxBytes: 1 << 20)
        var events: [ServerSentEventParser.Event] = []
        try parser.feed(ByteBuffer(string: "id: 1\ndata: a\n\nid: 2\ndata: b\n"), into: &events)
        // The connection breaks before event 2's blank line: a reconnection asks for what came
        // after event 1.
        #expect(events.map(\.lastEventID) == ["1"])
        #expect(parser.lastEventID == "1")
        parser.restart()
        try parser.feed(ByteBuffer(string: "data: c\n\n"), into: &events)
        #expect(events.map(\.lastEventID) == ["1", "1"])
    }

    @Test func theReconnectionWaitIsBoundedWhateverTheServerAsks() {
        let reconnect = EventStreamReconnection(maxAttempts: 5, delay: .milliseconds(100), maxDelay: .seconds(2))
        #expect(reconnect.wait(failures: 0, retry: 999_999_999_999_999_999) <= .milliseconds(2400))
        #expect(reconnect.wait(failures: 0, retry: 50) >= .milliseconds(50))
        #expect(reconnect.wait(failures: 0, retry: 50) <= .milliseconds(60))
        // A server asking for no wait cannot make a failing stream spin.
        #expect(reconnect.wait(failures: 1, retry: 0) >= .milliseconds(200))
        #expect(reconnect.wait(failures: 16, retry: 0) <= .milliseconds(2400))
    }

    @Test func aLineLongerThanTheLimitFails() throws {
        var parser = ServerSentEventParser(maxBytes: 1000)
        var events: [ServerSentEventParser.Event] = []
        let long = ByteBuffer(bytes: Self.b("data: ") + Array(repeating: UInt8(ascii: "x"), count: 600))
        try parser.feed(long, into: &events)
        #expect(throws: ServerSentEventParser.TooLong.self) { try parser.feed(long, into: &events) }
    }

    @Test func anEventLongerThanTheLimitFails() throws {
        var parser = ServerSentEventParser(maxBytes: 1000)
        var events: [ServerSentEventParser.Event] = []
        let line = ByteBuffer(bytes: Self.b("data: ") + Array(repeating: UInt8(ascii: "x"), count: 300) + [UInt8(ascii: "\n")])
        for _ in 0..<3 { try parser.feed(line, into: &events) }
        #expect(throws: ServerSentEventParser.TooLong.self) { try parser.feed(line, into: &events) }
    }
}
