import Foundation
import HTTPTypes
import Testing

@testable import Resourceful

@Suite struct FormEncoderTests {
    struct Filter: Encodable {
        var name: String
        var tags: [String]
        var range: Range
        var archived: Bool
        var owner: String?
        var since: Date
        struct Range: Encodable { var from: Int; var to: Double }
    }

    private func pairs(_ value: some Encodable, encoder: FormEncoder = FormEncoder()) throws -> [String] {
        try encoder.fields(of: value).map { field in
            guard case .text(let text) = field.value else { return "\(field.name)=<file>" }
            return "\(field.name)=\(text)"
        }
    }

    @Test func nestedObjectsArraysOptionalsDatesAndBools() throws {
        let filter = Filter(
            name: "Ada", tags: ["a", "b"], range: .init(from: 1, to: 2.5), archived: false, owner: nil,
            since: Date(timeIntervalSince1970: 1_700_000_000)
        )
        #expect(
            try pairs(["filter": filter]) == [
                "filter[name]=Ada", "filter[tags][]=a", "filter[tags][]=b", "filter[range][from]=1",
                "filter[range][to]=2.5", "filter[archived]=false", "filter[since]=2023-11-14T22:13:20Z",
            ]
        )
    }

    /// Types with a form of their own, reached directly, inside arrays, as optionals and
    /// through a custom `encode(to:)` that encodes an optional without unwrapping it.
    @Test func datesURLsDecimalsAndDataHaveTheirOwnForm() throws {
        struct Special: Encodable {
            var url = URL(string: "https://example.com/a?b=c")!
            var amount = Decimal(string: "12.50")!
            var blob = Data([0xFF, 0x00, 0x41])
            var dates: [Date?] = [Date(timeIntervalSince1970: 0), nil]
            var maybe: Date? = Date(timeIntervalSince1970: 1_700_000_000)
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(url, forKey: .url)
                try container.encode(amount, forKey: .amount)
                try container.encode(blob, forKey: .blob)
                try container.encode(dates, forKey: .dates)
                try container.encode(maybe, forKey: .maybe)
            }
            enum CodingKeys: CodingKey { case url, amount, blob, dates, maybe }
        }
        #expect(try pairs(Special()) == [
            "url=https://example.com/a?b=c", "amount=12.5", "blob=/wBB", "dates[]=1970-01-01T00:00:00Z",
            "maybe=2023-11-14T22:13:20Z",
        ])
    }

    @Test func arraysOfObjectsAreNumbered() throws {
        struct Item: Encodable { var id: Int; var qty: Int }
        #expect(try pairs(["items": [Item(id: 1, qty: 2), Item(id: 3, qty: 4)]]) == [
            "items[0][id]=1", "items[0][qty]=2", "items[1][id]=3", "items[1][qty]=4",
        ])
    }

    @Test func nilAndEmptyContainersSendNothing() throws {
        struct Sparse: Encodable {
            var a: Int?
            var b: [Int] = []
            var c: [String: Int] = [:]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encodeNil(forKey: .a)
                try container.encode(b, forKey: .b)
                try container.encode(c, forKey: .c)
            }
            enum CodingKeys: CodingKey { case a, b, c }
        }
        #expect(try pairs(Sparse()).isEmpty)
    }

    @Test func dateStrategiesAndSnakeCaseKeys() throws {
        struct Query: Encodable { var createdAfter: Date; var pageSize: Int }
        let query = Query(createdAfter: Date(timeIntervalSince1970: 1_700_000_000.5), pageSize: 10)
        let encoder = FormEncoder(keyStrategy: .snakeCase, dateStrategy: .millisecondsSince1970)
        #expect(try pairs(query, encoder: encoder) == ["created_after=1700000000500", "page_size=10"])
        let seconds = FormEncoder(dateStrategy: .secondsSince1970)
        #expect(try pairs(["at": Date(timeIntervalSince1970: 5)], encoder: seconds) == ["at=5"])
    }

    @Test(arguments: ["fooBar", "myURLProperty", "userID", "a", "already_snake", "HTTPHeaderName", "x2Y", "version2Beta"])
    func snakeCaseMatchesJSONEncoder(key: String) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let json = try JSONSerialization.jsonObject(with: encoder.encode(OneKey(key: key))) as? [String: Int]
        #expect(json?.keys.first == SnakeCase.snakeCased(key))
    }

    /// An object with one field named `key`, so the encoder's key strategy applies to it.
    struct OneKey: Encodable {
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        var key: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(1, forKey: Key(stringValue: key))
        }
    }

    @Test func topLevelScalarOrArrayIsRefused() {
        #expect(throws: FormEncodingError.topLevelNotKeyed) { try FormEncoder().fields(of: [1, 2]) }
        #expect(throws: FormEncodingError.topLevelNotKeyed) { try FormEncoder().fields(of: "x") }
    }

    @Test func nonFiniteNumberIsRefusedNamingTheField() {
        #expect(throws: FormEncodingError.nonFiniteNumber(field: "ratio")) {
            try FormEncoder().fields(of: ["ratio": Double.nan])
        }
    }

    @Test func percentEncodingOfNamesAndValues() throws {
        let fields = try FormEncoder().fields(of: ["q": ["a b&c=d/é"]])
        #expect(try fields.percentEncoded() == "q%5B%5D=a%20b%26c%3Dd%2F%C3%A9")
    }

    @Test func fileOutsideMultipartIsRefused() throws {
        let fields = try FormEncoder().fields(of: ["f": MultipartFile(filename: "a.txt", data: Data("x".utf8))])
        #expect(throws: FormEncodingError.fileOutsideMultipart(field: "f")) { try fields.percentEncoded() }
    }
}
