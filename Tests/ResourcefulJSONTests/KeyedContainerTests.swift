import Foundation
import ResourcefulJSON
import Testing

/// Keyed containers asked for by models that do unusual things with their key types.
@Suite struct KeyedContainerTests {
    /// Keys as a class, and a subclass of it: `container(keyedBy:)` may be given the subclass's
    /// metatype as the base class's, so the metatype passed and the static key type differ. The
    /// properties are constants: sharing them between threads is safe.
    class BaseKey: CodingKey, @unchecked Sendable {
        let stringValue: String
        var intValue: Int? { nil }
        required init?(stringValue: String) { self.stringValue = stringValue }
        required init?(intValue: Int) { return nil }
    }

    final class SubKey: BaseKey, @unchecked Sendable {
        let extra = [1, 2, 3]
    }

    struct TwoKeyTypes: Decodable, Equatable {
        var first: Int
        var second: Int
        var extras: [Int]

        init(from decoder: any Decoder) throws {
            let upcast: BaseKey.Type = SubKey.self
            let base = try decoder.container(keyedBy: upcast)
            first = try base.decode(Int.self, forKey: BaseKey(stringValue: "a")!)
            let sub = try decoder.container(keyedBy: SubKey.self)
            second = try sub.decode(Int.self, forKey: SubKey(stringValue: "a")!)
            extras = sub.allKeys.flatMap { $0.extra }
        }
    }

    struct Link: Decodable {
        var url: URL
    }

    /// A null where a URL is wanted is named as `JSONDecoder` names it: by the URL.
    @Test func aNullURLIsReportedAsJSONDecoderReportsIt() {
        let data = Data(#"{"url":null}"#.utf8)
        func described(_ body: () throws -> Link) -> String {
            do {
                _ = try body()
                return "no error"
            } catch DecodingError.valueNotFound(let type, let context) {
                return "valueNotFound \(type) \(context.debugDescription)"
            } catch {
                return "\(error)"
            }
        }
        let fast = described { try FastJSONDecoder().decode(Link.self, from: data) }
        #expect(fast == described { try JSONDecoder().decode(Link.self, from: data) })
        #expect(fast.hasPrefix("valueNotFound URL"))
    }

    @Test func aSubclassMetatypeGetsTheContainerOfItsStaticType() throws {
        let data = Data(#"{"a":1,"b":2}"#.utf8)
        let fast = try FastJSONDecoder().decode(TwoKeyTypes.self, from: data)
        #expect(fast == (try JSONDecoder().decode(TwoKeyTypes.self, from: data)))
        #expect(fast.extras == [1, 2, 3, 1, 2, 3])
    }
}
