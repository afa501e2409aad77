import Foundation

/// The state of one ``FastJSONDecoder/decode(_:from:)`` call: the `Decoder` handed to
/// `init(from:)`, and its single-value container.
///
/// One instance serves the whole document: decoding a nested value moves ``current`` and
/// ``path`` there and back, instead of creating a decoder per value.
final class JSONDecoding {
    let document: JSONDocument
    let options: FastJSONDecoder
    /// The tape index of the value being decoded.
    var current: Int
    /// The path of that value.
    var path: DecodingPath

    init(document: JSONDocument, options: FastJSONDecoder, current: Int = 0, path: DecodingPath = .root) {
        self.document = document
        self.options = options
        self.current = current
        self.path = path
    }

    /// Runs `body` with the decoder moved to the value at `index`.
    @inline(__always)
    func with<T>(_ index: Int, path: DecodingPath, _ body: () throws -> T) rethrows -> T {
        let (savedIndex, savedPath) = (current, self.path)
        current = index
        self.path = path
        defer {
            current = savedIndex
            self.path = savedPath
        }
        return try body()
    }

    // MARK: Values

    /// Decodes the value at `index` as `T`, with the strategies for dates, data, URLs and
    /// decimals, and fast paths for the common scalar types.
    func unwrap<T: Decodable>(_ index: Int, as type: T.Type, path: DecodingPath) throws -> T {
        // Each branch is taken only when `T` is exactly the type produced, so the casts hold.
        if T.self == String.self { return unsafeBitCast(try string(index, path: path), to: T.self) }
        if T.self == Int.self { return unsafeBitCast(try integer(index, as: Int.self, path: path), to: T.self) }
        if T.self == Double.self { return unsafeBitCast(try floatingPoint(index, as: Double.self, path: path), to: T.self) }
        if T.self == Bool.self { return unsafeBitCast(try bool(index, path: path), to: T.self) }
        if T.self == Date.self { return unsafeBitCast(try date(index, path: path), to: T.self) }
        if T.self == Data.self { return unsafeBitCast(try data(index, path: path), to: T.self) }
        if T.self == URL.self { return unsafeBitCast(try url(index, path: path), to: T.self) }
        if T.self == Decimal.self { return unsafeBitCast(try decimal(index, path: path), to: T.self) }
        if options.usesKeyConversion, let dictionary = T.self as? any StringKeyedDictionary.Type {
            // The key strategy does not apply to a dictionary's own keys.
            return try unsafeBitCast(dictionary.decodeEntries(self, index, path), to: T.self)
        }
        return try with(index, path: path) { try T(from: self) }
    }

    func bool(_ index: Int, path: DecodingPath) throws -> Bool {
        switch document.kind(index) {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, index, path)
        }
    }

    func string(_ index: Int, path: DecodingPath) throws -> String {
        guard document.kind(index) == .string else { throw notString(String.self, index, path) }
        return try corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: index) }
    }

    func integer<T: FixedWidthInteger>(_ index: Int, as type: T.Type, path: DecodingPath) throws -> T {
        guard document.kind(index) == .number else { throw notNumber(T.self, index, path) }
        return try corrupt(path) { () throws(JSONSyntaxError) in try document.integer(at: index, as: T.self) }
    }

    func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ index: Int, as type: T.Type, path: DecodingPath) throws -> T {
        switch document.kind(index) {
        case .number:
            return try corrupt(path) { () throws(JSONSyntaxError) in try document.floatingPoint(at: index, as: T.self) }
        case .string where document.flags(index) & JSONDocument.plain != 0:
            if case .convertFromString(let positive, let negative, let nan) = options.nonConformingFloatDecodingStrategy {
                let raw = document.contents(index)
                if raw.elementsEqual(positive.utf8) { return .infinity }
                if raw.elementsEqual(negative.utf8) { return -.infinity }
                if raw.elementsEqual(nan.utf8) { return .nan }
            }
            throw mismatch(T.self, index, path)
        default:
            throw notNumber(T.self, index, path)
        }
    }

    func decimal(_ index: Int, path: DecodingPath) throws -> Decimal {
        switch document.kind(index) {
        case .null: throw DecodingError.valueNotFound(Decimal.self, context(path, "Cannot get value of type Decimal -- found null value instead"))
        case .number: return try corrupt(path) { () throws(JSONSyntaxError) in try document.decimal(at: index) }
        default: throw DecodingError.typeMismatch(Decimal.self, context(path, ""))
        }
    }

    func url(_ index: Int, path: DecodingPath) throws -> URL {
        let text = try string(index, path: path)
        guard let url = URL(string: text) else { throw DecodingError.dataCorrupted(context(path, "Invalid URL string.")) }
        return url
    }

    func data(_ index: Int, path: DecodingPath) throws -> Data {
        try notNull(Data.self, index, path)
        switch options.dataDecodingStrategy {
        case .deferredToData:
            return try with(index, path: path) { try Data(from: self) }
        case .base64:
            guard document.kind(index) == .string else { throw mismatch(String.self, index, path) }
            guard let data = Data(base64Encoded: try string(index, path: path)) else {
                throw DecodingError.dataCorrupted(context(path, "Encountered Data is not valid Base64."))
            }
            return data
        case .custom(let decode):
            return try with(index, path: path) { try decode(self) }
        @unknown default:
            return try with(index, path: path) { try Data(from: self) }
        }
    }

    func date(_ index: Int, path: DecodingPath) throws -> Date {
        try notNull(Date.self, index, path)
        switch options.dateDecodingStrategy {
        case .deferredToDate:
            return try with(index, path: path) { try Date(from: self) }
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try floatingPoint(index, as: Double.self, path: path))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try floatingPoint(index, as: Double.self, path: path) / 1000)
        case .iso8601:
            let text = try string(index, path: path)
            guard let date = try? Date.ISO8601FormatStyle().parse(text) else {
                throw DecodingError.dataCorrupted(context(path, "Expected date string to be ISO8601-formatted."))
            }
            return date
        case .custom(let decode):
            return try with(index, path: path) { try decode(self) }
        @unknown default:
            return try with(index, path: path) { try Date(from: self) }
        }
    }

    // MARK: Errors

    func context(_ path: DecodingPath, _ description: String) -> DecodingError.Context {
        DecodingError.Context(codingPath: path.codingPath, debugDescription: description)
    }

    func mismatch(_ type: Any.Type, _ index: Int, _ path: DecodingPath) -> DecodingError {
        DecodingError.typeMismatch(type, context(path, "Expected to decode \(type) but found \(document.typeDescription(index)) instead."))
    }

    func notNull(_ type: Any.Type, _ index: Int, _ path: DecodingPath) throws {
        guard document.kind(index) == .null else { return }
        throw DecodingError.valueNotFound(type, context(path, "Cannot get value of type \(type) -- found null value instead"))
    }

    private func notString(_ type: Any.Type, _ index: Int, _ path: DecodingPath) -> any Error {
        document.kind(index) == .null
            ? DecodingError.valueNotFound(type, context(path, "Cannot get value of type \(type) -- found null value instead"))
            : mismatch(type, index, path)
    }

    private func notNumber(_ type: Any.Type, _ index: Int, _ path: DecodingPath) -> any Error {
        notString(type, index, path)
    }

    /// Runs a read of the document, turning a syntax error into `dataCorrupted` at `path`.
    @inline(__always)
    func corrupt<T>(_ path: DecodingPath, _ read: () throws(JSONSyntaxError) -> T) throws -> T {
        do {
            return try read()
        } catch {
            throw Self.corrupted(error, path: path.codingPath)
        }
    }

    static func corrupted(_ error: JSONSyntaxError, path: [any CodingKey]) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: path,
                debugDescription: "The given data was not valid JSON: \(error.reason) at byte \(error.offset).",
                underlyingError: error
            )
        )
    }
}

/// `[String: Value]`, whose keys a key strategy leaves as they are.
protocol StringKeyedDictionary {
    static func decodeEntries(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPath) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    static func decodeEntries(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPath) throws -> Self {
        let document = decoding.document
        try decoding.notNull([String: Any].self, index, path)
        guard document.kind(index) == .object else { throw decoding.mismatch([String: Any].self, index, path) }
        var result: [String: Value] = [:]
        result.reserveCapacity(document.count(index))
        let parent = path.node
        var member = index + 2
        let end = document.next(index)
        while member < end {
            let key = try decoding.corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: member) }
            let value = member + 2
            // Every value is decoded, and the first of duplicate keys kept, as Foundation does.
            let decoded = try decoding.unwrap(value, as: Value.self, path: DecodingPath(parent: parent, last: .key(StringCodingKey(key))))
            if result[key] == nil { result[key] = decoded }
            member = document.next(value)
        }
        return result
    }
}
