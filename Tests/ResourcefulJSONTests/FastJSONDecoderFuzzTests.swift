import Foundation
import ResourcefulJSON
import ResourcefulTesting
import Testing

/// Random documents, and random mutations of valid ones, decoded with `JSONDecoder` and
/// `FastJSONDecoder`: neither may crash, and both must accept and refuse the same documents with
/// the same values and the same kinds of error. Seeded, so a failure can be replayed.
@Suite struct FastJSONDecoderFuzzTests {
    typealias M = DecoderModels

    /// How many times more cases to run than the default: `RESOURCEFUL_FUZZ_SCALE=100 make test`
    /// (or `make fuzz`) for a long campaign.
    static let scale = ProcessInfo.processInfo.environment["RESOURCEFUL_FUZZ_SCALE"].flatMap(Int.init) ?? 1

    @Test(arguments: [1, 2, 3, 4])
    func randomDocumentsAgree(seed: UInt64) async {
        var random = SeededRandomNumberGenerator(seed: seed)
        let compare = DecoderComparison()
        for round in 0..<400 * Self.scale {
            if round % 50 == 0 { await Task.yield() }
            let document = Data(JSONGenerator.value(depth: 0, &random).utf8)
            check(document, compare)
        }
    }

    @Test(arguments: [11, 12, 13, 14])
    func mutatedDocumentsAgree(seed: UInt64) async {
        var random = SeededRandomNumberGenerator(seed: seed)
        let compare = DecoderComparison()
        let seeds = JSONGenerator.validDocuments
        for round in 0..<1_000 * Self.scale {
            if round % 50 == 0 { await Task.yield() }
            var document = Array(seeds[Int(random.next() % UInt64(seeds.count))].utf8)
            for _ in 0...Int(random.next() % 3) { JSONGenerator.mutate(&document, &random) }
            check(Data(document), compare)
        }
    }

    @Test(arguments: [21, 22])
    func snakeCaseDocumentsAgree(seed: UInt64) async {
        var random = SeededRandomNumberGenerator(seed: seed)
        var compare = DecoderComparison()
        compare.keys = .convertFromSnakeCase
        for round in 0..<300 * Self.scale {
            if round % 50 == 0 { await Task.yield() }
            let keys = ["user_id", "created_at", "url_value", "_private", "x1_y2", "a_2b", "plain", "Plain_Text", "a__b", "_", "ü_x"]
            let members = (0..<Int(random.next() % 5)).map { _ in
                "\"\(keys[Int(random.next() % UInt64(keys.count))])\":\(JSONGenerator.value(depth: 3, &random))"
            }
            let document = Data(("{" + members.joined(separator: ",") + "}").utf8)
            compare.expectAgreement(M.SnakeKeys.self, document, unorderedErrors: true)
            compare.expectAgreement(M.Value.self, document, unorderedErrors: true)
        }
    }

    /// Documents of several hundred bytes (random values, long strings of escapes, backslash runs
    /// and UTF-8, indentation), mutated: stage one works on every 64-byte block of them, not only
    /// on the short last one, and must lead to the byte-by-byte scanner's tape.
    @Test(arguments: [61, 62])
    func longDocumentsAgree(seed: UInt64) async {
        var random = SeededRandomNumberGenerator(seed: seed)
        let compare = DecoderComparison()
        for round in 0..<200 * Self.scale {
            if round % 25 == 0 { await Task.yield() }
            // Bytes, not a String: the invalid UTF-8 among the pieces must reach the decoders.
            var elements: [[UInt8]] = []
            for _ in 0..<Int(random.next() % 12) + 2 {
                if random.next() % 2 == 0 {
                    elements.append(Array(JSONGenerator.value(depth: 1, &random).utf8))
                } else {
                    var string: [UInt8] = [UInt8(ascii: "\"")]
                    for _ in 0..<Int(random.next() % 30) {
                        string += BlockBoundaryTests.pieces[Int(random.next() % UInt64(BlockBoundaryTests.pieces.count))]
                    }
                    elements.append(string + [UInt8(ascii: "\"")])
                }
            }
            let separator = Array((",\n" + String(repeating: " ", count: Int(random.next() % 24))).utf8)
            var document = Array("[\n".utf8) + Array(elements.joined(separator: separator)) + Array("\n]".utf8)
            if random.next() % 2 == 0 { JSONGenerator.mutate(&document, &random) }
            #expect(JSONScanAgreement.difference(document) == nil, "\(String(decoding: document, as: UTF8.self).debugDescription)")
            check(Data(document), compare)
        }
    }

    private func check(_ document: Data, _ compare: DecoderComparison) {
        compare.expectAgreement(M.Value.self, document, unorderedErrors: true)
        compare.expectAgreement(M.Nested.self, document, unorderedErrors: true)
        compare.expectAgreement([String: Int].self, document, unorderedErrors: true)
        compare.expectAgreement(M.Optionals.self, document)
        compare.expectAgreement([Double].self, document)
    }
}

/// Random JSON text, mostly valid, with the odd form JSON parsers disagree on.
enum JSONGenerator {
    static let validDocuments = [
        #"{"id":1,"tags":["a","b"],"matrix":[[1,2],[3]],"counts":{"x":1,"y":2},"color":"red","level":2,"children":[{"id":2,"tags":[],"matrix":[],"counts":{},"color":"green"}]}"#,
        #"{"name":"n\u00e9","count":3,"flag":false,"ratio":0.5,"child":[{"name":"c"}],"list":[1,null,3]}"#,
        #"[1.5,-2,3e2,0,-0.0,1E-3]"#,
        #"{"a":1,"b":2,"c":-3,"d":0}"#,
        #"{"s":"tab\there \"quoted\" \\ \/ \ud83d\ude00","n":null,"t":true,"f":false,"e":[],"o":{}}"#,
    ]

    static let numbers = ["0", "-0", "1", "-1", "42", "1.5", "-2.25", "1e3", "1E-3", "2.0", "9007199254740993", "18446744073709551615", "1e400", "01", "1.", "-", "1e", ".5", "1.2.3", "123456789012345678901234567890"]
    static let strings = [#""""#, #""a""#, #""é""#, #""\n\t""#, #""\u00e9""#, #""\ud83d\ude00""#, #""\ud800""#, #""\x""#, "\"\u{01}\"", #""😀""#, #""a\/b""#]
    static let keys = ["id", "tags", "name", "count", "x", "y", "a", "b", "flag", "list", "ratio", "children", "counts", "color", "\u{e9}", "k\\u0065y"]

    static func value(depth: Int, _ random: inout SeededRandomNumberGenerator) -> String {
        let choice = random.next() % (depth > 3 ? 5 : 8)
        switch choice {
        case 0: return "null"
        case 1: return random.next() % 2 == 0 ? "true" : "false"
        case 2, 3: return numbers[Int(random.next() % UInt64(numbers.count))]
        case 4: return strings[Int(random.next() % UInt64(strings.count))]
        case 5:
            let elements = (0..<Int(random.next() % 4)).map { _ in value(depth: depth + 1, &random) }
            return "[" + elements.joined(separator: space(&random) + ",") + trailingComma(elements.isEmpty, &random) + "]"
        default:
            let members = (0..<Int(random.next() % 5)).map { _ in
                "\"\(keys[Int(random.next() % UInt64(keys.count))])\"" + space(&random) + ":" + value(depth: depth + 1, &random)
            }
            return "{" + members.joined(separator: ",") + trailingComma(members.isEmpty, &random) + "}"
        }
    }

    private static func space(_ random: inout SeededRandomNumberGenerator) -> String {
        [" ", "", "", "\n", "\t"][Int(random.next() % 5)]
    }

    private static func trailingComma(_ isEmpty: Bool, _ random: inout SeededRandomNumberGenerator) -> String {
        !isEmpty && random.next() % 8 == 0 ? "," : ""
    }

    /// Replaces, inserts, deletes or duplicates bytes, or cuts the document short.
    static func mutate(_ bytes: inout [UInt8], _ random: inout SeededRandomNumberGenerator) {
        let alphabet = Array(#"{}[]":,.-+eE0123456789\"u tnfalsrx"#.utf8) + [0x00, 0x01, 0x0A, 0x7F, 0x80, 0xC3, 0xE9, 0xED, 0xF0, 0xFF]
        guard !bytes.isEmpty else { return bytes.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
        let position = Int(random.next() % UInt64(bytes.count))
        let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
        switch random.next() % 5 {
        case 0: bytes[position] = byte
        case 1: bytes.insert(byte, at: position)
        case 2: bytes.remove(at: position)
        case 3: bytes.removeSubrange(position...)
        default:
            let end = min(bytes.count, position + Int(random.next() % 12))
            bytes.insert(contentsOf: bytes[position..<end], at: position)
        }
    }
}
