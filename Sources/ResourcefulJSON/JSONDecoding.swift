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
    var path: DecodingPathNode?
    /// What `unwrap` found each type it met to be, so that it looks each conformance up once
    /// per document rather than once per value.
    ///
    /// This cache and ``containerMakers`` are read for every nested value and object, and a
    /// class's stored property is checked for exclusive access at run time on each read (tens of
    /// instructions). The check is left out: a decoding is used by one thread, and no access to
    /// either overlaps another (each is read, then appended to, never while being read).
    @exclusivity(unchecked) private var knownTypes: [KnownType] = []
    /// A ``KeyedContainerMaker`` for each key type met, looked up by the type's identifier.
    @exclusivity(unchecked) var containerMakers: [(ObjectIdentifier, AnyObject)] = []
    /// The key strategy, read once.
    let snakeCaseKeys: Bool
    let customKeys: Bool
    let convertsKeys: Bool
    /// Under `convertFromSnakeCase`, the keys found to convert to each name.
    let snakeCaseMemo: SnakeCaseMemo?

    /// A decoding of `document` at the value at `current`; a decoding made for part of another
    /// one's document (`superDecoder`) shares its `snakeCaseMemo`.
    init(document: JSONDocument, options: FastJSONDecoder, current: Int = 0, path: DecodingPathNode? = nil, snakeCaseMemo: SnakeCaseMemo? = nil) {
        self.document = document
        self.options = options
        self.current = current
        self.path = path
        switch options.keyDecodingStrategy {
        case .useDefaultKeys: (snakeCaseKeys, customKeys) = (false, false)
        case .convertFromSnakeCase: (snakeCaseKeys, customKeys) = (true, false)
        default: (snakeCaseKeys, customKeys) = (false, true)
        }
        convertsKeys = snakeCaseKeys || customKeys
        self.snakeCaseMemo = snakeCaseKeys ? snakeCaseMemo ?? SnakeCaseMemo() : nil
    }

    /// Runs `body` with the decoder moved to the value at `index`.
    @inline(__always)
    func with<T>(_ index: Int, path: DecodingPathNode?, _ body: () throws -> T) rethrows -> T {
        let (savedIndex, savedPath) = (current, self.path)
        current = index
        self.path = path
        defer {
            current = savedIndex
            self.path = savedPath
        }
        return try body()
    }

    // MARK: Scalars

    @inline(__always)
    func readBool(_ index: Int) throws(ValueFailure) -> Bool {
        switch document.kind(index) {
        case .true: return true
        case .false: return false
        // Foundation reports a null where a Bool is expected as a type mismatch.
        default: throw .mismatch(found: index)
        }
    }

    @inline(__always)
    func readString(_ index: Int) throws(ValueFailure) -> String {
        switch document.kind(index) {
        case .string:
            do {
                return try document.string(at: index)
            } catch {
                throw .corrupt(error)
            }
        case .null: throw .null
        default: throw .mismatch(found: index)
        }
    }

    @inline(__always)
    func readInteger<T: FixedWidthInteger>(_ index: Int, as type: T.Type) throws(ValueFailure) -> T {
        switch document.kind(index) {
        case .number:
            do {
                return try document.integer(at: index, as: T.self)
            } catch {
                throw .corrupt(error)
            }
        case .null: throw .null
        default: throw .mismatch(found: index)
        }
    }

    @inline(__always)
    func readFloatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ index: Int, as type: T.Type) throws(ValueFailure) -> T {
        switch document.kind(index) {
        case .number:
            do {
                return try document.floatingPoint(at: index, as: T.self)
            } catch {
                throw .corrupt(error)
            }
        case .string where document.flags(index) & JSONDocument.plain != 0:
            if case .convertFromString(let positive, let negative, let nan) = options.nonConformingFloatDecodingStrategy {
                let raw = document.contents(index)
                if raw.elementsEqual(positive.utf8) { return .infinity }
                if raw.elementsEqual(negative.utf8) { return -.infinity }
                if raw.elementsEqual(nan.utf8) { return .nan }
            }
            throw .mismatch(found: index)
        case .null: throw .null
        default: throw .mismatch(found: index)
        }
    }

    /// The `DecodingError` for a failed read of a `type` at `path`.
    func failure(_ failure: ValueFailure, _ type: Any.Type, at path: DecodingPathNode?) -> DecodingError {
        switch failure {
        case .mismatch(let index):
            DecodingError.typeMismatch(type, context(path, "Expected to decode \(type) but found \(document.typeDescription(index)) instead."))
        case .null:
            DecodingError.valueNotFound(type, context(path, "Cannot get value of type \(type) -- found null value instead"))
        case .corrupt(let error):
            Self.corrupted(error, path: DecodingPathNode.codingPath(path))
        }
    }

    // MARK: Any value

    /// Decodes the value at `index` as `T`: the common scalars directly, dates, data, URLs and
    /// decimals with their strategies, anything else through `T.init(from:)`. `path` is asked for
    /// only when a path is needed.
    func unwrap<T: Decodable>(_ index: Int, as type: T.Type, path: () -> DecodingPathNode?) throws -> T {
        // Each branch is taken only when `T` is exactly the type produced, so the casts hold.
        do throws(ValueFailure) {
            if T.self == String.self { return unsafeBitCast(try readString(index), to: T.self) }
            if T.self == Int.self { return unsafeBitCast(try readInteger(index, as: Int.self), to: T.self) }
            if T.self == Double.self { return unsafeBitCast(try readFloatingPoint(index, as: Double.self), to: T.self) }
            if T.self == Bool.self { return unsafeBitCast(try readBool(index), to: T.self) }
        } catch {
            throw failure(error, T.self, at: path())
        }
        // A date in the common RFC 3339 shape needs no path: none is made for it.
        if T.self == Date.self { return unsafeBitCast(try directDate(index) ?? date(index, path: path()), to: T.self) }
        // A URL needs its path only for an error: none is made for one that parses.
        if T.self == URL.self { return unsafeBitCast(try url(index, path: path), to: T.self) }
        let node = path()
        if T.self == Data.self { return unsafeBitCast(try data(index, path: node), to: T.self) }
        if T.self == Decimal.self { return unsafeBitCast(try decimal(index, path: node), to: T.self) }
        // A conformance lookup costs far more than a search of the few types a model has.
        let known = knownType(T.self)
        if let array = known.array {
            return try unsafeBitCast(array.decodeElements(self, index, node), to: T.self)
        }
        if let dictionary = known.dictionary {
            // The key strategy does not apply to a dictionary's own keys (Foundation decodes such
            // a dictionary the same way under every strategy).
            return try unsafeBitCast(dictionary.decodeEntries(self, index, node), to: T.self)
        }
        return try with(index, path: node) { try T(from: self) }
    }

    /// Whether `type` is an array or a dictionary with string keys, looked up once per document.
    @inline(__always)
    private func knownType<T>(_ type: T.Type) -> KnownType {
        let id = ObjectIdentifier(type)
        for known in knownTypes where known.id == id { return known }
        let known = KnownType(
            id: id,
            array: type as? any DecodableArray.Type,
            dictionary: type as? any StringKeyedDictionary.Type
        )
        if knownTypes.count < 64 { knownTypes.append(known) }
        return known
    }

    func string(_ index: Int, path: DecodingPathNode?) throws -> String {
        do throws(ValueFailure) {
            return try readString(index)
        } catch {
            throw failure(error, String.self, at: path)
        }
    }

    func decimal(_ index: Int, path: DecodingPathNode?) throws -> Decimal {
        switch document.kind(index) {
        case .null:
            throw failure(.null, Decimal.self, at: path)
        case .number:
            do {
                return try document.decimal(at: index)
            } catch {
                throw Self.corrupted(error, path: DecodingPathNode.codingPath(path))
            }
        default:
            throw DecodingError.typeMismatch(Decimal.self, context(path, ""))
        }
    }

    func url(_ index: Int, path: () -> DecodingPathNode?) throws -> URL {
        let text: String
        do throws(ValueFailure) {
            text = try readString(index)
        } catch {
            // Foundation names a null by the URL, anything else by the string it wanted.
            if case .null = error { throw failure(error, URL.self, at: path()) }
            throw failure(error, String.self, at: path())
        }
        guard let url = URL(string: text) else { throw DecodingError.dataCorrupted(context(path(), "Invalid URL string.")) }
        return url
    }

    func data(_ index: Int, path: DecodingPathNode?) throws -> Data {
        if document.kind(index) == .null { throw failure(.null, Data.self, at: path) }
        switch options.dataDecodingStrategy {
        case .deferredToData:
            return try with(index, path: path) { try Data(from: self) }
        case .base64:
            guard document.kind(index) == .string else { throw failure(.mismatch(found: index), String.self, at: path) }
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

    func date(_ index: Int, path: DecodingPathNode?) throws -> Date {
        if document.kind(index) == .null { throw failure(.null, Date.self, at: path) }
        switch options.dateDecodingStrategy {
        case .deferredToDate:
            return try with(index, path: path) { try Date(from: self) }
        case .secondsSince1970, .millisecondsSince1970:
            let seconds: Double
            do throws(ValueFailure) {
                seconds = try readFloatingPoint(index, as: Double.self)
            } catch {
                throw failure(error, Double.self, at: path)
            }
            if case .millisecondsSince1970 = options.dateDecodingStrategy { return Date(timeIntervalSince1970: seconds / 1000) }
            return Date(timeIntervalSince1970: seconds)
        case .iso8601:
            // The common shape was read by `directDate`; Foundation reads the rest.
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

    /// Under `.iso8601`, the value at `index` read directly as an RFC 3339 timestamp when it is a
    /// plain string in the common shape (see ``RFC3339Date``); `nil` for everything ``date(_:path:)``
    /// must read.
    @inline(__always)
    private func directDate(_ index: Int) -> Date? {
        guard case .iso8601 = options.dateDecodingStrategy, document.kind(index) == .string,
              document.flags(index) & JSONDocument.plain != 0
        else { return nil }
        return RFC3339Date.parse(document.contents(index))
    }

    /// Throws, with Foundation's errors, unless the value at `index` is an array.
    func requireArray(_ index: Int, path: DecodingPathNode?) throws {
        switch document.kind(index) {
        case .array: return
        case .null:
            throw DecodingError.valueNotFound([Any].self, context(path, "Cannot get unkeyed decoding container -- found null value instead"))
        default:
            throw DecodingError.typeMismatch([Any].self, context(path, "Expected to decode \([Any].self) but found \(document.typeDescription(index)) instead."))
        }
    }

    // MARK: Errors

    func context(_ path: DecodingPathNode?, _ description: String) -> DecodingError.Context {
        DecodingError.Context(codingPath: DecodingPathNode.codingPath(path), debugDescription: description)
    }

    /// Runs a read of the document, turning a syntax error into `dataCorrupted` at `path`.
    @inline(__always)
    func corrupt<T>(_ path: DecodingPathNode?, _ read: () throws(JSONSyntaxError) -> T) throws -> T {
        do {
            return try read()
        } catch {
            throw Self.corrupted(error, path: DecodingPathNode.codingPath(path))
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

/// A type `unwrap` met: an array (decoded by ``DecodableArray``), a dictionary with string keys
/// (``StringKeyedDictionary``: one pass over its members, where `Dictionary.init(from:)` would
/// look each key up again, and no key strategy), or neither.
struct KnownType {
    let id: ObjectIdentifier
    let array: (any DecodableArray.Type)?
    let dictionary: (any StringKeyedDictionary.Type)?
}

/// `[String: Value]`, whose keys a key strategy leaves as they are.
protocol StringKeyedDictionary {
    static func decodeEntries(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPathNode?) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    static func decodeEntries(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPathNode?) throws -> Self {
        let document = decoding.document
        switch document.kind(index) {
        case .object: break
        case .null: throw decoding.failure(.null, [String: Any].self, at: path)
        default: throw decoding.failure(.mismatch(found: index), [String: Any].self, at: path)
        }
        if document.count(index) == 0 { return [:] }
        // The common values through code specialized for them: generic dictionary code looks
        // the dictionary's metadata up on each operation. Each branch is taken only when `Value`
        // is exactly that type, so the casts hold.
        if Value.self == String.self { return unsafeBitCast(try entries(decoding, index, path, as: String.self), to: Self.self) }
        if Value.self == String?.self { return unsafeBitCast(try entries(decoding, index, path, as: String?.self), to: Self.self) }
        if Value.self == Int.self { return unsafeBitCast(try entries(decoding, index, path, as: Int.self), to: Self.self) }
        if Value.self == Double.self { return unsafeBitCast(try entries(decoding, index, path, as: Double.self), to: Self.self) }
        if Value.self == Bool.self { return unsafeBitCast(try entries(decoding, index, path, as: Bool.self), to: Self.self) }
        return try entries(decoding, index, path, as: Value.self)
    }

    /// The entries of the object at tape `index` (not empty) with values of type `V`.
    @inline(__always)
    private static func entries<V: Decodable>(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPathNode?, as type: V.Type) throws -> [String: V] {
        let document = decoding.document
        var result: [String: V] = [:]
        result.reserveCapacity(document.count(index))
        var member = index + 2
        let end = document.next(index)
        while member < end {
            let key = try decoding.corrupt(path) { () throws(JSONSyntaxError) in try document.string(at: member) }
            // The first of duplicate keys is kept, as Foundation does. Under a strategy that
            // converts keys Foundation decodes every value; under the default keys only the
            // first of each key (as `Dictionary.init(from:)` does, whose coding keys also give
            // a number key its `intValue`).
            if decoding.convertsKeys {
                let decoded = try decoding.unwrap(member + 2, as: V.self) { DecodingPathNode(parent: path, step: .key(StringCodingKey(key))) }
                if result[key] == nil { result[key] = decoded }
            } else if result[key] == nil {
                result[key] = try decoding.unwrap(member + 2, as: V.self) { DecodingPathNode(parent: path, step: .key(DictionaryCodingKey(key))) }
            }
            member = document.next(member + 2)
        }
        return result
    }
}

/// `[Element]`, decoded straight from the tape into an array of the right capacity, with the
/// errors and paths of `Array.init(from:)`.
protocol DecodableArray {
    static func decodeElements(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPathNode?) throws -> Self
}

extension Array: DecodableArray where Element: Decodable {
    static func decodeElements(_ decoding: JSONDecoding, _ index: Int, _ path: DecodingPathNode?) throws -> Self {
        let document = decoding.document
        try decoding.requireArray(index, path: path)
        let count = document.count(index)
        // The common scalar elements, in loops of their own: no generic code per element.
        // Each branch is taken only when `Element` is exactly that type, so the casts hold.
        if Element.self == String.self {
            return unsafeBitCast(try scalars(decoding, index, path) { d, i throws(ValueFailure) in try d.readString(i) }, to: Self.self)
        }
        if Element.self == Int.self {
            return unsafeBitCast(try scalars(decoding, index, path) { d, i throws(ValueFailure) in try d.readInteger(i, as: Int.self) }, to: Self.self)
        }
        if Element.self == Double.self {
            return unsafeBitCast(try scalars(decoding, index, path) { d, i throws(ValueFailure) in try d.readFloatingPoint(i, as: Double.self) }, to: Self.self)
        }
        if Element.self == Bool.self {
            return unsafeBitCast(try scalars(decoding, index, path) { d, i throws(ValueFailure) in try d.readBool(i) }, to: Self.self)
        }
        var result: [Element] = []
        result.reserveCapacity(count)
        var position = index + 2
        for offset in 0..<count {
            result.append(try decoding.unwrap(position, as: Element.self) { DecodingPathNode(parent: path, step: .index(offset)) })
            position = document.next(position)
        }
        return result
    }
}

/// The elements of the array at tape `index`, each read with `read`.
@inline(__always)
private func scalars<T>(
    _ decoding: JSONDecoding, _ index: Int, _ path: DecodingPathNode?, _ read: (JSONDecoding, Int) throws(ValueFailure) -> T
) throws -> [T] {
    let document = decoding.document
    let count = document.count(index)
    var result: [T] = []
    result.reserveCapacity(count)
    var position = index + 2
    for offset in 0..<count {
        do throws(ValueFailure) {
            result.append(try read(decoding, position))
        } catch {
            throw decoding.failure(error, T.self, at: DecodingPathNode(parent: path, step: .index(offset)))
        }
        position = document.next(position)
    }
    return result
}
