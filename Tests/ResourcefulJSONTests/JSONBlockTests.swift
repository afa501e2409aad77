import Foundation
@testable import ResourcefulJSON
import ResourcefulTesting
import Testing

/// Stage one's classification of a 64-byte block against a byte-by-byte reading, and its two ways
/// of turning vector masks into bits against each other: the move-mask instruction used on x86-64
/// and the multiplications used elsewhere (compiled and checked here on every architecture).
@Suite struct JSONBlockTests {
    /// Bytes that fall into each class and none: quote, backslash, controls, non-ASCII (lead,
    /// continuation, 0xFF), and ordinary ASCII around and between the class boundaries.
    static let alphabet: [UInt8] = [0x22, 0x5C, 0x00, 0x09, 0x0A, 0x1F, 0x80, 0xBF, 0xC3, 0xFF, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x7F, 0x61]

    /// Bit `i` set where `test` holds for byte `i` of `bytes`.
    static func reference(_ bytes: [UInt8], _ test: (UInt8) -> Bool) -> UInt64 {
        var bits: UInt64 = 0
        for (offset, byte) in bytes.enumerated() where test(byte) { bits |= 1 << UInt64(offset) }
        return bits
    }

    static func randomBlock(_ random: inout SeededRandomNumberGenerator) -> [UInt8] {
        // Some blocks are mostly one byte, so that whole 16-byte lanes are set or clear.
        let dominant = alphabet.randomElement(using: &random)!
        let share = Int.random(in: 0...4, using: &random)
        return (0..<64).map { _ in
            Int.random(in: 0..<4, using: &random) < share ? dominant : alphabet.randomElement(using: &random)!
        }
    }

    @Test func blocksAreClassifiedAsByteByByte() {
        var random = SeededRandomNumberGenerator(seed: 64)
        var failures: [String] = []
        for _ in 0..<20_000 {
            let bytes = Self.randomBlock(&random)
            let block = bytes.withUnsafeBytes { JSONBlock($0.baseAddress!) }
            let quotes = Self.reference(bytes) { $0 == 0x22 }
            let backslashes = Self.reference(bytes) { $0 == 0x5C }
            let controls = Self.reference(bytes) { $0 < 0x20 }
            let nonASCII = Self.reference(bytes) { $0 >= 0x80 }
            if (block.quotes, block.backslashes, block.controls, block.nonASCII) != (quotes, backslashes, controls, nonASCII) {
                failures.append(bytes.map { String($0, radix: 16) }.joined(separator: " "))
            }
        }
        #expect(failures.isEmpty, "\(failures.count) blocks misread, the first: \(failures.first ?? "")")
    }

    @Test func bothWaysOfGatheringBitsAgree() {
        var random = SeededRandomNumberGenerator(seed: 16)
        var failures = 0
        for _ in 0..<20_000 {
            let bytes = Self.randomBlock(&random)
            let lanes = (0..<4).map { part in
                SIMD16<Int8>(bytes[(part * 16)..<(part * 16 + 16)].map { Int8(bitPattern: $0) })
            }
            // The lanes set where a byte is a quote or below a space, as stage one compares.
            let masks = lanes.map { $0 .== SIMD16<Int8>(repeating: 0x22) .| ($0 .< SIMD16<Int8>(repeating: 0x20)) }
            let expected = Self.reference(bytes) { $0 == 0x22 || $0 < 0x20 || $0 >= 0x80 }
            if JSONBlock.bits(masks[0], masks[1], masks[2], masks[3]) != expected { failures += 1 }
            if JSONBlock.multipliedBits(masks[0], masks[1], masks[2], masks[3]) != expected { failures += 1 }
            for part in 0..<4 {
                let partBits = expected >> UInt64(part * 16) & 0xFFFF
                if JSONBlock.bits(masks[part]) != partBits { failures += 1 }
                if JSONBlock.multipliedBits(masks[part]) != partBits { failures += 1 }
                if JSONBlock.any(masks[part]) != (partBits != 0) { failures += 1 }
            }
        }
        #expect(failures == 0)
    }
}
