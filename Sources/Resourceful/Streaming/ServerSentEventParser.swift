package import Foundation
package import NIOCore

/// Reads an event stream as the WHATWG HTML standard says ("Interpreting an event stream"):
/// lines end at CR, LF or CRLF (a CRLF split between two buffers is one line end), one leading
/// BOM is skipped, `:` starts a comment, a line without a colon is a field with an empty value,
/// one space after the colon is dropped, `data` lines are joined with LF, `id` becomes the last
/// event ID when its event is dispatched, and persists (one holding NUL, or longer than 1 KiB,
/// is ignored), `retry` takes ASCII digits only, a blank line
/// dispatches the event when it has data, and an event not ended by a blank line is dropped.
///
/// Works on bytes, one pass: a line is copied only when it spans two buffers. A line or an
/// event's data longer than `maxBytes` fails the stream.
package struct ServerSentEventParser {
    /// An event as the stream dispatched it.
    package struct Event: Equatable {
        package var type: String
        /// The event's data, its lines joined with LF, as UTF-8: what a decoder reads as it is,
        /// with no String made first. Bytes that are not UTF-8 were replaced (U+FFFD) already.
        /// Empty when the parser keeps the data as text (``text``).
        package var bytes: Data
        /// The event's data as text, when the parser keeps it so (``keepsText``): a stream of
        /// Strings hands it out as it is, with no copy beside it.
        package var text: String?
        package var lastEventID: String

        /// The event's data as text.
        package var data: String { text ?? String(decoding: bytes, as: UTF8.self) }

        init(type: String, bytes: Data, text: String? = nil, lastEventID: String) {
            self.type = type
            self.bytes = bytes
            self.text = text
            self.lastEventID = lastEventID
        }

        init(type: String, data: String, lastEventID: String) {
            self.init(type: type, bytes: Data(data.utf8), lastEventID: lastEventID)
        }

        /// Equal as text, as when the data was a String.
        package static func == (lhs: Event, rhs: Event) -> Bool {
            lhs.type == rhs.type && lhs.lastEventID == rhs.lastEventID && lhs.data == rhs.data
        }
    }

    /// The longest `id` kept, in bytes: a longer one is ignored, as one holding NUL is.
    static let maxEventIDBytes = 1024

    /// A line or an event was longer than the limit.
    struct TooLong: Error {}

    /// The longest line or event data; a new connection may set another
    /// (``StreamedResponse/maxBytes``): it holds from the next byte fed.
    var maxBytes: Int
    /// Whether events keep their data as text (a stream of Strings) rather than as bytes for a
    /// decoder.
    var keepsText = false
    /// The last event ID, set when an event is dispatched and kept across events and
    /// connections: what `Last-Event-ID` sends.
    var lastEventID = ""
    /// The `id` field's value so far: the last event ID once the event is dispatched.
    private var idBuffer = ""
    /// The reconnection time the server asked for with `retry`, in milliseconds.
    var retry: Int?
    private var eventType: String?
    private var data: [UInt8] = []
    private var hasData = false
    /// A line that began in an earlier buffer.
    private var partial: [UInt8] = []
    /// The previous buffer ended with CR: an LF at the start of the next one ends nothing.
    private var afterCR = false
    /// How many bytes of a leading BOM (EF BB BF) have been seen; 3 once the start is past.
    private var bomSeen = 0
    private var atStart = true

    package init(maxBytes: Int, lastEventID: String = "") {
        self.maxBytes = maxBytes
        self.lastEventID = lastEventID
        idBuffer = lastEventID
    }

    /// Starts a new connection's stream: the line, the event and the BOM check begin again; the
    /// last event ID and the reconnection time stay.
    mutating func restart() {
        // An id of an event that was never dispatched is not the last event's.
        idBuffer = lastEventID
        eventType = nil
        data.removeAll(keepingCapacity: true)
        hasData = false
        partial.removeAll(keepingCapacity: true)
        afterCR = false
        bomSeen = 0
        atStart = true
    }

    /// Reads `buffer`, appending the events it completes to `events`.
    package mutating func feed(_ buffer: ByteBuffer, into events: inout [Event]) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            var index = 0
            let count = bytes.count
            if atStart {
                // The BOM may itself be split across buffers.
                let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
                while index < count, bomSeen < 3, bytes[index] == bom[bomSeen] {
                    bomSeen += 1
                    index += 1
                }
                if bomSeen == 3 || index < count {
                    if bomSeen < 3 && bomSeen > 0 {
                        // Not a BOM after all: the bytes seen were the line's.
                        partial.append(contentsOf: bom[0..<bomSeen])
                    }
                    atStart = false
                }
            }
            if afterCR, index < count {
                afterCR = false
                if bytes[index] == UInt8(ascii: "\n") { index += 1 }
            }
            var lineStart = index
            while index < count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                    if partial.isEmpty {
                        try line(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<index]), into: &events)
                    } else {
                        try append(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<index]))
                        // Moved out, read, emptied and moved back: one buffer, never shared, so
                        // that no line allocates another as large as the longest one seen.
                        var joined: [UInt8] = []
                        swap(&joined, &partial)
                        defer {
                            joined.removeAll(keepingCapacity: true)
                            partial = joined
                        }
                        try joined.withUnsafeBytes { try line($0, into: &events) }
                    }
                    index += 1
                    if byte == UInt8(ascii: "\r") {
                        if index == count {
                            afterCR = true
                        } else if bytes[index] == UInt8(ascii: "\n") {
                            index += 1
                        }
                    }
                    lineStart = index
                } else {
                    index += 1
                }
            }
            if lineStart < count { try append(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<count])) }
        }
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) throws {
        guard partial.count + bytes.count <= maxBytes else { throw TooLong() }
        partial.append(contentsOf: bytes)
    }

    /// Handles one line, without its line end.
    private mutating func line(_ line: UnsafeRawBufferPointer, into events: inout [Event]) throws {
        guard let first = line.first else {
            dispatch(into: &events)
            return
        }
        if first == UInt8(ascii: ":") { return }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = UnsafeRawBufferPointer(rebasing: line[..<(colon ?? line.count)])
        var valueStart = colon.map { $0 + 1 } ?? line.count
        if valueStart < line.count, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        if name.elementsEqual("data".utf8) {
            guard data.count + value.count + 1 <= maxBytes else { throw TooLong() }
            data.append(contentsOf: value)
            data.append(UInt8(ascii: "\n"))
            hasData = true
        } else if name.elementsEqual("event".utf8) {
            eventType = String(decoding: value, as: UTF8.self)
        } else if name.elementsEqual("id".utf8) {
            // An id holding NUL, or longer than `maxEventIDBytes`, is ignored (the last good one
            // stays): it is sent back as `Last-Event-ID` on every reconnection.
            if !value.contains(0), value.count <= Self.maxEventIDBytes { idBuffer = String(decoding: value, as: UTF8.self) }
        } else if name.elementsEqual("retry".utf8) {
            if !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                retry = value.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            }
        }
    }

    /// A blank line: the event so far goes out when it has data; the buffers are reset either way.
    private mutating func dispatch(into events: inout [Event]) {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = nil
        }
        lastEventID = idBuffer
        guard hasData else { return }
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        if keepsText {
            let text = String(decoding: data.dropLast(), as: UTF8.self)
            events.append(Event(type: type, bytes: Data(), text: text, lastEventID: lastEventID))
            return
        }
        let bytes = data.withUnsafeBytes { all in
            let text = UnsafeRawBufferPointer(rebasing: all.dropLast())
            // ASCII is UTF-8 as it is: copied once, straight into what the decoder reads. Anything
            // else is decoded as UTF-8 first, which replaces invalid sequences with U+FFFD.
            var high: UInt8 = 0
            for byte in text { high |= byte }
            guard high < 0x80 else { return Data(String(decoding: text, as: UTF8.self).utf8) }
            return text.baseAddress.map { Data(bytes: $0, count: text.count) } ?? Data()
        }
        events.append(Event(type: type, bytes: bytes, lastEventID: lastEventID))
    }
}
