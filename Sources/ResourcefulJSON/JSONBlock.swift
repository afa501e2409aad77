#if arch(x86_64)
import CResourcefulSIMD
#endif

/// One 64-byte block of a document, classified with SIMD compares sixteen bytes at a time: one
/// bit per byte (bit `i` for byte `i`) for each class stage one needs.
///
/// The compares are on `SIMD16<Int8>`, which the compiler turns into single vector compares on
/// x86-64 and arm64. The standard library has no "move mask" to turn a 16-lane mask into 16
/// bits: on x86-64 it is SSE2's `pmovmskb`, from `CResourcefulSIMD`; elsewhere it costs two
/// multiplications (see ``multipliedBits(_:)``). Only quotes are turned into bits in every block;
/// backslashes, controls and non-ASCII bytes only in a block that has any (one vector test each).
struct JSONBlock {
    /// `"`.
    var quotes: UInt64 = 0
    /// `\`.
    var backslashes: UInt64 = 0
    /// Bytes below 0x20.
    var controls: UInt64 = 0
    /// Bytes from 0x80 up.
    var nonASCII: UInt64 = 0

    /// Classifies the 64 bytes at `start`.
    ///
    /// - Precondition: 64 bytes from `start` are readable (every caller proves it where it calls).
    @inline(__always)
    init(_ start: UnsafeRawPointer) {
        // In bounds: the last load reads bytes 48..<64, by the precondition.
        let v0 = start.loadUnaligned(as: SIMD16<Int8>.self)
        let v1 = start.loadUnaligned(fromByteOffset: 16, as: SIMD16<Int8>.self)
        let v2 = start.loadUnaligned(fromByteOffset: 32, as: SIMD16<Int8>.self)
        let v3 = start.loadUnaligned(fromByteOffset: 48, as: SIMD16<Int8>.self)
        let quote = SIMD16<Int8>(repeating: 0x22)
        quotes = Self.bits(v0 .== quote, v1 .== quote, v2 .== quote, v3 .== quote)

        let backslash = SIMD16<Int8>(repeating: 0x5C)
        let b0 = v0 .== backslash, b1 = v1 .== backslash, b2 = v2 .== backslash, b3 = v3 .== backslash
        // As signed bytes, 0x80 and up are negative and controls are 0 through 0x1F: both are
        // below a space. Most blocks have none of the three classes, found with one test.
        let space = SIMD16<Int8>(repeating: 0x20)
        let l0 = v0 .< space, l1 = v1 .< space, l2 = v2 .< space, l3 = v3 .< space
        guard Self.any(b0 .| b1 .| b2 .| b3 .| l0 .| l1 .| l2 .| l3) else { return }
        if Self.any(b0 .| b1 .| b2 .| b3) { backslashes = Self.bits(b0, b1, b2, b3) }
        let zero = SIMD16<Int8>(repeating: 0)
        let h0 = v0 .< zero, h1 = v1 .< zero, h2 = v2 .< zero, h3 = v3 .< zero
        if Self.any(h0 .| h1 .| h2 .| h3) { nonASCII = Self.bits(h0, h1, h2, h3) }
        let c0 = l0 .& .!h0, c1 = l1 .& .!h1, c2 = l2 .& .!h2, c3 = l3 .& .!h3
        if Self.any(c0 .| c1 .| c2 .| c3) { controls = Self.bits(c0, c1, c2, c3) }
    }

    /// Bit `i` set where byte `i` of the 16 at `start` is whitespace (space, tab, line feed,
    /// carriage return).
    ///
    /// - Precondition: 16 bytes from `start` are readable (the caller proves it where it calls).
    @inline(__always)
    static func whitespace(_ start: UnsafeRawPointer) -> UInt64 {
        let v = start.loadUnaligned(as: SIMD16<Int8>.self)
        // Constants of the vector's own type: with an inferred type the compiler may pick the
        // generic lane-by-lane compare.
        let space = SIMD16<Int8>(repeating: 0x20), newline = SIMD16<Int8>(repeating: 0x0A)
        let carriageReturn = SIMD16<Int8>(repeating: 0x0D), tab = SIMD16<Int8>(repeating: 0x09)
        return bits((v .== space) .| (v .== newline) .| (v .== carriageReturn) .| (v .== tab))
    }

    /// Whether any lane of `mask` is set.
    @inline(__always)
    static func any(_ mask: SIMDMask<SIMD16<Int8>>) -> Bool {
        #if arch(x86_64)
        return moveMask(mask) != 0
        #else
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return words[0] | words[1] != 0
        #endif
    }

    /// Lane `i` of `m0`, `m1`, `m2`, `m3` as bit `i`, `16 + i`, `32 + i`, `48 + i`: four move
    /// masks on x86-64, ``multipliedBits(_:_:_:_:)`` elsewhere.
    @inline(__always)
    static func bits(
        _ m0: SIMDMask<SIMD16<Int8>>, _ m1: SIMDMask<SIMD16<Int8>>, _ m2: SIMDMask<SIMD16<Int8>>, _ m3: SIMDMask<SIMD16<Int8>>
    ) -> UInt64 {
        #if arch(x86_64)
        return moveMask(m0) | moveMask(m1) &<< 16 | moveMask(m2) &<< 32 | moveMask(m3) &<< 48
        #else
        return multipliedBits(m0, m1, m2, m3)
        #endif
    }

    /// Lane `i` of `mask` as bit `i`: a move mask on x86-64, ``multipliedBits(_:)`` elsewhere.
    @inline(__always)
    static func bits(_ mask: SIMDMask<SIMD16<Int8>>) -> UInt64 {
        #if arch(x86_64)
        return moveMask(mask)
        #else
        return multipliedBits(mask)
        #endif
    }

    #if arch(x86_64)
    /// Lane `i` of `mask` as bit `i`, in one instruction (SSE2's `pmovmskb`).
    @inline(__always)
    static func moveMask(_ mask: SIMDMask<SIMD16<Int8>>) -> UInt64 {
        UInt64(resourceful_move_mask(unsafeBitCast(mask, to: SIMD16<Int8>.self)))
    }
    #endif

    /// ``bits(_:_:_:_:)`` without a move-mask instruction: the four masks go into one vector
    /// first, mask `k` as bit `k` of each lane, so that the multiplications of
    /// ``multipliedBits(_:)`` work on two words in scalar registers (four masks apart, the
    /// compiler moved half of them to vector multiplications that cost three times as much).
    @inline(__always)
    static func multipliedBits(
        _ m0: SIMDMask<SIMD16<Int8>>, _ m1: SIMDMask<SIMD16<Int8>>, _ m2: SIMDMask<SIMD16<Int8>>, _ m3: SIMDMask<SIMD16<Int8>>
    ) -> UInt64 {
        let v0 = unsafeBitCast(m0, to: SIMD16<UInt8>.self) & 1, v1 = unsafeBitCast(m1, to: SIMD16<UInt8>.self) & 2
        let v2 = unsafeBitCast(m2, to: SIMD16<UInt8>.self) & 4, v3 = unsafeBitCast(m3, to: SIMD16<UInt8>.self) & 8
        let words = unsafeBitCast(v0 | v1 | v2 | v3, to: SIMD2<UInt64>.self)
        let (low, high) = (words[0], words[1])
        let ones: UInt64 = 0x0101_0101_0101_0101
        let magic: UInt64 = 0x0102_0408_1020_4080
        var result: UInt64 = 0
        var k: UInt64 = 0
        while k < 4 {
            // Bit `k` of each byte gathered into the top byte, as in ``multipliedBits(_:)``.
            let lanes = (((low &>> k) & ones) &* magic) &>> 56
            let upperLanes = (((high &>> k) & ones) &* magic) &>> 56
            result |= (lanes | upperLanes &<< 8) &<< (16 &* k)
            k &+= 1
        }
        return result
    }

    /// ``bits(_:)`` without a move-mask instruction: each 64-bit half holds eight lanes of 0x00
    /// or 0xFF; kept to 0x00 or 0x01 and multiplied by 0x0102040810204080, lane `i`'s bit lands
    /// on bit 56 + `i` and no two products meet (their bit positions 8i + 7k + 7 are distinct),
    /// so no carry disturbs the top byte.
    @inline(__always)
    static func multipliedBits(_ mask: SIMDMask<SIMD16<Int8>>) -> UInt64 {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let magic: UInt64 = 0x0102_0408_1020_4080
        return ((words[0] & ones) &* magic) &>> 56 | (((words[1] & ones) &* magic) &>> 56) &<< 8
    }
}
