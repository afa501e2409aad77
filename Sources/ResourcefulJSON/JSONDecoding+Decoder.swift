extension JSONDecoding: Decoder {
    var codingPath: [any CodingKey] { DecodingPathNode.codingPath(path) }

    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try keyedContainer(type, index: current, path: path)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try JSONUnkeyedContainer(decoding: self, index: current, path: path)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    /// A decoder of its own for the value at `index`, for `superDecoder()`.
    func detached(_ index: Int, path: DecodingPathNode?) -> JSONDecoding {
        JSONDecoding(document: document, options: options, current: index, path: path, snakeCaseMemo: snakeCaseMemo)
    }

    /// Reads the current value with `read`, or throws a `DecodingError` for `type` at its path.
    @inline(__always)
    private func read<T>(_ type: T.Type, _ read: (Int) throws(ValueFailure) -> T) throws -> T {
        do throws(ValueFailure) {
            return try read(current)
        } catch {
            throw failure(error, type, at: path)
        }
    }
}

extension JSONDecoding: SingleValueDecodingContainer {
    func decodeNil() -> Bool { document.kind(current) == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try read(type) { i throws(ValueFailure) in try readBool(i) } }
    func decode(_ type: String.Type) throws -> String { try read(type) { i throws(ValueFailure) in try readString(i) } }
    func decode(_ type: Double.Type) throws -> Double { try read(type) { i throws(ValueFailure) in try readFloatingPoint(i, as: type) } }
    func decode(_ type: Float.Type) throws -> Float { try read(type) { i throws(ValueFailure) in try readFloatingPoint(i, as: type) } }
    func decode(_ type: Int.Type) throws -> Int { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: Int8.Type) throws -> Int8 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: Int16.Type) throws -> Int16 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: Int32.Type) throws -> Int32 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: Int64.Type) throws -> Int64 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: UInt.Type) throws -> UInt { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try read(type) { i throws(ValueFailure) in try readInteger(i, as: type) } }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(current, as: type) { path } }
}
