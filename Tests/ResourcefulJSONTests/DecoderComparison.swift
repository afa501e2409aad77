import Foundation
import ResourcefulJSON
import Testing

/// What decoding a document came to, in a form two decoders' results can be compared in.
enum DecodeOutcome<T: Equatable>: Equatable, CustomStringConvertible {
    case value(T)
    case failure(kind: String, path: [String])

    var description: String {
        switch self {
        case .value(let value): "value \(String(reflecting: value))"
        case .failure(let kind, let path): "\(kind) at \(path)"
        }
    }

    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}

/// Decodes documents with `JSONDecoder` and `FastJSONDecoder` set up alike, and compares.
struct DecoderComparison {
    var keys: JSONDecoder.KeyDecodingStrategy = .useDefaultKeys
    var dates: JSONDecoder.DateDecodingStrategy = .deferredToDate
    var data: JSONDecoder.DataDecodingStrategy = .base64
    var floats: JSONDecoder.NonConformingFloatDecodingStrategy = .throw

    var foundation: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = keys
        decoder.dateDecodingStrategy = dates
        decoder.dataDecodingStrategy = data
        decoder.nonConformingFloatDecodingStrategy = floats
        return decoder
    }

    var fast: FastJSONDecoder {
        FastJSONDecoder(keyDecodingStrategy: keys, dateDecodingStrategy: dates, dataDecodingStrategy: data, nonConformingFloatDecodingStrategy: floats)
    }

    static func outcome<T: Decodable & Equatable>(_ decode: () throws -> T) -> DecodeOutcome<T> {
        do {
            return .value(try decode())
        } catch let error as DecodingError {
            switch error {
            case .typeMismatch(_, let context): return .failure(kind: "typeMismatch", path: Self.path(context.codingPath))
            case .valueNotFound(_, let context): return .failure(kind: "valueNotFound", path: Self.path(context.codingPath))
            case .keyNotFound(let key, let context): return .failure(kind: "keyNotFound", path: Self.path(context.codingPath + [key]))
            case .dataCorrupted(let context): return .failure(kind: "dataCorrupted", path: Self.path(context.codingPath))
            @unknown default: return .failure(kind: "unknown", path: [])
            }
        } catch {
            return .failure(kind: "other", path: [])
        }
    }

    static func path(_ keys: [any CodingKey]) -> [String] {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
    }

    /// Whether the two outcomes agree: equal values, or the same kind of error at the same path.
    /// Foundation reports a malformed string or number as invalid JSON without a path (and a bad
    /// ISO 8601 date at its container's path), where the fast decoder names the value: there the
    /// fast decoder's path must extend Foundation's.
    static func agree<T>(_ reference: DecodeOutcome<T>, _ candidate: DecodeOutcome<T>) -> Bool {
        switch (reference, candidate) {
        case (.value(let lhs), .value(let rhs)):
            return lhs == rhs
        case (.failure("dataCorrupted", let lhs), .failure("dataCorrupted", let rhs)):
            return rhs.starts(with: lhs)
        case (.failure(let lhsKind, let lhs), .failure(let rhsKind, let rhs)):
            return lhsKind == rhsKind && lhs == rhs
        default:
            return false
        }
    }

    /// Decodes `json` as `type` with both decoders.
    func outcomes<T: Decodable & Equatable>(_ type: T.Type, _ json: Data) -> (foundation: DecodeOutcome<T>, fast: DecodeOutcome<T>) {
        (Self.outcome { try foundation.decode(type, from: json) }, Self.outcome { try fast.decode(type, from: json) })
    }

    /// Records a test issue unless both decoders agree on `json`.
    func expectAgreement<T: Decodable & Equatable>(
        _ type: T.Type,
        _ json: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectAgreement(type, Data(json.utf8), sourceLocation: sourceLocation)
    }

    /// - Parameter unorderedErrors: `T` holds dictionaries, which Foundation decodes in hash
    ///   order: with several bad entries, which one it reports differs from run to run, so only
    ///   acceptance and values are compared.
    func expectAgreement<T: Decodable & Equatable>(
        _ type: T.Type,
        _ json: Data,
        unorderedErrors: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (reference, candidate) = outcomes(type, json)
        let bothFailed = reference.isFailure && candidate.isFailure
        #expect(
            (unorderedErrors && bothFailed) || Self.agree(reference, candidate),
            "\(T.self) from \(String(decoding: json, as: UTF8.self).debugDescription): JSONDecoder gave \(reference), FastJSONDecoder gave \(candidate)",
            sourceLocation: sourceLocation
        )
    }
}

extension DecodeOutcome: Sendable where T: Sendable {}
