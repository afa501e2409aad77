import Foundation

/// What the member search learnt of `convertFromSnakeCase` in one document: for a coding key's
/// name, a key of the document found to convert to it.
///
/// Lists of objects repeat their keys, so the same key in the next object is recognised by
/// comparing its bytes with the one remembered, instead of converting it again. Each of the 256
/// entries is picked by the name's length and its first, middle and last bytes and holds a copy of the name
/// (names up to 32 bytes; longer ones are not remembered) and the key's place in the document,
/// whose bytes stay where they are while it is decoded. A name whose entry another name took is
/// converted again, as it would be without the memo.
final class SnakeCaseMemo {
    private static let entryCount = 256
    private static let longestName = 32

    /// The names, 32 bytes for each entry.
    private let names: UnsafeMutablePointer<UInt8>
    /// Three words for each entry: the name's length (-1 for an empty entry), the key's offset in
    /// the document and its length.
    private let entries: UnsafeMutablePointer<Int>

    init() {
        names = .allocate(capacity: Self.entryCount * Self.longestName)
        entries = .allocate(capacity: Self.entryCount * 3)
        entries.initialize(repeating: -1, count: Self.entryCount * 3)
    }

    deinit {
        names.deallocate()
        entries.deallocate()
    }

    @inline(__always)
    private static func slot(_ name: UnsafeBufferPointer<UInt8>) -> Int {
        let count = name.count
        guard count > 0 else { return 0 }
        let bytes = UInt64(name[0]) | UInt64(name[count >> 1]) << 8 | UInt64(name[count - 1]) << 16 | UInt64(truncatingIfNeeded: count) << 24
        // The top eight bits of a multiplicative hash: 256 entries.
        return Int(truncatingIfNeeded: (bytes &* 0x9E37_79B9_7F4A_7C15) &>> 56)
    }

    /// The offset and length in the document of the key remembered for `name`, if there is one.
    @inline(__always)
    func key(for name: UnsafeBufferPointer<UInt8>) -> (offset: Int, length: Int)? {
        let slot = Self.slot(name)
        // In bounds: `slot` < 256, three words and 32 bytes each.
        let entry = entries + slot &* 3
        guard entry[0] == name.count,
              name.isEmpty || memcmp(names + slot &* Self.longestName, name.baseAddress!, name.count) == 0
        else { return nil }
        return (entry[1], entry[2])
    }

    /// Remembers that the key of `length` bytes at `offset` in the document converts to `name`.
    func remember(_ name: UnsafeBufferPointer<UInt8>, keyOffset offset: Int, length: Int) {
        guard name.count <= Self.longestName else { return }
        let slot = Self.slot(name)
        // In bounds: `slot` < 256, and the name fits the entry's 32 bytes.
        if let start = name.baseAddress { (names + slot &* Self.longestName).update(from: start, count: name.count) }
        let entry = entries + slot &* 3
        entry[0] = name.count
        entry[1] = offset
        entry[2] = length
    }
}
