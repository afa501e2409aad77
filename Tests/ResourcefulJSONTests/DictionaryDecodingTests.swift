import Foundation
import ResourcefulJSON
import Testing

/// Dictionaries with string keys, which the fast decoder reads in one pass with code of their own
/// for the common values: each must agree with `JSONDecoder` on values, duplicates, nulls,
/// wrong types, escaped and numeric keys, under the default keys and `convertFromSnakeCase`.
@Suite struct DictionaryDecodingTests {
    struct Maps: Codable, Equatable {
        var strings: [String: String]?
        var optionalStrings: [String: String?]?
        var integers: [String: Int]?
        var doubles: [String: Double]?
        var flags: [String: Bool]?
        var nested: [String: [String: Int]]?
    }

    static let values = [
        #"{}"#, #"{"a":"x"}"#, #"{"a":"x","a":"y"}"#, #"{"a":1,"a":2}"#, #"{"a":true,"a":false}"#, #"{"a":1.5,"a":2.5}"#, #"{"a":"x","b":null}"#, #"{"a":1}"#, #"{"a":true,"a":"x"}"#,
        #"{"user_id":"x","userId":"y"}"#, #"{"\u0061":"x","a":"y"}"#, #"{"1":"x","01":"y"}"#, #"{"a":1.5,"b":-0.0,"c":1e3}"#,
        #"{"a":false,"b":true}"#, #"{"a":{"b":1},"a":{"c":2}}"#, #"{"a":{"b":"x"}}"#, #"{"é":"x","e\u0301":"y"}"#, "null", "[]", "3",
    ]

    @Test(arguments: [false, true])
    func dictionariesAgree(snakeCase: Bool) {
        var compare = DecoderComparison()
        if snakeCase { compare.keys = .convertFromSnakeCase }
        for field in ["strings", "optionalStrings", "integers", "doubles", "flags", "nested"] {
            for value in Self.values {
                // `Dictionary.init(from:)` decodes in the order of a `Set` of keys, so where two
                // entries are wrong `JSONDecoder` names either: then both must fail, and agree
                // on the values otherwise.
                let entries = value.filter { $0 == ":" }.count
                compare.expectAgreement(Maps.self, Data("{\"\(field)\":\(value)}".utf8), unorderedErrors: entries > 1)
            }
        }
    }
}
