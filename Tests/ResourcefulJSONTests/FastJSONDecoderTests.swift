import Foundation
import ResourcefulJSON
import Testing

/// Cases of the decoder on its own, beyond the differential corpus.
@Suite struct FastJSONDecoderTests {
    @Test func aMalformedNumberNamesItsValue() throws {
        let error = #expect(throws: DecodingError.self) {
            _ = try FastJSONDecoder().decode([[String: Int]].self, from: Data(#"[{"a":1},{"b":01}]"#.utf8))
        }
        guard case .dataCorrupted(let context) = error else { return #expect(Bool(false), "not dataCorrupted: \(String(describing: error))") }
        #expect(context.codingPath.map(\.stringValue) == ["Index 1", "b"])
        #expect(context.debugDescription.contains("leading zero"))
    }

    /// A decoder kept past `decode` (as some `init(from:)` do) still reads its document, even
    /// after the caller's bytes, which the decoder reads in place while it decodes, change.
    @Test func aDecoderKeptAfterDecodingStillWorks() throws {
        final class Keeper: Decodable {
            var later: (any Decoder)?
            required init(from decoder: any Decoder) throws {
                later = try decoder.container(keyedBy: StringCodingKey.self).superDecoder(forKey: StringCodingKey("kept"))
            }
        }
        var data = Data(#"{"kept":{"name":"still here"}}"#.utf8)
        let keeper = try FastJSONDecoder().decode(Keeper.self, from: data)
        data.resetBytes(in: data.startIndex..<data.endIndex)
        let name = try keeper.later?.container(keyedBy: StringCodingKey.self).decode(String.self, forKey: StringCodingKey("name"))
        #expect(name == "still here")
    }

    @Test func largeObjectsUseTheFirstOfDuplicateKeys() throws {
        struct Wanted: Decodable, Equatable { var k3: Int; var k29: Int; var missing: Int? }
        let members = (0..<30).map { "\"k\($0)\":\($0)" } + ["\"k3\":-1"]
        let json = Data(("{" + members.joined(separator: ",") + "}").utf8)
        let fast = try FastJSONDecoder().decode(Wanted.self, from: json)
        #expect(fast == Wanted(k3: 3, k29: 29, missing: nil))
        #expect(fast == (try JSONDecoder().decode(Wanted.self, from: json)))
    }
}
