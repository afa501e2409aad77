import Foundation
import PropertyBased
import Testing

@testable import Resourceful

/// What we encode, a standard parser (Foundation's `URLComponents`) decodes back to the same values.
@Suite struct EncodingPropertyTests {
    /// Printable ASCII, Latin-1 and other BMP letters, controls and combining marks included.
    static let text = Gen<Character>.oneOf(
        Gen.character(in: " "..."~"),
        Gen.character(in: "\u{80}"..."\u{2FF}"),
        Gen.character(in: "\u{4E00}"..."\u{4E50}"),
        Gen.character(in: "/"..."/"),
        Gen.character(in: "%"..."%")
    ).string(of: 0...24)

    @Test func anInterpolatedValueIsOneSegmentThatDecodesBack() async {
        await propertyCheck(count: 300, input: Self.text) { value in
            let path: ResourcePath = "before/\(value)/after"
            guard !["", ".", ".."].contains(value) else { return }
            let segments = path.encoded.split(separator: "/", omittingEmptySubsequences: false)
            #expect(segments.count == 3)
            #expect(String(segments[1]).removingPercentEncoding == value)
            let url = URL(string: "http://example.com/" + path.encoded)
            #expect(url?.pathComponents.count == 4)
        }
    }

    @Test func queryFieldsDecodeBackInOrder() async throws {
        await propertyCheck(count: 300, input: Self.text, Self.text.array(of: 0...5)) { name, values in
            guard !name.isEmpty else { return }
            struct Query: Encodable { var name: String; var values: [String] }
            let fields = try FormEncoder().fields(of: ["n": name, "v": "fixed"])
            let query = try fields.percentEncoded()
            let items = URLComponents(string: "http://example.com/?" + query)?.queryItems ?? []
            #expect(items.map(\.name) == ["n", "v"] || items.map(\.name) == ["v", "n"])
            #expect(items.first { $0.name == "n" }?.value == name)

            let list = try FormEncoder().fields(of: Query(name: name, values: values)).percentEncoded()
            let listItems = URLComponents(string: "http://example.com/?" + list)?.queryItems ?? []
            #expect(listItems.first?.name == "name")
            #expect(listItems.first?.value == name)
            #expect(listItems.dropFirst().map(\.name) == Array(repeating: "values[]", count: values.count))
            #expect(listItems.dropFirst().map(\.value) == values.map(Optional.some))
        }
    }

    @Test func dictionaryKeysAreEncodedToo() async throws {
        await propertyCheck(count: 200, input: Self.text, Self.text) { key, value in
            guard !key.isEmpty else { return }
            let query = try FormEncoder().fields(of: [key: value]).percentEncoded()
            let items = URLComponents(string: "http://example.com/?" + query)?.queryItems ?? []
            #expect(items.count == 1)
            #expect(items.first?.name == key)
            #expect(items.first?.value == value)
        }
    }
}
