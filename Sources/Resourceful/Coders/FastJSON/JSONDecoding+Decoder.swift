extension JSONDecoding: Decoder {
    var codingPath: [any CodingKey] { path.codingPath }

    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try KeyedDecodingContainer(JSONKeyedContainer<Key>(decoding: self, index: current, path: path))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try JSONUnkeyedContainer(decoding: self, index: current, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    /// A decoder of its own for the value at `index`, for `superDecoder()`.
    func detached(_ index: Int, path: DecodingPath) -> JSONDecoding {
        JSONDecoding(document: document, options: options, current: index, path: path)
    }
}

extension JSONDecoding: SingleValueDecodingContainer {
    func decodeNil() -> Bool { document.kind(current) == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try bool(current, path: path) }
    func decode(_ type: String.Type) throws -> String { try string(current, path: path) }
    func decode(_ type: Double.Type) throws -> Double { try floatingPoint(current, as: type, path: path) }
    func decode(_ type: Float.Type) throws -> Float { try floatingPoint(current, as: type, path: path) }
    func decode(_ type: Int.Type) throws -> Int { try integer(current, as: type, path: path) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(current, as: type, path: path) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(current, as: type, path: path) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(current, as: type, path: path) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(current, as: type, path: path) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(current, as: type, path: path) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(current, as: type, path: path) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(current, as: type, path: path) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(current, as: type, path: path) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(current, as: type, path: path) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(current, as: type, path: path) }
}
