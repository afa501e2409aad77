import Foundation

/// The members of a JSON object, looked up by key.
///
/// Small objects are searched in place, comparing the key's bytes without building strings;
/// objects of more than ``indexThreshold`` members, and every object under a custom key strategy,
/// get a dictionary of their keys once. Of duplicate keys the first counts, as in Foundation.
struct JSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    static var indexThreshold: Int { 12 }

    private let decoding: JSONDecoding
    private let path: DecodingPath
    private let node: DecodingPathNode?
    /// Tape indices of the first member's key and of the end of the object.
    private let start: Int
    private let end: Int
    private let index: [String: Int]?

    var codingPath: [any CodingKey] { path.codingPath }

    init(decoding: JSONDecoding, index object: Int, path: DecodingPath) throws {
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
        node = path.node
        start = object + 2
        end = document.next(object)

        // Every key must be a valid string, used or not, as in Foundation.
        var member = start
        while member < end {
            if document.flags(member) & (JSONDocument.plain | JSONDocument.ascii) != JSONDocument.plain | JSONDocument.ascii {
                _ = try decoding.corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: member) }
            }
            member = document.next(member + 2)
        }
        let strategy = decoding.options.keyDecodingStrategy
        if document.count(object) > Self.indexThreshold || strategy.isCustom {
            var keys: [String: Int] = [:]
            keys.reserveCapacity(document.count(object))
            member = start
            while member < end {
                let name = try decoding.convertedKey(member, path: path)
                if keys[name] == nil { keys[name] = member + 2 }
                member = document.next(member + 2)
            }
            index = keys
        } else {
            index = nil
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
    private func find(_ key: Key) -> Int? { find(name: key.stringValue) }

    private func find(name: String) -> Int? {
        if let index { return index[name] }
        var name = name
        return name.withUTF8 { target in
            let document = decoding.document
            let snakeCase = decoding.options.snakeCaseKeys
            var member = start
            while member < end {
                let found: Bool
                if !snakeCase {
                    found = document.string(at: member, equals: target)
                } else if document.flags(member) == JSONDocument.plain | JSONDocument.ascii,
                    let matches = SnakeCaseKeys.matches(document.contents(member), target)
                {
                    found = matches
                } else {
                    found = (try? decoding.convertedKey(member, path: path))?.utf8.elementsEqual(target) ?? false
                }
                if found { return member + 2 }
                member = document.next(member + 2)
            }
            return nil
        }
    }

    private func value(_ key: Key) throws -> Int {
        guard let value = find(key) else {
            throw DecodingError.keyNotFound(key, decoding.context(path, "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    private func childPath(_ key: Key) -> DecodingPath { DecodingPath(parent: node, last: .key(key)) }

    @inline(__always)
    private func read<T>(_ key: Key, _ read: (Int, DecodingPath) throws -> T) throws -> T {
        try read(try value(key), childPath(key))
    }

    @inline(__always)
    private func readIfPresent<T>(_ key: Key, _ read: (Int, DecodingPath) throws -> T) throws -> T? {
        guard let value = find(key), decoding.document.kind(value) != .null else { return nil }
        return try read(value, childPath(key))
    }

    func decodeNil(forKey key: Key) throws -> Bool { decoding.document.kind(try value(key)) == .null }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try read(key, decoding.bool) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try read(key, decoding.string) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try read(key) { try decoding.floatingPoint($0, as: type, path: $1) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try read(key) { try decoding.floatingPoint($0, as: type, path: $1) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try read(key) { try decoding.integer($0, as: type, path: $1) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try read(key) { try decoding.unwrap($0, as: type, path: $1) } }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try readIfPresent(key, decoding.bool) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try readIfPresent(key, decoding.string) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try readIfPresent(key) { try decoding.floatingPoint($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try readIfPresent(key) { try decoding.floatingPoint($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try readIfPresent(key) { try decoding.integer($0, as: type, path: $1) } }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try readIfPresent(key) { try decoding.unwrap($0, as: type, path: $1) } }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(try JSONKeyedContainer<NestedKey>(decoding: decoding, index: try value(key), path: childPath(key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONUnkeyedContainer(decoding: decoding, index: try value(key), path: childPath(key))
    }

    func superDecoder() throws -> any Decoder {
        superDecoder(StringCodingKey("super"), find(name: "super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        superDecoder(key, find(key))
    }

    /// A decoder for the value of `key`, or for null when there is none.
    private func superDecoder(_ key: some CodingKey, _ value: Int?) -> any Decoder {
        decoding.detached(value ?? decoding.document.nullIndex, path: DecodingPath(parent: node, last: .key(key)))
    }
}

extension JSONDecoding {
    /// The key at tape `member` under the key strategy.
    func convertedKey(_ member: Int, path: DecodingPath) throws -> String {
        let name = try corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: member) }
        switch options.keyDecodingStrategy {
        case .useDefaultKeys:
            return name
        case .convertFromSnakeCase:
            return SnakeCaseKeys.convert(name)
        case .custom(let convert):
            return convert(path.codingPath + [StringCodingKey(name)]).stringValue
        @unknown default:
            return name
        }
    }
}

extension JSONDecoder.KeyDecodingStrategy {
    var isCustom: Bool {
        if case .custom = self { return true }
        return false
    }
}
