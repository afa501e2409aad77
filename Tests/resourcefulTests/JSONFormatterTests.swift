import Foundation
import Testing

@testable import resourceful

/// The tool's JSON pretty printer and the error bodies it shows.
@Suite struct JSONFormatterTests {
    private func formatted(_ text: String, colours: Bool = false) -> String? {
        JSONFormatter.formatted(Array(text.utf8), colours: colours)
    }

    @Test func keepsOrderDigitsAndEscapes() {
        let text = #"{"z": 1, "a": [1.10, -0, 2E+400, 123456789012345678901234567890], "s": "\"\u00e9\/", "e": {}, "l": []}"#
        #expect(
            formatted(text)
                == "{\n  \"z\": 1,\n  \"a\": [\n    1.10,\n    -0,\n    2E+400,\n    123456789012345678901234567890\n  ],\n  \"s\": \"\\\"\\u00e9\\/\",\n  \"e\": {},\n  \"l\": []\n}"
        )
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "tru", "\"a\u{01}\"", "\"\\x\"", "\"\\u12\"", "[1] [2]", "{\"a\" 1}", "{1: 2}", "nul"])
    func refusesWhatIsNotJSON(text: String) {
        #expect(formatted(text) == nil)
    }

    @Test func refusesInvalidUTF8() {
        #expect(JSONFormatter.formatted([0x22, 0xFF, 0x22]) == nil)
    }

    @Test func escapesCharactersThatDriveATerminal() {
        // C1 CSI, DEL, a right-to-left override: escapes that keep the value.
        #expect(formatted("\"a\u{9B}2J\u{7F}b\u{202E}c\"") == "\"a\\u009b2J\\u007fb\\u202ec\"")
        #expect(formatted("\"\u{E0001}\"") == "\"\\udb40\\udc01\"")
    }

    @Test func deepDocumentsAreLeftAsTheyAreWithoutCrashing() {
        let deep = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        #expect(formatted(deep) == nil)
        let unclosed = String(repeating: "{\"a\":", count: 100_000)
        #expect(formatted(unclosed) == nil)
        let fits = String(repeating: "[", count: JSONFormatter.maxDepth) + String(repeating: "]", count: JSONFormatter.maxDepth)
        #expect(formatted(fits) != nil)
    }

    @Test func colours() {
        #expect(formatted(#"{"k":"v","n":1,"t":null}"#, colours: true)
            == "{\n  \u{1B}[34;1m\"k\"\u{1B}[0m: \u{1B}[32m\"v\"\u{1B}[0m,\n  \u{1B}[34;1m\"n\"\u{1B}[0m: \u{1B}[36m1\u{1B}[0m,\n  \u{1B}[34;1m\"t\"\u{1B}[0m: \u{1B}[35mnull\u{1B}[0m\n}")
    }

    @Test func anErrorBodyIsBoundedWhateverItsIndentationMakesOfIt() {
        // 64 levels, then many short numbers: indented, far larger than the body.
        let body = String(repeating: "[", count: 63) + String(repeating: "1,", count: 50_000) + "1" + String(repeating: "]", count: 63)
        let shown = CallReport.errorBody(Array(body.utf8))
        #expect((shown?.utf8.count ?? .max) < CallReport.maxBodyBytes + 100)
        #expect(shown?.hasSuffix("more bytes not shown)") == true)
        // A cut never splits a character.
        let accents = CallReport.errorBody(Array(String(repeating: "é", count: 10_000).utf8))
        #expect(accents?.hasPrefix(String(repeating: "é", count: CallReport.maxBodyBytes / 2)) == true)
        #expect(accents?.contains("\u{FFFD}") == false)
        #expect(CallReport.errorBody([0, 1, 2]) == "(a binary body of 3 bytes, not shown)")
        #expect(CallReport.errorBody(Array("line\u{1B}[2J\r\n".utf8)) == "line\\x1b[2J")
    }

    @Test func parametersKeepLargeIntegersAndDecimals() throws {
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"big": 12345678901234567890123, "d": 0.1, "i": 7}"#.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == #"{"big":12345678901234567890123,"d":0.1,"i":7}"#)
    }
}
