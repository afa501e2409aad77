/// The elements of a JSON array, in order.
struct JSONUnkeyedContainer: UnkeyedDecodingContainer {
    private let decoding: JSONDecoding
    private let path: DecodingPath
    private let parent: DecodingPathNode?
    /// The tape index of the next element.
    private var position: Int

    let count: Int?
    private(set) var currentIndex = 0

    var codingPath: [any CodingKey] { path.codingPath }
    var isAtEnd: Bool { currentIndex >= count! }

    init(decoding: JSONDecoding, index: Int, path: DecodingPath) throws {
        let document = decoding.document
        switch document.kind(index) {
        case .array: break
        case .null:
            throw DecodingError.valueNotFound([Any].self, decoding.context(path, "Cannot get unkeyed decoding container -- found null value instead"))
        default:
            throw DecodingError.typeMismatch([Any].self, decoding.context(path, "Expected to decode \([Any].self) but found \(document.typeDescription(index)) instead."))
        }
        self.decoding = decoding
        self.path = path
        parent = path.node
        position = index + 2
        count = document.count(index)
    }

    private var elementPath: DecodingPath { DecodingPath(parent: parent, last: .index(currentIndex)) }

    /// The next element's tape index; past the end, `valueNotFound`.
    private func next(_ type: Any.Type, _ message: String = "Unkeyed container is at end.") throws -> Int {
        guard !isAtEnd else { throw DecodingError.valueNotFound(type, decoding.context(elementPath, message)) }
        return position
    }

    private mutating func advance() {
        if !isAtEnd { position = decoding.document.next(position) }
        currentIndex += 1
    }

    /// Decodes the next element with `read`, then moves on.
    @inline(__always)
    private mutating func take<T>(_ type: T.Type, _ read: (JSONDecoding, Int, DecodingPath) throws -> T) throws -> T {
        let value = try read(decoding, try next(type), elementPath)
        advance()
        return value
    }

    /// Decodes the next element with `read` unless it is null or missing, then moves on.
    @inline(__always)
    private mutating func takeIfPresent<T>(_ type: T.Type, _ read: (JSONDecoding, Int, DecodingPath) throws -> T) throws -> T? {
        defer { advance() }
        guard !isAtEnd, decoding.document.kind(position) != .null else { return nil }
        return try read(decoding, position, elementPath)
    }

    mutating func decodeNil() throws -> Bool {
        guard decoding.document.kind(try next(Never.self)) == .null else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try take(type) { try $0.bool($1, path: $2) } }
    mutating func decode(_ type: String.Type) throws -> String { try take(type) { try $0.string($1, path: $2) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try take(type) { try $0.floatingPoint($1, as: type, path: $2) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try take(type) { try $0.floatingPoint($1, as: type, path: $2) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try take(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try take(type) { try $0.unwrap($1, as: type, path: $2) } }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try takeIfPresent(type) { try $0.bool($1, path: $2) } }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try takeIfPresent(type) { try $0.string($1, path: $2) } }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try takeIfPresent(type) { try $0.floatingPoint($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try takeIfPresent(type) { try $0.floatingPoint($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try takeIfPresent(type) { try $0.integer($1, as: type, path: $2) } }
    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? { try takeIfPresent(type) { try $0.unwrap($1, as: type, path: $2) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try take(KeyedDecodingContainer<NestedKey>.self) { decoding, index, path in
            KeyedDecodingContainer(try JSONKeyedContainer<NestedKey>(decoding: decoding, index: index, path: path))
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let index = try next((any UnkeyedDecodingContainer).self, "Cannot get nested unkeyed container -- unkeyed container is at end.")
        let container = try JSONUnkeyedContainer(decoding: decoding, index: index, path: elementPath)
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let index = try next((any Decoder).self, "Cannot get superDecoder() -- unkeyed container is at end.")
        let decoder = decoding.detached(index, path: elementPath)
        advance()
        return decoder
    }
}
