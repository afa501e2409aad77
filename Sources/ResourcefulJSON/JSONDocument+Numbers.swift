import Foundation
import SwiftShims

extension JSONDocument {
    /// The number at tape `index` as an integer of type `T`, refusing a fraction, a value out of
    /// range and a malformed number. `1e3` and `2.0` are integers; big values keep every digit.
    func integer<T: FixedWidthInteger>(at index: Int, as type: T.Type) throws(JSONSyntaxError) -> T {
        let raw = contents(index)
        let start = offset(index)
        try Self.validateNumber(raw, hasExponent: flags(index) & Self.exponent != 0, offset: start)
        if flags(index) & Self.integral != 0, let value = Self.parseInteger(raw, as: T.self) {
            return value
        }
        // A fraction or an exponent, or too many digits: exact through Double while it is exact,
        // else through Decimal, as Foundation does.
        guard let double = Self.parse(raw, as: Double.self) else {
            throw JSONSyntaxError(reason: "malformed number", offset: start)
        }
        guard let value = T(exactly: double) else {
            throw JSONSyntaxError(reason: "number not representable as \(T.self)", offset: start)
        }
        if double.magnitude < 9_007_199_254_740_992 { return value }
        guard let exact = Self.integer(exactly: raw, as: T.self) else {
            throw JSONSyntaxError(reason: "number not representable as \(T.self)", offset: start)
        }
        return exact
    }

    /// The number at tape `index` as a `Double` or `Float`; overflow to infinity, or a non-zero
    /// number that rounds to zero, is refused.
    func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(at index: Int, as type: T.Type) throws(JSONSyntaxError) -> T {
        let raw = contents(index)
        let start = offset(index)
        try Self.validateNumber(raw, hasExponent: flags(index) & Self.exponent != 0, offset: start)
        guard let value = Self.parse(raw, as: T.self) else {
            throw JSONSyntaxError(reason: "malformed number", offset: start)
        }
        guard value.isFinite, value != 0 || Self.isTrueZero(raw) else {
            throw JSONSyntaxError(reason: "number not representable as \(T.self)", offset: start)
        }
        return value
    }

    /// The number at tape `index` as a `Decimal`.
    func decimal(at index: Int) throws(JSONSyntaxError) -> Decimal {
        let raw = contents(index)
        try Self.validateNumber(raw, hasExponent: flags(index) & Self.exponent != 0, offset: offset(index))
        guard let value = Decimal(string: String(decoding: raw, as: UTF8.self)), !value.isNaN else {
            throw JSONSyntaxError(reason: "number not representable as Decimal", offset: offset(index))
        }
        return value
    }

    /// RFC 8259 §6 in the parts the scanner left open: no leading zero, a digit after `-`, a
    /// digit before the exponent and at the end.
    static func validateNumber(_ raw: UnsafeBufferPointer<UInt8>, hasExponent: Bool, offset: Int) throws(JSONSyntaxError) {
        func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
        var first = 0
        if raw[0] == UInt8(ascii: "-") {
            guard raw.count > 1, isDigit(raw[1]) else { throw JSONSyntaxError(reason: "malformed number", offset: offset) }
            first = 1
        }
        if raw[first] == UInt8(ascii: "0"), first + 1 < raw.count {
            switch raw[first + 1] {
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): break
            default: throw JSONSyntaxError(reason: "number with a leading zero", offset: offset)
            }
        }
        if hasExponent {
            for position in (first + 1)..<raw.count where raw[position] | 0x20 == UInt8(ascii: "e") {
                guard isDigit(raw[position - 1]) else { throw JSONSyntaxError(reason: "malformed number", offset: offset) }
                break
            }
        }
        guard isDigit(raw[raw.count - 1]) else { throw JSONSyntaxError(reason: "malformed number", offset: offset) }
    }

    /// Digits with an optional `-`, or nil on overflow or any other character.
    @inline(__always)
    static func parseInteger<T: FixedWidthInteger>(_ raw: UnsafeBufferPointer<UInt8>, as type: T.Type) -> T? {
        let negative = raw[0] == UInt8(ascii: "-")
        var value: T = 0
        for byte in raw[(negative ? 1 : 0)...] {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = negative ? scaled.subtractingReportingOverflow(T(digit)) : scaled.addingReportingOverflow(T(digit))
            guard !overflow, !overflow2 else { return nil }
            value = next
        }
        return value
    }

    /// The whole of `raw` read by the C library's parser, or nil when it stops short.
    static func parse<T: LosslessStringConvertible>(_ raw: UnsafeBufferPointer<UInt8>, as type: T.Type) -> T? {
        // Each branch is taken only when `T` is exactly `Double`, so the cast holds.
        if T.self == Double.self { return unsafeBitCast(parseDouble(raw), to: T?.self) }
        return T(String(decoding: raw, as: UTF8.self))
    }

    /// `Double(String(decoding: raw, as: UTF8.self))` without making the string: the same
    /// parser `Double.init(_: String)` calls (the standard library's `strtod` in the C locale),
    /// on a NUL-terminated copy of the number on the stack.
    static func parseDouble(_ raw: UnsafeBufferPointer<UInt8>) -> Double? {
        guard let source = raw.baseAddress, raw.count > 0 else { return nil }
        var result = 0.0
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: raw.count + 1) { buffer -> Double? in
            // In bounds: raw.count bytes and a NUL go into raw.count + 1.
            let start = buffer.baseAddress!
            UnsafeMutableRawPointer(start).copyMemory(from: source, byteCount: raw.count)
            start[raw.count] = 0
            guard let end = _swift_stdlib_strtod_clocale(start, &result), end == UnsafePointer(start + raw.count) else { return nil }
            return result
        }
    }

    /// Whether a number that parsed to zero is written as zero (and did not underflow).
    ///
    /// Foundation's decoder looks at the digits four at a time from the start and at the last one
    /// to three from the end backwards, so a short zero whose last byte is a non-zero exponent
    /// digit (`0e2`) counts as an underflow there; the same order is kept here so that both
    /// decoders refuse the same documents.
    static func isTrueZero(_ raw: UnsafeBufferPointer<UInt8>) -> Bool {
        func check(_ byte: UInt8) -> Bool? {
            switch byte {
            case UInt8(ascii: "1")...UInt8(ascii: "9"): false
            case UInt8(ascii: "e"), UInt8(ascii: "E"): true
            default: nil
            }
        }
        var start = 0
        while raw.count - start >= 4 {
            for offset in 0..<4 {
                if let result = check(raw[start + offset]) { return result }
            }
            start += 4
        }
        for position in (start..<raw.count).reversed() {
            if let result = check(raw[position]) { return result }
        }
        return true
    }

    /// A number's exact integer part, as Foundation's decoder takes it through `Decimal`: the
    /// significant digits (trailing zeros dropped) must fit in 64 bits, a fraction is cut off.
    static func integer<T: FixedWidthInteger>(exactly raw: UnsafeBufferPointer<UInt8>, as type: T.Type) -> T? {
        var digits: [UInt8] = []
        var exponent = 0
        var negative = false
        var position = 0
        var inFraction = false
        scan: while position < raw.count {
            let byte = raw[position]
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): inFraction = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"): break scan
            default:
                if !(digits.isEmpty && byte == UInt8(ascii: "0")) { digits.append(byte &- UInt8(ascii: "0")) }
                if inFraction { exponent -= 1 }
            }
            position += 1
        }
        if position < raw.count {
            guard let written = Int(String(decoding: UnsafeBufferPointer(rebasing: raw[(position + 1)...]), as: UTF8.self)) else { return nil }
            exponent += written
        }
        while digits.last == 0 {
            digits.removeLast()
            exponent += 1
        }
        var magnitude: UInt64 = 0
        for digit in digits {
            let (scaled, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = scaled.addingReportingOverflow(UInt64(digit))
            guard !overflow, !overflow2 else { return nil }
            magnitude = sum
        }
        if exponent < 0 {
            for _ in 0 ..< -exponent where magnitude > 0 { magnitude /= 10 }
        } else {
            for _ in 0 ..< exponent {
                let (scaled, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                guard !overflow else { return nil }
                magnitude = scaled
            }
        }
        if negative && magnitude > 0 && !T.isSigned { return nil }
        guard let value = T(exactly: magnitude) else { return nil }
        return negative ? 0 - value : value
    }
}
