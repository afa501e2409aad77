public import Foundation

/// A JSON decoder that decodes `Decodable` types several times faster than Foundation's
/// `JSONDecoder`, with the same results and the same errors. `Resourceful` reads response bodies
/// with it by default (it is a `ResponseDecoder` there).
///
/// It takes Foundation's strategies, accepts and refuses the same documents (RFC 8259 JSON with
/// trailing commas; string and number contents checked only when they are decoded), decodes
/// numbers as exactly (`2.0` is an `Int`, big integers keep every digit, overflow is an error),
/// and throws the same `DecodingError` cases with coding paths. Where Foundation reports a bad
/// string or number as invalid JSON at the top level, this decoder gives the path of the value.
/// Under `.iso8601`, RFC 3339 timestamps are read from their bytes into the very `Date`
/// Foundation's `Date.ISO8601FormatStyle` gives, and any other string is handed to it.
///
/// ```swift
/// var dependencies = try await APIDependencies.live(environment: "production")
/// dependencies.responseDecoder = FastJSONDecoder(coding: dependencies.apiConfig.coding)
/// ```
///
/// Documents in UTF-16 or UTF-32 are handed to `JSONDecoder`.
public struct FastJSONDecoder: Sendable {
    /// How JSON keys map to coding keys.
    public var keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy
    /// How dates are read.
    public var dateDecodingStrategy: JSONDecoder.DateDecodingStrategy
    /// How `Data` is read.
    public var dataDecodingStrategy: JSONDecoder.DataDecodingStrategy
    /// How strings standing for infinity and NaN are read.
    public var nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy
    /// Values handed to `init(from:)` through `Decoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a decoder; the defaults are `JSONDecoder`'s.
    public init(
        keyDecodingStrategy: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys,
        dateDecodingStrategy: JSONDecoder.DateDecodingStrategy = .deferredToDate,
        dataDecodingStrategy: JSONDecoder.DataDecodingStrategy = .base64,
        nonConformingFloatDecodingStrategy: JSONDecoder.NonConformingFloatDecodingStrategy = .throw,
        userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) {
        self.keyDecodingStrategy = keyDecodingStrategy
        self.dateDecodingStrategy = dateDecodingStrategy
        self.dataDecodingStrategy = dataDecodingStrategy
        self.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        self.userInfo = userInfo
    }

    /// Decodes a value of `type` from the JSON document in `data`.
    ///
    /// - Throws: `DecodingError`, as `JSONDecoder` would.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        // The document reads `data`'s bytes where they are (a transport's buffer, for one): no
        // copy unless something outlives this call holding the document.
        try data.withUnsafeBytes { (raw) throws -> T in
            guard Self.isUTF8(raw) else { return try foundationDecoder.decode(type, from: data) }
            var document = JSONDocument(borrowing: raw)
            defer {
                // `raw` is valid only inside this closure: a decoder that `init(from:)` kept (the
                // only other holder a document can have) gets a copy of the bytes first.
                if !isKnownUniquelyReferenced(&document) { document.ownBytes() }
            }
            try Self.scan(document)
            document.finish()
            return try JSONDecoding(document: document, options: self).unwrap(0, as: type) { nil }
        }
    }

    /// Fills `document`'s tape; the scanner, which holds the document, is gone on return.
    private static func scan(_ document: JSONDocument) throws {
        var scanner = JSONScanner(document: document)
        do throws(JSONSyntaxError) {
            try scanner.scanIndexed()
        } catch {
            throw JSONDecoding.corrupted(error, path: [])
        }
    }

    /// Whether `Data` starts like UTF-8 (with or without a byte order mark) rather than UTF-16 or
    /// UTF-32, told as RFC 4627 §3 and Foundation tell it.
    static func isUTF8(_ raw: UnsafeRawBufferPointer) -> Bool {
        let bytes = (0..<4).map { $0 < raw.count ? Int(raw[$0]) : -1 }
        switch (bytes[0], bytes[1], bytes[2], bytes[3]) {
        case (0, 0, 0xFE, 0xFF), (0xFE, 0xFF, _, _), (0xFF, 0xFE, _, _): return false
        case (0, 0, 0, 1...), (0, 1..., 0, 1...), (1..., 0, 0, 0), (1..., 0, 1..., 0): return false
        case (0, 1..., -1, -1), (1..., 0, -1, -1): return false
        default: return true
        }
    }

    /// Foundation's decoder with these strategies, for documents that are not UTF-8.
    private var foundationDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = keyDecodingStrategy
        decoder.dateDecodingStrategy = dateDecodingStrategy
        decoder.dataDecodingStrategy = dataDecodingStrategy
        decoder.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        decoder.userInfo = userInfo
        return decoder
    }
}
