import Foundation
import ProcessTestSupport
import Resourceful
import Testing

/// The JSON masker reads a document once: secret values replaced, every other byte kept, and
/// anything that is not JSON (RFC 8259, without the trailing commas some parsers allow) refused.
@Suite struct JSONMaskingTests {
    let redactor = Redactor(settings: APIConfig.LogSettings(maskedBodyKeys: ["ssn"]))

    func masked(_ json: String) -> String? {
        redactor.maskedBody(Data(json.utf8), contentType: "application/json").map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func secretValuesOfAnyTypeAreReplacedAndTheRestKeptByteForByte() {
        #expect(masked(#"{"user": "ada",  "password" : "pw-1", "n": 1.50e+2}"#) == #"{"user": "ada",  "password" : "***", "n": 1.50e+2}"#)
        #expect(masked(#"[{"token":{"a":[1,{"secret":2}]},"ssn":123},{"apiKey":null}]"#) == #"[{"token":"***","ssn":"***"},{"apiKey":"***"}]"#)
        // Keys are compared decoded; values that look like keys are values.
        #expect(masked(#"{"pass\u0077ord":"x","note":"password"}"#) == #"{"pass\u0077ord":"***","note":"password"}"#)
        #expect(masked(#"{"emoji\ud83d\ude00":"keep","a\"b":"keep"}"#) == #"{"emoji\ud83d\ude00":"keep","a\"b":"keep"}"#)
        // An invisible character some parsers drop from a key does not hide it.
        #expect(masked("{\"\u{FEFF}pin\":\"1234\",\"x\u{200B}-token\":1}") == "{\"\u{FEFF}pin\":\"***\",\"x\u{200B}-token\":\"***\"}")
    }

    @Test func aDocumentWithoutSecretsIsReturnedAsItIs() {
        let document = "{\n  \"users\": [ {\"id\": 1, \"name\": \"Ada \\u00e9\"} ],\n  \"total\": -0.5E-3, \"ok\": true\n}\n"
        #expect(masked(document) == document)
        #expect(masked("  42 ") == "  42 ")
    }

    @Test(arguments: [
        "{", "}", #"{"a":1,}"#, "[1,]", "[01]", "[1.]", "[.5]", "[1e]", "[-]", "[+1]", "{'a':1}", #"{"a" 1}"#,
        "[tru]", "[nul]", "[1] [2]", "{\"a\":\"line\nbreak\"}", #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"password":}"#,
        #"{"password":"x""#, "[\"unterminated]", "NaN", "[Infinity]",
        // Not UTF-8, or a lone surrogate: a lenient reader could read a key the masker did not.
        #"{"x":"\ud800"}"#, #"{"pass\uD800word":"x"}"#, #"{"a":"\uDC00"}"#,
    ])
    func whatIsNotJSONIsNotShown(text: String) {
        #expect(masked(text) == nil)
    }

    @Test func invalidUTF8IsNotShown() {
        for bytes: [UInt8] in [
            Array(#"{"pass"#.utf8) + [0xFF] + Array(#"word":"x"}"#.utf8),
            Array(#"{""#.utf8) + [0xC1, 0xB0] + Array(#"assword":"x"}"#.utf8),  // overlong "p"
            Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),  // an encoded surrogate
            Array(#"{"a":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8),  // past U+10FFFF
            Array(#"{"a":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),  // cut short
        ] {
            #expect(redactor.maskedBody(Data(bytes), contentType: "application/json") == nil, "\(bytes)")
        }
        #expect(masked(#"{"naïve ✓ 😀":"ok"}"#) == #"{"naïve ✓ 😀":"ok"}"#)
    }

    @Test func nestingPastTheLimitIsNotShown() {
        let deep = String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
        #expect(masked(deep) == nil)
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(masked(fine) == fine)
    }

    /// A public corpus document (twitter.json: nested objects, escapes, every value type), masked by the built-in names alone and with keys ending in `id`,
    /// `coordinates` or `name` too: the result parses, and equals what masking the parsed tree
    /// gives; with nothing to mask, it is the document byte for byte.
    @Test(arguments: ["twitter.json"])
    func theCorpusMasksAsATreeWould(name: String) async throws {
        // Seconds of parsing in a debug build: kept off the cooperative pool.
        let failures = try await onOwnThread { try Self.corpusFailures(name) }
        #expect(failures.isEmpty, "\(failures)")
    }

    /// What does not hold for the corpus document `name`.
    private static func corpusFailures(_ name: String) throws -> [String] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Fixtures/json/\(name)")
        let data = try Data(contentsOf: url)
        let original = NSDictionary(dictionary: ["v": try JSONSerialization.jsonObject(with: data)])
        var failures: [String] = []
        for extra in [[], ["id", "coordinates", "name"]] {
            let redactor = Redactor(settings: APIConfig.LogSettings(maskedBodyKeys: extra))
            guard let masked = redactor.maskedBody(data, contentType: "application/json") else {
                failures.append("\(extra): not masked")
                continue
            }
            let expected = NSDictionary(dictionary: ["v": mask(original["v"]!, names: SensitiveNames(extra: extra), redactor: redactor)])
            let parsed = NSDictionary(dictionary: ["v": try JSONSerialization.jsonObject(with: masked)])
            if parsed != expected { failures.append("\(extra): not what masking the tree gives") }
            if expected == original, masked != data { failures.append("\(extra): nothing to mask, yet bytes changed") }
            if expected != original, masked.count >= data.count { failures.append("\(extra): nothing was replaced") }
        }
        return failures
    }

    /// The tree masked: values of masked keys replaced, other strings shown as the redactor shows
    /// text (a URL's masked query values, a form's masked fields).
    private static func mask(_ value: Any, names: SensitiveNames, redactor: Redactor) -> Any {
        switch value {
        case let dictionary as [String: Any]:
            dictionary.reduce(into: [String: Any]()) { result, entry in
                result[entry.key] = names.contains(entry.key) ? "***" : mask(entry.value, names: names, redactor: redactor)
            }
        case let array as [Any]: array.map { mask($0, names: names, redactor: redactor) }
        case let string as String: redactor.maskedText(string)
        default: value
        }
    }
}
