import Foundation
import ResourcefulJSON
import Testing

/// Decodes a corpus of valid and invalid documents with `JSONDecoder` and `FastJSONDecoder` and
/// requires the same values, or the same errors at the same coding paths.
@Suite struct FastJSONDecoderDifferentialTests {
    typealias M = DecoderModels
    let compare = DecoderComparison()

    static let scalars = #"{"bool":true,"string":"s","int":-42,"int8":-128,"int16":32767,"int32":-2147483648,"int64":9223372036854775807,"uint":0,"uint8":255,"uint64":18446744073709551615,"float":1.5,"double":-2.25e-3}"#

    /// Replaces `"key":<value>` in the scalars document.
    static func scalars(_ key: String, _ value: String) -> String {
        guard let range = scalars.range(of: "\"\(key)\":") else { return scalars }
        let valueEnd = scalars[range.upperBound...].firstIndex(where: { $0 == "," || $0 == "}" }) ?? scalars.endIndex
        return scalars.replacingCharacters(in: range.upperBound..<valueEnd, with: value)
    }

    @Test func scalarsAgree() {
        compare.expectAgreement(M.Scalars.self, Self.scalars)
        let replacements: [(String, [String])] = [
            ("int", ["0", "-0", "1e3", "2.0", "2.5", "1E2", "-1e-2", "9223372036854775808", "1e400", "\"1\"", "null", "true", "01", "-", "1.", ".5", "1e", "1e+", "--1", "1.2.3", "1e5e5", "+1", "0x10", "[]", "{}"]),
            ("int8", ["127", "128", "-129", "1.0e2", "-128.0"]),
            ("uint8", ["-1", "-0", "256", "255.0"]),
            ("uint64", ["18446744073709551616", "9007199254740993.5", "9007199254740993.12345", "9007199254740993.0000000", "90071992547409930e-1", "1e19", "1.8446744073709551615e19"]),
            ("int64", ["-9223372036854775808", "-9223372036854775809", "9223372036854775807.9", "-9223372036854775808.0", "9.2e18"]),
            ("double", ["0", "-0.0", "0e2", "0E2", "-0e1", "0e0", "0.0e1", "0.0e-5", "0e-0", "00e1", "1e308", "1e309", "-1e309", "1e-400", "0e-400", "0.0000", "4.9e-324", "123456789012345678901234567890", "1E+2", "1e-2", "\"NaN\"", "null"]),
            ("float", ["3.4028235e38", "3.5e38", "1e-50", "0.1", "16777217"]),
            ("bool", ["false", "null", "1", "\"true\"", "tru", "falsey", "fals", "fAlse", "truE", "t", "nul", "nulL", "nulls"]),
            ("string", ["\"\"", "null", "1", "\"a\\nb\\t\\\"c\\\\d\\/e\\b\\f\\r\"", "\"\\u00e9\\u4e2d\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ud83dx\"", "\"\\ude00\"", "\"\\u12\"", "\"\\uZZZZ\"", "\"\\x\"", "\"\\u0000\"", "\"é中😀\"", "\"\u{01}\"", "\"\\ud83d\\u0041\""]),
        ]
        for (key, values) in replacements {
            for value in values {
                compare.expectAgreement(M.Scalars.self, Self.scalars(key, value))
            }
        }
    }

    @Test func structureAgrees() async {
        let documents = [
            "", " ", "{", "}", "[", "{}", "[]", "null", "1", "\"x\"", "{\"a\":1}x", "  {\"bool\":true} ",
            #"{"bool":true,}"#, #"{"bool":true,,"string":"s"}"#, #"{,}"#, #"{"bool" true}"#, #"{"bool":}"#, #"{bool:true}"#,
            #"{"bool":true "string":"s"}"#, #"{'bool':true}"#, "{\"bool\":true}\u{0}", "\u{FEFF}{}", "/* c */ {}",
            String(repeating: "[", count: 512) + String(repeating: "]", count: 512),
            String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
            String(repeating: "[", count: 100),
            Self.scalars.replacingOccurrences(of: ",", with: " ,\n\t"),
            Self.scalars.replacingOccurrences(of: "}", with: ",}"),
            Self.scalars.replacingOccurrences(of: "\"bool\":true", with: "\"bool\":true,\"bool\":false"),
            Self.scalars.replacingOccurrences(of: "\"bool\":true", with: "\"extra\":[1,{\"x\":\"\\q\"},1.2.3],\"bool\":true"),
            Self.scalars.replacingOccurrences(of: "\"bool\":true", with: "\"extra\":{\"\\ud800\":1},\"bool\":true"),
            Self.scalars.replacingOccurrences(of: "\"bool\":true", with: "\"b\\u006fol\":true"),
            Self.scalars.replacingOccurrences(of: "\"bool\":true", with: "\"bo\\ol\":true"),
            Self.scalars.replacingOccurrences(of: "\"bool\":true,", with: ""),
        ]
        for document in documents {
            await Task.yield()
            compare.expectAgreement(M.Scalars.self, document)
            compare.expectAgreement([Int].self, document)
            compare.expectAgreement(M.Value.self, document)
        }
    }

    @Test func optionalsAndNestingAgree() {
        let documents = [
            "{}", #"{"name":null,"count":null,"flag":null,"ratio":null,"child":null,"list":null}"#,
            #"{"name":"n","count":3,"flag":false,"ratio":0.5,"child":[{"name":"c","child":[{}]}],"list":[1,null,3]}"#,
            #"{"count":"3"}"#, #"{"flag":null}"#, #"{"child":{}}"#, #"{"child":[{"count":true}]}"#, #"{"list":[1,"2"]}"#,
            #"{"child":[{"child":[{"child":[{"list":[null,{"x":1}]}]}]}]}"#, #"{"list":{}}"#, "null", "[]",
        ]
        for document in documents {
            compare.expectAgreement(M.Optionals.self, document)
            compare.expectAgreement([M.Optionals].self, "[\(document)]")
            compare.expectAgreement(M.Optionals?.self, document)
        }
        let nested = #"{"id":1,"tags":["a","b"],"matrix":[[1,2],[],[3]],"counts":{"x":1,"y":2,"x":3},"color":"red","level":2,"children":[{"id":2,"tags":[],"matrix":[],"counts":{},"color":"green"}]}"#
        let variants = [
            nested, nested.replacingOccurrences(of: "\"red\"", with: "\"blue\""), nested.replacingOccurrences(of: "\"level\":2", with: "\"level\":3"),
            nested.replacingOccurrences(of: "[3]", with: "[\"3\"]"), nested.replacingOccurrences(of: "\"y\":2", with: "\"y\":null"),
            nested.replacingOccurrences(of: "\"tags\":[]", with: "\"tags\":{}"), nested.replacingOccurrences(of: "\"color\":\"green\"", with: "\"colour\":\"green\""),
            nested.replacingOccurrences(of: "\"counts\":{\"x\":1,\"y\":2,\"x\":3}", with: "\"counts\":{\"x\":1,\"x\":\"bad\"}"),
        ]
        for document in variants {
            compare.expectAgreement(M.Nested.self, document)
        }
    }

    @Test(arguments: [JSONDecoder.DateDecodingStrategy.iso8601, .secondsSince1970, .millisecondsSince1970, .deferredToDate])
    func datesDataURLsAndDecimalsAgree(strategy: JSONDecoder.DateDecodingStrategy) {
        var compare = DecoderComparison()
        compare.dates = strategy
        let dates = ["\"2024-05-01T12:00:00Z\"", "\"2024-05-01T12:00:00+02:00\"", "\"2024-05-01\"", "\"not a date\"", "1714564800", "1714564800.5", "-1", "null", "[]", "1e400"]
        let others = [
            #""data":"aGVsbG8=""#, #""data":"aGVsbG8""#, #""data":"!!""#, #""data":null"#, #""data":[104,105]"#,
            #""url":"https://example.com/a?b=c""#, #""url":"""#, #""url":"http://[::1""#, #""url":5"#,
            #""amount":"1.5""#, #""amount":12.345"#, #""amount":-0.001"#, #""amount":1e40"#, #""amount":123456789012345678901234567890"#, #""amount":null"#,
        ]
        for date in dates {
            compare.expectAgreement(M.Special.self, "{\"date\":\(date)}")
            for other in others {
                compare.expectAgreement(M.Special.self, "{\"date\":\(date),\(other)}")
            }
        }
    }

    @Test func snakeCaseKeysAgree() {
        var compare = DecoderComparison()
        compare.keys = .convertFromSnakeCase
        let keys = [
            "user_id", "userId", "USER_ID", "User_Id", "user__id", "_user_id", "user_id_", "__user_id__", "created_at", "url_value", "URL_VALUE",
            "_private", "__private", "x1_y2", "x_1_y_2", "x1y2", "a_2b", "a2_b", "a_2_b", "plain", "PLAIN", "p_l_a_i_n", "_", "__", "",
            "user-id", "user_ïd", "us\\u0065r_id", "user_id\\u00e9", "ﬁ_x",
        ]
        for key in keys {
            compare.expectAgreement(M.SnakeKeys.self, "{\"\(key)\":1}")
            compare.expectAgreement(M.SnakeKeys.self, "{\"\(key)\":1,\"user_id\":2,\"userId\":3}")
            compare.expectAgreement(M.SnakeKeys.self, "{\"headers\":{\"\(key)\":1,\"Content_Type\":2}}")
        }
        compare.expectAgreement(M.SnakeKeys.self, #"{"user_id":"x"}"#)
        compare.expectAgreement(M.SnakeKeys.self, "{" + (0..<40).map { "\"key_\($0)\":\($0)" }.joined(separator: ",") + ",\"user_id\":7}")
        compare.keys = .custom { path in StringCodingKey(path.last!.stringValue.uppercased() == "USERID" ? "userId" : path.last!.stringValue) }
        compare.expectAgreement(M.SnakeKeys.self, #"{"USERID":1,"plain":2}"#)
        compare.expectAgreement(M.SnakeKeys.self, #"{"userid":1,"headers":{"userid":2}}"#)
    }

    @Test func manualContainersAgree() {
        let documents = [
            #"{"a":1,"b":null,"list":[1,null,3],"inner":{"x":1,"y":2,"x":3},"sup":5}"#,
            #"{"a":1,"list":[],"inner":{},"sup":null}"#,
            #"{"a":1,"b":2,"list":[1,"x"],"inner":{},"sup":5}"#,
            #"{"a":1,"list":{},"inner":{}}"#,
            #"{"a":1,"list":[],"inner":[]}"#,
            #"{"a":1,"list":[],"inner":{},"sup":"s"}"#,
            #"{"a":1,"list":null,"inner":{}}"#,
            #"{"list":[],"inner":{}}"#,
            #"{"a":1,"list":[],"inner":{"\ud800":1}}"#,
        ]
        for document in documents {
            compare.expectAgreement(M.Manual.self, document)
        }
    }

    @Test func otherEncodingsAgree() {
        let json = #"{"name":"é","count":2}"#
        for encoding in [String.Encoding.utf16BigEndian, .utf16LittleEndian, .utf32BigEndian, .utf32LittleEndian, .utf16] {
            compare.expectAgreement(M.Optionals.self, json.data(using: encoding)!)
        }
        compare.expectAgreement(Int.self, "7".data(using: .utf16LittleEndian)!)
        compare.expectAgreement(M.Optionals.self, Data([0xEF, 0xBB, 0xBF]) + Data(json.utf8))
        for bytes: [UInt8] in [[0xC3], [0xFF, 0xFE, 0x00], [0xED, 0xA0, 0x80], [0xF0, 0x9F, 0x98], [0xC0, 0xAF]] {
            let document = Data(#"{"name":""#.utf8) + Data(bytes) + Data(#"","count":1}"#.utf8)
            compare.expectAgreement(M.Optionals.self, document)
            compare.expectAgreement([String: Int].self, Data("{\"".utf8) + Data(bytes) + Data("\":1}".utf8))
        }
    }

    @Test func nonConformingFloatsAgree() throws {
        var compare = DecoderComparison()
        compare.floats = .convertFromString(positiveInfinity: "+Inf", negativeInfinity: "-Inf", nan: "NaN")
        for value in ["\"+Inf\"", "\"-Inf\"", "\"Inf\"", "1.5", "\"1.5\"", "\"+\\u0049nf\""] {
            compare.expectAgreement([Double].self, "[\(value)]")
        }
        let fast = compare.fast
        #expect(try fast.decode([Double].self, from: Data(#"["NaN"]"#.utf8)).first?.isNaN == true)
    }
}

struct StringCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
