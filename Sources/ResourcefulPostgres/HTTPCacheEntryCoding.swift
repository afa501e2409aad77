import Foundation
import HTTPTypes
import NIOCore
import Resourceful

/// An ``HTTPCacheEntry`` as bytes, for a row of `resourceful.http_cache`: compact, versioned and
/// read with every length checked against the bytes left.
///
/// Version 1, all integers big-endian:
///
/// ```text
/// u8 version (1)
/// u16 status code, str reason phrase
/// u64 request time, u64 response time   (bit patterns of seconds since 2001 as Double)
/// u32 field count, then per field: str name, str value          (in order)
/// u32 varying count, then per value: str name, str value        (sorted by name)
/// u32 body length, body bytes
/// ```
///
/// where `str` is a u32 length and that many bytes of UTF-8. A count or length larger than the
/// bytes left, a name that is no field name, text that is not UTF-8, a version not known or bytes
/// left over make the whole entry unreadable: decoding never traps, and never allocates more than
/// the bytes given.
enum HTTPCacheEntryCoding {
    static let version: UInt8 = 1

    static func encode(_ entry: HTTPCacheEntry) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(entry.size + 64)
        out.append(version)
        append(UInt16(clamping: entry.status.code), to: &out)
        append(entry.status.reasonPhrase, to: &out)
        append(entry.requestTime.timeIntervalSinceReferenceDate.bitPattern, to: &out)
        append(entry.responseTime.timeIntervalSinceReferenceDate.bitPattern, to: &out)
        append(UInt32(clamping: entry.headerFields.count), to: &out)
        for field in entry.headerFields {
            append(field.name.rawName, to: &out)
            append(field.value, to: &out)
        }
        append(UInt32(clamping: entry.varyingFields.count), to: &out)
        for (name, value) in entry.varyingFields.sorted(by: { $0.key < $1.key }) {
            append(name, to: &out)
            append(value, to: &out)
        }
        append(UInt32(clamping: entry.body.readableBytes), to: &out)
        entry.body.withUnsafeReadableBytes { out.append(contentsOf: $0) }
        return out
    }

    /// The entry `bytes` hold, or `nil` when they are not one (of a version this code reads).
    static func decode(_ bytes: [UInt8]) -> HTTPCacheEntry? {
        var reader = Reader(bytes: bytes)
        guard reader.byte() == version, let code = reader.integer(UInt16.self), let reason = reader.string(),
            let requested = reader.integer(UInt64.self), let responded = reader.integer(UInt64.self),
            let fieldCount = reader.count(eachAtLeast: 8)
        else { return nil }
        guard (100...999).contains(code) else { return nil }
        var fields = HTTPFields()
        for _ in 0..<fieldCount {
            guard let name = reader.string(), let value = reader.string(), let fieldName = HTTPField.Name(name) else { return nil }
            fields.append(HTTPField(name: fieldName, value: value))
        }
        guard let varyingCount = reader.count(eachAtLeast: 8) else { return nil }
        var varying: [String: String] = [:]
        for _ in 0..<varyingCount {
            guard let name = reader.string(), let value = reader.string(), varying.updateValue(value, forKey: name) == nil else { return nil }
        }
        guard let body = reader.block(), reader.isAtEnd else { return nil }
        let requestTime = Double(bitPattern: requested)
        let responseTime = Double(bitPattern: responded)
        guard requestTime.isFinite, responseTime.isFinite else { return nil }
        return HTTPCacheEntry(
            status: HTTPResponse.Status(code: Int(code), reasonPhrase: reason),
            headerFields: fields,
            body: ByteBuffer(bytes: body),
            requestTime: Date(timeIntervalSinceReferenceDate: requestTime),
            responseTime: Date(timeIntervalSinceReferenceDate: responseTime),
            varyingFields: varying
        )
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func append(_ text: String, to out: inout [UInt8]) {
        append(UInt32(clamping: text.utf8.count), to: &out)
        out.append(contentsOf: text.utf8)
    }

    /// Reads `bytes` from the front; every read is `nil` past their end.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }
        var left: Int { bytes.count - offset }

        mutating func byte() -> UInt8? {
            guard left >= 1 else { return nil }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func integer<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) -> T? {
            let width = MemoryLayout<T>.size
            guard left >= width else { return nil }
            var value: T = 0
            for byte in bytes[offset..<offset + width] { value = value << 8 | T(byte) }
            offset += width
            return value
        }

        /// A count of items each taking at least `size` bytes: `nil` when they cannot all fit.
        mutating func count(eachAtLeast size: Int) -> Int? {
            guard let count = integer(UInt32.self), Int(count) <= left / size else { return nil }
            return Int(count)
        }

        mutating func block() -> ArraySlice<UInt8>? {
            guard let length = integer(UInt32.self), Int(length) <= left else { return nil }
            defer { offset += Int(length) }
            return bytes[offset..<offset + Int(length)]
        }

        mutating func string() -> String? {
            guard let block = block() else { return nil }
            return String(validating: block, as: UTF8.self)
        }
    }
}
