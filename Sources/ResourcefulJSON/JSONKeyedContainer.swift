import Foundation

/// The members of a JSON object, looked up by key.
///
/// Objects are searched in place from their first member, comparing the key's bytes without
/// building strings (under `convertFromSnakeCase` too), so that of duplicate keys the first
/// counts, as in Foundation. Under a custom key strategy, an object gets a dictionary of its
/// converted keys once.
final class JSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    private let decoding: JSONDecoding
    private let path: DecodingPathNode?
    /// Tape indices of the first member's key and of the end of the object.
    private let start: Int
    private let end: Int
    /// Under a custom key strategy, the tape index of each converted key's value.
    private let convertedKeys: [String: Int]?

    var codingPath: [any CodingKey] { DecodingPathNode.codingPath(path) }

    init(decoding: JSONDecoding, index object: Int, path: DecodingPathNode?) throws {
        let document = decoding.document
        switch document.kind(object) {
        case .object: break
        case .null:
            throw DecodingError.valueNotFound([String: Any].self, decoding.context(path, "Cannot get keyed decoding container -- found null value instead"))
        default:
            throw DecodingError.typeMismatch([String: Any].self, decoding.context(path, "Expected to decode \([String: Any].self) but found \(document.typeDescription(object)) instead."))
        }
        self.decoding = decoding
        self.path = path
        start = object + 2
        end = document.next(object)

        // Every key must be a valid string, used or not, as in Foundation (as every key of a
        // document whose keys are all plain ASCII is).
        var member = document.keysArePlainASCII ? end : start
        while member < end {
            if document.flags(member) != JSONDocument.plain | JSONDocument.ascii {
                _ = try decoding.corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: member) }
            }
            member = document.next(member + 2)
        }
        if decoding.customKeys {
            var keys: [String: Int] = [:]
            keys.reserveCapacity(document.count(object))
            member = start
            while member < end {
                let name = try decoding.convertedKey(member, path: path)
                if keys[name] == nil { keys[name] = member + 2 }
                member = document.next(member + 2)
            }
            convertedKeys = keys
        } else {
            convertedKeys = nil
        }
    }

    var allKeys: [Key] {
        var seen: Set<String> = []
        var keys: [Key] = []
        var member = start
        while member < end {
            if let name = try? decoding.convertedKey(member, path: path), seen.insert(name).inserted, let key = Key(stringValue: name) {
                keys.append(key)
            }
            member = decoding.document.next(member + 2)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { find(key) != nil }

    /// The tape index of `key`'s value, if the object has the key.
    @inline(__always)
    private func find(_ key: Key) -> Int? { find(name: key.stringValue) }

    @inline(__always)
    private func find(name: String) -> Int? {
        if let convertedKeys { return convertedKeys[name] }
        // -1 for a missing key: an optional out of the closure costs a word more to return.
        // The name's bytes are read where they are (a copy to make them contiguous, as
        // `withUTF8` would, costs a retain and a release per search); a string that does not
        // keep them contiguous is copied.
        let member = name.utf8.withContiguousStorageIfAvailable { decoding.search($0, from: start, to: end) ?? -1 }
            ?? searchCopying(name)
        return member >= 0 ? member &+ 2 : nil
    }

    /// The search for a name whose bytes are not contiguous, in a contiguous copy.
    @inline(never)
    private func searchCopying(_ name: String) -> Int {
        var name = name
        return name.withUTF8 { decoding.search($0, from: start, to: end) ?? -1 }
    }

    @inline(__always)
    private func value(_ key: Key) throws -> Int {
        guard let value = find(key) else {
            throw DecodingError.keyNotFound(key, decoding.context(path, "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    private func child(_ key: Key) -> DecodingPathNode { DecodingPathNode(parent: path, key: key) }

    /// Reads `key`'s value with `read`, or throws a `DecodingError` for `type` at its path.
    @inline(__always)
    private func scalar<T>(_ key: Key, _ type: T.Type, _ read: (JSONDecoding, Int) throws(ValueFailure) -> T) throws -> T {
        let index = try value(key)
        do throws(ValueFailure) {
            return try read(decoding, index)
        } catch {
            throw decoding.failure(error, type, at: child(key))
        }
    }

    /// The same, nil when the key is missing or its value null.
    @inline(__always)
    private func scalarIfPresent<T>(_ key: Key, _ type: T.Type, _ read: (JSONDecoding, Int) throws(ValueFailure) -> T) throws -> T? {
        guard let index = find(key), decoding.document.kind(index) != .null else { return nil }
        do throws(ValueFailure) {
            return try read(decoding, index)
        } catch {
            throw decoding.failure(error, type, at: child(key))
        }
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoding.document.kind(try value(key)) == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try scalar(key, type) { d, i throws(ValueFailure) in try d.readBool(i) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try scalar(key, type) { d, i throws(ValueFailure) in try d.readString(i) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try scalar(key, type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try scalar(key, type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try scalar(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        // The closures capture the path and the key, not `self`: a closure that calls a method of
        // this generic type looks its metadata up on every call.
        try decoding.unwrap(try value(key), as: type) { [path] in DecodingPathNode(parent: path, key: key) }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readBool(i) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readString(i) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: type) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try scalarIfPresent(key, type) { d, i throws(ValueFailure) in try d.readInteger(i, as: type) } }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = find(key), decoding.document.kind(index) != .null else { return nil }
        return try decoding.unwrap(index, as: type) { [path] in DecodingPathNode(parent: path, key: key) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoding.keyedContainer(type, index: try value(key), path: child(key))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONUnkeyedContainer(decoding: decoding, index: try value(key), path: child(key))
    }

    func superDecoder() throws -> any Decoder {
        superDecoder(StringCodingKey("super"), find(name: "super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        superDecoder(key, find(key))
    }

    /// A decoder for the value of `key`, or for null when there is none.
    private func superDecoder(_ key: some CodingKey, _ value: Int?) -> any Decoder {
        decoding.detached(value ?? decoding.document.nullIndex, path: DecodingPathNode(parent: path, step: .key(key)))
    }
}

extension JSONDecoding {
    /// The key at tape `member` under the key strategy.
    func convertedKey(_ member: Int, path: DecodingPathNode?) throws -> String {
        let name = try corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: member) }
        switch options.keyDecodingStrategy {
        case .useDefaultKeys:
            return name
        case .convertFromSnakeCase:
            return SnakeCaseKeys.camelCased(name)
        case .custom(let convert):
            return convert(DecodingPathNode.codingPath(path) + [StringCodingKey(name)]).stringValue
        @unknown default:
            return name
        }
    }
}
