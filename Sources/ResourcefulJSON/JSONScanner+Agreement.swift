/// A check for the package's tests: whether stage one's index leads the scan to the tape that
/// reading every byte gives.
package enum JSONScanAgreement {
    /// What differs between the tape of `bytes` scanned with ``JSONScanner/scanIndexed()`` and
    /// with ``JSONScanner/scan()`` (the same error, or the same tape word for word), or nil when
    /// nothing does. A string's ASCII flag counts only for plain strings: it is read only
    /// there, and the byte-by-byte scanner does not look at bytes an escape covers.
    package static func difference(_ bytes: [UInt8]) -> String? {
        let indexed = tape(bytes, indexed: true)
        let scalar = tape(bytes, indexed: false)
        if indexed == scalar { return nil }
        return "index: \(indexed.prefix(64)), bytes: \(scalar.prefix(64))"
    }

    private static func tape(_ bytes: [UInt8], indexed: Bool) -> [Int] {
        bytes.withUnsafeBytes { raw in
            let document = JSONDocument(borrowing: raw)
            var scanner = JSONScanner(document: document)
            do throws(JSONSyntaxError) {
                if indexed { try scanner.scanIndexed() } else { try scanner.scan() }
            } catch {
                return [-1, error.offset]
            }
            var words: [Int] = []
            for index in stride(from: 0, to: document.tapeCount, by: 2) {
                var word = document.tape[index]
                if word & 0xF == JSONDocument.Kind.string.rawValue, (word >> 4) & JSONDocument.plain == 0 {
                    word &= ~(JSONDocument.ascii << 4)
                }
                words += [word, document.tape[index + 1]]
            }
            return words
        }
    }

    /// Whether stage one found `bytes` valid UTF-8 throughout, or nil when the scan fails.
    package static func isValidUTF8(_ bytes: [UInt8]) -> Bool? {
        indexedScan(bytes)?.isValidUTF8
    }

    /// Whether the tape of `bytes` came from stage one's index (not from scanning again byte
    /// by byte after the index could not serve), or nil when the scan fails.
    package static func usesIndex(_ bytes: [UInt8]) -> Bool? {
        indexedScan(bytes)?.usedIndex
    }

    private static func indexedScan(_ bytes: [UInt8]) -> (isValidUTF8: Bool, usedIndex: Bool)? {
        bytes.withUnsafeBytes { raw in
            let document = JSONDocument(borrowing: raw)
            var scanner = JSONScanner(document: document)
            do throws(JSONSyntaxError) {
                try scanner.scanIndexed()
            } catch {
                return nil
            }
            return (document.isValidUTF8, scanner.usedIndex)
        }
    }
}
