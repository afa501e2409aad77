import Foundation

/// Types the decoder tests decode into, covering what `Codable` offers.
enum DecoderModels {
    struct Scalars: Codable, Equatable {
        var bool: Bool
        var string: String
        var int: Int
        var int8: Int8
        var int16: Int16
        var int32: Int32
        var int64: Int64
        var uint: UInt
        var uint8: UInt8
        var uint64: UInt64
        var float: Float
        var double: Double
    }

    struct Optionals: Codable, Equatable {
        var name: String?
        var count: Int?
        var flag: Bool?
        var ratio: Double?
        var child: [Optionals]?
        var list: [Int?]?
    }

    enum Color: String, Codable, Equatable { case red, green }
    enum Level: Int, Codable, Equatable { case low = 1, high = 2 }

    struct Nested: Codable, Equatable {
        var id: Int
        var tags: [String]
        var matrix: [[Int]]
        var counts: [String: Int]
        var color: Color
        var level: Level?
        var children: [Nested]?
    }

    struct Special: Codable, Equatable {
        var date: Date
        var data: Data?
        var url: URL?
        var amount: Decimal?
    }

    struct SnakeKeys: Codable, Equatable {
        var userId: Int?
        var createdAt: String?
        var urlValue: String?
        var _private: Int?
        var x1Y2: Int?
        var a2B: Int?
        var plain: Int?
        var headers: [String: Int]?
    }

    /// Decodes through every container call by hand.
    struct Manual: Decodable, Equatable {
        enum Keys: String, CodingKey { case a, b, list, inner, sup, missing }

        var a: Int
        var hasB: Bool
        var bIsNil: Bool
        var items: [Int?]
        var innerKeys: [String]
        var superValue: Int?
        var missingSuper: Bool
        var extraAtEnd: Int?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            a = try container.decode(Int.self, forKey: .a)
            hasB = container.contains(.b)
            bIsNil = hasB ? try container.decodeNil(forKey: .b) : false
            var list = try container.nestedUnkeyedContainer(forKey: .list)
            items = []
            while !list.isAtEnd {
                items.append(try list.decodeNil() ? nil : try list.decode(Int.self))
            }
            extraAtEnd = try list.decodeIfPresent(Int.self)
            let inner = try container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            innerKeys = inner.allKeys.map(\.stringValue).sorted()
            superValue = try Int?(from: container.superDecoder(forKey: .sup))
            missingSuper = try container.superDecoder(forKey: .missing).singleValueContainer().decodeNil()
        }
    }

    /// Any JSON value, found by trying each type in turn: a fuzz target that walks every
    /// container and scalar path, errors included.
    indirect enum Value: Decodable, Equatable {
        case null, bool(Bool), int(Int64), uint(UInt64), double(Double), string(String), array([Value]), object([String: Value])

        init(from decoder: any Decoder) throws {
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                self = .null
            } else if let value = try? single.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? single.decode(Int64.self) {
                self = .int(value)
            } else if let value = try? single.decode(UInt64.self) {
                self = .uint(value)
            } else if let value = try? single.decode(Double.self) {
                self = .double(value)
            } else if let value = try? single.decode(String.self) {
                self = .string(value)
            } else if let value = try? single.decode([Value].self) {
                self = .array(value)
            } else {
                self = .object(try single.decode([String: Value].self))
            }
        }
    }
}
