import Foundation

/// Writes `Encodable` parameters as flat, bracketed name–value pairs, the form used for query
/// strings and form bodies.
///
/// The form:
/// - a field is `name=value`; a nested object's fields are `parent[child]=value`;
/// - arrays as ``ArrayFormat`` says: by default (``ArrayFormat/brackets``) an array of plain values
///   repeats `name[]=value` in order and an array of objects or arrays numbers its elements,
///   `name[0][field]=value`;
/// - `nil` and empty arrays or objects send nothing; `true`/`false` are written as such;
/// - dates follow ``APIConfig/Coding-swift.struct/dateStrategy`` (ISO 8601 by default), keys follow
///   ``APIConfig/Coding-swift.struct/keyStrategy``;
/// - names and values are percent-encoded (only RFC 3986 unreserved characters stay as they are).
struct FormEncoder: Sendable {
    var keyStrategy: APIConfig.KeyStrategy = .useDefaultKeys
    var dateStrategy: APIConfig.DateStrategy = .iso8601
    var arrayFormat: ArrayFormat = .brackets

    /// Flattens `value` into fields, in the order its `encode(to:)` writes them, arrays written as
    /// `arrayFormat` says (the encoder's own when `nil`).
    func fields(of value: some Encodable, arrayFormat: ArrayFormat? = nil) throws -> [FormField] {
        let root = FormNode()
        let encoder = NodeEncoder(node: root, codingPath: [], options: self)
        try encoder.encodeValue(value, into: root, codingPath: [])
        switch root.kind {
        case .unset, .null, .object: break
        case .scalar, .file, .array: throw FormEncodingError.topLevelNotKeyed
        }
        var fields: [FormField] = []
        try root.flatten(prefix: nil, format: arrayFormat ?? self.arrayFormat, into: &fields)
        return fields
    }
}

/// A node of the tree an encoding builds before it is flattened.
final class FormNode {
    enum Kind {
        case unset, null, scalar(String), file(MultipartFile), object, array
    }

    var kind: Kind = .unset
    var children: [(key: String, node: FormNode)] = []

    func child(_ key: String) -> FormNode {
        let node = FormNode()
        children.append((key, node))
        return node
    }

    var isContainer: Bool {
        switch kind {
        case .object, .array: true
        default: false
        }
    }

    func flatten(prefix: String?, format: ArrayFormat, into fields: inout [FormField]) throws(FormEncodingError) {
        switch kind {
        case .unset, .null:
            return
        case .scalar(let text):
            fields.append(FormField(name: prefix ?? "", value: .text(text)))
        case .file(let file):
            fields.append(FormField(name: prefix ?? "", value: .file(file)))
        case .object:
            for (key, node) in children {
                try node.flatten(prefix: prefix.map { "\($0)[\(key)]" } ?? key, format: format, into: &fields)
            }
        case .array:
            let parent = prefix ?? ""
            if format == .repeated || format == .comma, children.contains(where: { $0.node.isContainer }) {
                throw .nestedArrayUnsupported(field: parent, format: format)
            }
            switch format {
            case .brackets, .indices:
                for (index, (_, node)) in children.enumerated() {
                    let numbered = format == .indices || node.isContainer
                    try node.flatten(prefix: numbered ? "\(parent)[\(index)]" : "\(parent)[]", format: format, into: &fields)
                }
            case .repeated:
                for (_, node) in children { try node.flatten(prefix: parent, format: format, into: &fields) }
            case .comma:
                var values: [String] = []
                for (_, node) in children {
                    switch node.kind {
                    case .scalar(let text): values.append(text)
                    case .file: throw .fileOutsideMultipart(field: parent)
                    default: continue
                    }
                }
                if !values.isEmpty { fields.append(FormField(name: parent, value: .list(values))) }
            }
        }
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(_ index: Int) {
        stringValue = String(index)
        intValue = index
    }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.init(intValue) }
}

private struct NodeEncoder: Encoder {
    let node: FormNode
    let codingPath: [any CodingKey]
    let options: FormEncoder
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(node: FormNode, codingPath: [any CodingKey], options: FormEncoder) {
        self.node = node
        self.codingPath = codingPath
        self.options = options
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .unset = node.kind { node.kind = .object }
        return KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unset = node.kind { node.kind = .array }
        return UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    func name(for key: any CodingKey) -> String {
        switch options.keyStrategy {
        case .useDefaultKeys: key.stringValue
        case .snakeCase: SnakeCase.snakeCased(key.stringValue)
        }
    }

    /// Encodes `value` into `target`, handling the types that have a form of their own here.
    ///
    /// The types are told apart by comparing metatypes, which costs far less than casting every
    /// value; an optional reaches here unwrapped, through its own `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T, into target: FormNode, codingPath: [any CodingKey]) throws {
        if T.self == MultipartFile.self, let file = value as? MultipartFile {
            target.kind = .file(file)
        } else if T.self == Date.self, let date = value as? Date {
            target.kind = .scalar(options.dateStrategy.formString(date))
        } else if T.self == URL.self, let url = value as? URL {
            target.kind = .scalar(url.absoluteString)
        } else if T.self == Decimal.self, let decimal = value as? Decimal {
            target.kind = .scalar(decimal.description)
        } else if T.self == Data.self, let data = value as? Data {
            target.kind = .scalar(data.base64EncodedString())
        } else {
            try value.encode(to: NodeEncoder(node: target, codingPath: codingPath, options: options))
        }
    }

    func encodeFloat<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F, into target: FormNode) throws {
        guard value.isFinite else {
            throw FormEncodingError.nonFiniteNumber(field: codingPath.map(\.stringValue).joined(separator: "."))
        }
        target.kind = .scalar(value.description)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    private func child(_ key: Key) -> FormNode { encoder.node.child(encoder.name(for: key)) }

    mutating func encodeNil(forKey key: Key) throws { child(key).kind = .null }
    mutating func encode(_ value: Bool, forKey key: Key) throws { child(key).kind = .scalar(value ? "true" : "false") }
    mutating func encode(_ value: String, forKey key: Key) throws { child(key).kind = .scalar(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try NodeEncoder(node: encoder.node, codingPath: codingPath + [key], options: encoder.options)
            .encodeFloat(value, into: child(key))
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try NodeEncoder(node: encoder.node, codingPath: codingPath + [key], options: encoder.options)
            .encodeFloat(value, into: child(key))
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { child(key).kind = .scalar(String(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.encodeValue(value, into: child(key), codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type,
        forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: child(key), codingPath: codingPath + [key], options: encoder.options)
            .container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: child(key), codingPath: codingPath + [key], options: encoder.options).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        NodeEncoder(node: encoder.node.child("super"), codingPath: codingPath, options: encoder.options)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: child(key), codingPath: codingPath + [key], options: encoder.options)
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }
    var count: Int { encoder.node.children.count }

    private func next() -> (FormNode, [any CodingKey]) {
        let key = IndexKey(count)
        return (encoder.node.child(key.stringValue), codingPath + [key])
    }

    mutating func encodeNil() throws { next().0.kind = .null }
    mutating func encode(_ value: Bool) throws { next().0.kind = .scalar(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { next().0.kind = .scalar(value) }
    mutating func encode(_ value: Int) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int8) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int16) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int32) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int64) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt8) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt16) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt32) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt64) throws { next().0.kind = .scalar(String(value)) }
    mutating func encode(_ value: Double) throws {
        let (node, path) = next()
        try NodeEncoder(node: node, codingPath: path, options: encoder.options).encodeFloat(value, into: node)
    }
    mutating func encode(_ value: Float) throws {
        let (node, path) = next()
        try NodeEncoder(node: node, codingPath: path, options: encoder.options).encodeFloat(value, into: node)
    }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let (node, path) = next()
        try encoder.encodeValue(value, into: node, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (node, path) = next()
        return NodeEncoder(node: node, codingPath: path, options: encoder.options).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (node, path) = next()
        return NodeEncoder(node: node, codingPath: path, options: encoder.options).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let (node, path) = next()
        return NodeEncoder(node: node, codingPath: path, options: encoder.options)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let encoder: NodeEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws { encoder.node.kind = .null }
    mutating func encode(_ value: Bool) throws { encoder.node.kind = .scalar(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { encoder.node.kind = .scalar(value) }
    mutating func encode(_ value: Double) throws { try encoder.encodeFloat(value, into: encoder.node) }
    mutating func encode(_ value: Float) throws { try encoder.encodeFloat(value, into: encoder.node) }
    mutating func encode(_ value: Int) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int8) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int16) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int32) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: Int64) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.node.kind = .scalar(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeValue(value, into: encoder.node, codingPath: codingPath)
    }
}
