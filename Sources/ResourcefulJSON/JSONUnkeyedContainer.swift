/// The elements of a JSON array, in order.
struct JSONUnkeyedContainer: UnkeyedDecodingContainer {
    private let decoding: JSONDecoding
    private let path: DecodingPathNode?
    /// The tape index of the next element.
    private var position: Int

    let count: Int?
    private(set) var currentIndex = 0

    var codingPath: [any CodingKey] { DecodingPathNode.codingPath(path) }
    var isAtEnd: Bool { currentIndex >= count! }

    init(decoding: JSONDecoding, index: Int, path: DecodingPathNode?) throws {
        try decoding.requireArray(index, path: path)
        self.decoding = decoding
        self.path = path
        position = index + 2
        count = decoding.document.count(index)
    }

    private var elementPath: DecodingPathNode { DecodingPathNode(parent: path, step: .index(currentIndex)) }

    /// The next element's tape index; past the end, `valueNotFound`.
    private func next(_ type: Any.Type, _ message: String = "Unkeyed container is at end.") throws -> Int {
        guard !isAtEnd else { throw DecodingError.valueNotFound(type, decoding.context(elementPath, message)) }
        return position
    }

    private mutating func advance() {
        if !isAtEnd { position = decoding.document.next(position) }
        currentIndex += 1
    }

    /// Reads the next element with `read`, then moves on.
    @inline(__always)
    private mutating func scalar<T>(_ type: T.Type, _ read: (JSONDecoding, Int) throws(ValueFailure) -> T) throws -> T {
        let index = try next(type)
        do throws(ValueFailure) {
            let value = try read(decoding, index)
            advance()
            return value
        } catch {
            throw decoding.failure(error, type, at: elementPath)
        }
    }

    /// Reads the next element with `read` unless it is null or missing, then moves on.
    @inline(__always)
    private mutating func scalarIfPresent<T>(_ type: T.Type, _ read: (JSONDecoding, Int) throws(ValueFailure) -> T) throws -> T? {
        guard !isAtEnd, decoding.document.kind(position) != .null else {
            advance()
            return nil
        }
        do throws(ValueFailure) {
            let value = try read(decoding, position)
            advance()
            return value
        } catch {
            throw decoding.failure(error, type, at: elementPath)
        }
    }

    mutating func decodeNil() throws -> Bool {
        guard decoding.document.kind(try next(Never.self)) == .null else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) { d, i throws(ValueFailure) in try d.readBool(i) } }
    mutating func decode(_ type: String.Type) throws -> String { try scalar(type) { d, i throws(ValueFailure) in try d.readString(i) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try scalar(type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try scalar(type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let index = try next(type)
        let value = try decoding.unwrap(index, as: type) { elementPath }
        advance()
        return value
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readBool(i) } }
    mutating func decodeIfPresent(_ type: String.Type) throws -> String? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readString(i) } }
    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try scalarIfPresent(type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        guard !isAtEnd, decoding.document.kind(position) != .null else {
            advance()
            return nil
        }
        let value = try decoding.unwrap(position, as: type) { elementPath }
        advance()
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let index = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try decoding.keyedContainer(type, index: index, path: elementPath)
        advance()
        return container
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
