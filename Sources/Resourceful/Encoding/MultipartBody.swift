import Foundation
import NIOCore

/// Writes fields as a `multipart/form-data` body (RFC 7578).
struct MultipartBody {
    let boundary: String

    init(boundary: String = MultipartBody.randomBoundary()) {
        self.boundary = boundary
    }

    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    static func randomBoundary() -> String {
        "resourceful-" + String(UInt64.random(in: .min ... .max), radix: 16) + String(UInt64.random(in: .min ... .max), radix: 16)
    }

    /// The body of `fields`: collected bytes, or, when a file part is read from disk, a stream
    /// of the parts' heads and the files' bytes, with its length.
    ///
    /// - Throws: ``TransportError/invalidRequest(_:underlying:)`` when a part's file cannot be read.
    func body(_ fields: [FormField]) throws(TransportError) -> TransportBody {
        guard fields.contains(where: { if case .file(let file) = $0.value { file.fileURL != nil } else { false } }) else {
            return TransportBody(encode(fields))
        }
        var segments: [Segment] = []
        var pending = ByteBuffer()
        for field in fields {
            if case .file(let file) = field.value, let url = file.fileURL {
                writeHead(of: field, file: file, to: &pending)
                segments.append(.bytes(pending))
                pending = ByteBuffer()
                segments.append(.file(try FileChunks.open(url.path)))
                pending.writeString("\r\n")
            } else {
                write(field, to: &pending)
            }
        }
        pending.writeString("--\(boundary)--\r\n")
        segments.append(.bytes(pending))
        let length = segments.reduce(0) { total, segment in
            switch segment {
            case .bytes(let bytes): total + bytes.readableBytes
            case .file(let file): total + file.length
            }
        }
        return TransportBody(length: length, replayable: { [segments] in SegmentedBody(segments: segments) })
    }

    func encode(_ fields: [FormField]) -> ByteBuffer {
        var buffer = ByteBuffer()
        for field in fields { write(field, to: &buffer) }
        buffer.writeString("--\(boundary)--\r\n")
        return buffer
    }

    /// The part-head of a file part: boundary, disposition, type, blank line.
    private func writeHead(of field: FormField, file: MultipartFile, to buffer: inout ByteBuffer) {
        buffer.writeString("--\(boundary)\r\n")
        buffer.writeString("Content-Disposition: form-data; name=\"\(Self.escape(field.name))\"; filename=\"\(Self.escape(file.filename))\"\r\n")
        buffer.writeString("Content-Type: \(Self.escape(file.contentType))\r\n\r\n")
    }

    private func write(_ field: FormField, to buffer: inout ByteBuffer) {
        switch field.value {
        case .text(let text):
            buffer.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(field.name))\"\r\n\r\n")
            buffer.writeString(text)
        case .list(let values):
            buffer.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(field.name))\"\r\n\r\n")
            buffer.writeString(values.joined(separator: ","))
        case .file(let file):
            writeHead(of: field, file: file, to: &buffer)
            buffer.writeBytes(file.data)
        }
        buffer.writeString("\r\n")
    }

    /// Escapes a name as the HTML standard does for form data: `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func escape(_ text: String) -> String {
        guard text.contains(where: { $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

/// A piece of a streamed multipart body.
enum Segment: Sendable {
    case bytes(ByteBuffer)
    case file(FileChunks)
}

/// A multipart body read piece by piece: heads as bytes, files from disk.
struct SegmentedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    typealias Failure = any Error

    let segments: [Segment]

    struct AsyncIterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<Segment>
        var file: FileChunks.AsyncIterator?

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if let file, let chunk = try await file.next() { return chunk }
                file = nil
                guard let segment = remaining.popFirst() else { return nil }
                switch segment {
                case .bytes(let bytes): return bytes
                case .file(let chunks): file = chunks.makeAsyncIterator()
                }
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(remaining: segments[...], file: nil)
    }
}
