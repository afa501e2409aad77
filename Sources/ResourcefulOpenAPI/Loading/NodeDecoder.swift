internal import Foundation
internal import Yams

/// Decodes a value from a parsed YAML node tree, as Yams' `YAMLDecoder` does, but looks a
/// mapping's keys up in a dictionary built once per container.
///
/// `YAMLDecoder` finds each key by scanning the mapping's pairs, so decoding a mapping of `n`
/// keys (the properties of a wide schema, a document's paths or schemas) takes `n²` steps: ten
/// thousand properties took minutes. Scalars are converted the way Yams converts them
/// (`ScalarConstructible`); merge keys (`<<`) are expanded, the mapping's own keys winning; of
/// keys written twice the last wins.
struct NodeDecoder: Decoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ node: Node, codingPath: [any CodingKey] = []) {
        self.node = node
        self.codingPath = codingPath
    }

    static func decode<T: Decodable>(_ type: T.Type, from node: Node) throws -> T {
        try NodeDecoder(node).decode(type)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .mapping(let mapping) = node else {
            throw typeMismatch(Node.Mapping.self)
        }
        return KeyedDecodingContainer(Keyed<Key>(decoder: self, pairs: Self.flattened(mapping)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let sequence) = node else {
            throw typeMismatch(Node.Sequence.self)
        }
        return Unkeyed(decoder: self, elements: Array(sequence))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    fileprivate func child(_ node: Node, _ key: any CodingKey) -> NodeDecoder {
        NodeDecoder(node, codingPath: codingPath + [key])
    }

    fileprivate func typeMismatch(_ expected: Any.Type) -> DecodingError {
        let reality: Any.Type =
            switch node {
            case .scalar: Node.Scalar.self
            case .mapping: Node.Mapping.self
            case .sequence: Node.Sequence.self
            case .alias: Node.Alias.self
            }
        return DecodingError.typeMismatch(
            expected,
            .init(codingPath: codingPath, debugDescription: "Expected to decode \(expected) but found \(reality) instead.")
        )
    }

    /// The pairs of `mapping` with its merge keys expanded: merged pairs first, so that its own
    /// keys, looked up last-wins, override them (as Yams does).
    private static func flattened(_ mapping: Node.Mapping) -> [(key: Node, value: Node)] {
        var merged: [(key: Node, value: Node)] = []
        var own: [(key: Node, value: Node)] = []
        for pair in mapping {
            guard pair.key.tag.rawValue == Tag.Name.merge.rawValue else {
                own.append(pair)
                continue
            }
            switch pair.value {
            case .mapping(let inner):
                merged.append(contentsOf: flattened(inner))
            case .sequence(let sequence):
                for case .mapping(let inner) in sequence.reversed() { merged.append(contentsOf: flattened(inner)) }
            default:
                break
            }
        }
        return merged + own
    }

    /// A mapping's values by their keys' text, the last of a repeated key winning.
    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: NodeDecoder
        let values: [String: Node]
        let allKeys: [Key]

        init(decoder: NodeDecoder, pairs: [(key: Node, value: Node)]) {
            self.decoder = decoder
            var values: [String: Node] = [:]
            var keys: [Key] = []
            for (key, value) in pairs {
                guard let text = key.string else { continue }
                values[text] = value
                if let key = Key(stringValue: text) { keys.append(key) }
            }
            self.values = values
            self.allKeys = keys
        }

        var codingPath: [any CodingKey] { decoder.codingPath }

        func contains(_ key: Key) -> Bool { values[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool {
            try child(key).decodeNil()
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try child(key).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try child(key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try child(key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { try child(IndexKey(stringValue: "super")) }

        func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }

        private func child(_ key: any CodingKey) throws -> NodeDecoder {
            guard let node = values[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key,
                    .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\").")
                )
            }
            return decoder.child(node, key)
        }
    }

    /// A sequence's elements, in order.
    private struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: NodeDecoder
        let elements: [Node]
        var currentIndex = 0

        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        mutating func decodeNil() throws -> Bool {
            guard try current().decodeNil() else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let value = try current().decode(type)
            currentIndex += 1
            return value
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            let container = try current().container(keyedBy: type)
            currentIndex += 1
            return container
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let container = try current().unkeyedContainer()
            currentIndex += 1
            return container
        }

        mutating func superDecoder() throws -> any Decoder {
            let decoder = try current()
            currentIndex += 1
            return decoder
        }

        private func current() throws -> NodeDecoder {
            let key = IndexKey(intValue: currentIndex)
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    Any?.self,
                    .init(codingPath: codingPath + [key], debugDescription: "Unkeyed container is at end.")
                )
            }
            return decoder.child(elements[currentIndex], key)
        }
    }

    /// The key of a sequence's element.
    private struct IndexKey: CodingKey {
        let stringValue: String
        let intValue: Int?

        init(stringValue: String) {
            self.stringValue = stringValue
            intValue = nil
        }

        init(intValue: Int) {
            stringValue = "Index \(intValue)"
            self.intValue = intValue
        }
    }
}

extension NodeDecoder: SingleValueDecodingContainer {
    func decodeNil() -> Bool {
        node.null != nil
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard let constructible = type as? any ScalarConstructible.Type else {
            return try T(from: self)
        }
        guard case .scalar(let scalar) = node else {
            throw typeMismatch(type)
        }
        guard let value = constructible.construct(from: scalar) as? T else {
            throw DecodingError.typeMismatch(
                type,
                .init(codingPath: codingPath, debugDescription: "Expected to decode \(type) but found Scalar instead.")
            )
        }
        return value
    }
}
