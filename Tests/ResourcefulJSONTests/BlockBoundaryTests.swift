import Foundation
import ProcessTestSupport
import ResourcefulJSON
import ResourcefulTesting
import Testing

/// Documents that put quotes, runs of backslashes, control characters and multi-byte UTF-8
/// (valid and not) across every boundary stage one works in (16, 32 and 64 bytes, and where its
/// 64-byte blocks end): the indexed scan must give the byte-by-byte scanner's tape, and both
/// decoders the same values and errors.
@Suite struct BlockBoundaryTests {
    /// Pieces of string contents that stage one must read right wherever they fall.
    static let pieces: [[UInt8]] = [
        Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\\\""#.utf8), Array(#"\\\\"#.utf8),
        Array(#"\\\\\""#.utf8), Array(#"\\\\\\\\\\\\\\\\\\\\"#.utf8), Array(#"\n\t\/"#.utf8),
        Array(#"\u00e9\ud83d\ude00"#.utf8), Array("é中😀".utf8), [0x01], [0x1F, 0x7F],
        // Invalid UTF-8: a lone lead, a surrogate, past U+10FFFF, an overlong form, a stray
        // continuation byte.
        [0xC3], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0xAF], [0x80],
        // A `\u` escape with a quote or a backslash among its four bytes.
        Array(#"\u12"#.utf8), Array(#"\uab\\"#.utf8),
    ]

    @Test func everyPieceAtEveryOffsetScansAlike() async throws {
        let failures = try await onOwnThread { Self.failures() }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    private static func failures() -> [String] {
        var failures: [String] = []
        let compare = DecoderComparison()
        for piece in pieces {
            // Offsets that put the piece on and across the 16-, 32-, 64- and 128-byte marks.
            for padding in 0..<140 {
                let string = [UInt8](repeating: UInt8(ascii: "a"), count: padding) + piece + Array(#"b"#.utf8)
                for document in [
                    [UInt8(ascii: "[")] + [UInt8(ascii: "\"")] + string + Array(#"",1,"x"]"#.utf8),
                    Array(#"{"k":""#.utf8) + string + Array(#"","\#(padding)":[true,null,"é"]}"#.utf8),
                    // Cut short inside the string.
                    [UInt8(ascii: "[")] + [UInt8(ascii: "\"")] + string,
                ] {
                    if let difference = JSONScanAgreement.difference(document) {
                        failures.append("\(String(decoding: document, as: UTF8.self).debugDescription): \(difference)")
                    }
                    if JSONScanAgreement.isValidUTF8(document) == true && String(validating: document, as: UTF8.self) == nil {
                        failures.append("\(document): taken for valid UTF-8")
                    }
                    // Every well-formed document is read from the index, but for the `\u`
                    // escapes whose four bytes hold a quote or a backslash.
                    let unicodeEscape = piece.starts(with: Array(#"\u"#.utf8)) && piece != pieces[7]
                    if !unicodeEscape && JSONScanAgreement.usesIndex(document) == false {
                        failures.append("\(String(decoding: document, as: UTF8.self).debugDescription): scanned again byte by byte")
                    }
                    let data = Data(document)
                    let (foundation, fast) = compare.outcomes(DecoderModels.Value.self, data)
                    if !DecoderComparison.agree(foundation, fast) {
                        failures.append("\(String(decoding: document, as: UTF8.self).debugDescription): JSONDecoder gave \(foundation), FastJSONDecoder gave \(fast)")
                    }
                }
            }
        }
        return failures
    }

    /// Valid UTF-8 documents, whitespace and all, are found valid by stage one, and others not.
    @Test(arguments: [31, 32])
    func randomDocumentsAcrossBlocksScanAlike(seed: UInt64) async throws {
        let failures = try await onOwnThread { Self.randomFailures(seed: seed) }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    private static func randomFailures(seed: UInt64) -> [String] {
        var random = SeededRandomNumberGenerator(seed: seed)
        var failures: [String] = []
        let compare = DecoderComparison()
        for _ in 0..<300 * FastJSONDecoderFuzzTests.scale {
            // Strings long enough to span blocks, of random pieces.
            var document: [UInt8] = [UInt8(ascii: "[")]
            for element in 0..<Int(random.next() % 6) {
                if element > 0 { document += Array(",\n    ".utf8.prefix(Int(random.next() % 6) + 1)) }
                document.append(UInt8(ascii: "\""))
                for _ in 0..<Int(random.next() % 40) {
                    if random.next() % 3 == 0 {
                        document += pieces[Int(random.next() % UInt64(pieces.count))]
                    } else {
                        document += Array("abc def ".utf8.prefix(Int(random.next() % 8) + 1))
                    }
                }
                document.append(UInt8(ascii: "\""))
            }
            document.append(UInt8(ascii: "]"))
            if random.next() % 4 == 0 { JSONGenerator.mutate(&document, &random) }
            if let difference = JSONScanAgreement.difference(document) {
                failures.append("\(String(decoding: document, as: UTF8.self).debugDescription): \(difference)")
            }
            let valid = String(validating: document, as: UTF8.self) != nil
            if JSONScanAgreement.isValidUTF8(document) == true && !valid {
                failures.append("\(document): taken for valid UTF-8")
            }
            let (foundation, fast) = compare.outcomes([String].self, Data(document))
            if !DecoderComparison.agree(foundation, fast) {
                failures.append("\(String(decoding: document, as: UTF8.self).debugDescription): JSONDecoder gave \(foundation), FastJSONDecoder gave \(fast)")
            }
        }
        return failures
    }

    /// A document of valid UTF-8 that the index serves is known valid, so its strings are made
    /// without a second check; one with a bad byte anywhere is not.
    @Test func validityIsFoundInTheSamePass() {
        let valid = Array(#"["\#(String(repeating: "é中😀 ", count: 40))"]"#.utf8)
        #expect(JSONScanAgreement.isValidUTF8(valid) == true)
        for position in [2, 17, 63, 64, 65, 100, valid.count - 3] {
            var broken = valid
            broken[position] = 0xFF
            #expect(JSONScanAgreement.isValidUTF8(broken) == false, "0xFF at \(position)")
        }
    }
}
