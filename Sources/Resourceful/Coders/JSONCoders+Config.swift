package import Foundation
import ResourcefulJSON

extension JSONEncoder {
    /// A JSON encoder using the key and date strategies of `coding`.
    package convenience init(coding: APIConfig.Coding) {
        self.init()
        switch coding.keyStrategy {
        case .useDefaultKeys: keyEncodingStrategy = .useDefaultKeys
        case .snakeCase: keyEncodingStrategy = .convertToSnakeCase
        }
        switch coding.dateStrategy {
        case .iso8601: dateEncodingStrategy = .iso8601
        case .secondsSince1970: dateEncodingStrategy = .secondsSince1970
        case .millisecondsSince1970: dateEncodingStrategy = .millisecondsSince1970
        case .deferredToDate: dateEncodingStrategy = .deferredToDate
        }
    }
}

extension JSONDecoder {
    /// A JSON decoder using the key and date strategies of `coding`.
    package convenience init(coding: APIConfig.Coding) {
        self.init()
        switch coding.keyStrategy {
        case .useDefaultKeys: keyDecodingStrategy = .useDefaultKeys
        case .snakeCase: keyDecodingStrategy = .convertFromSnakeCase
        }
        switch coding.dateStrategy {
        case .iso8601: dateDecodingStrategy = .iso8601
        case .secondsSince1970: dateDecodingStrategy = .secondsSince1970
        case .millisecondsSince1970: dateDecodingStrategy = .millisecondsSince1970
        case .deferredToDate: dateDecodingStrategy = .deferredToDate
        }
    }
}

extension APIConfig.Coding {
    /// The response decoder these settings choose (``decoder``), with their key and date
    /// strategies.
    package func makeResponseDecoder() -> any ResponseDecoder {
        switch decoder {
        case .fast: FastJSONDecoder(coding: self)
        case .foundation: JSONDecoder(coding: self)
        }
    }
}

extension APIConfig.DateStrategy {
    /// How a date is written in a query string or form body.
    func formString(_ date: Date) -> String {
        switch self {
        case .iso8601: date.formatted(.iso8601)
        case .secondsSince1970: Self.number(date.timeIntervalSince1970)
        case .millisecondsSince1970: Self.number(date.timeIntervalSince1970 * 1000)
        case .deferredToDate: Self.number(date.timeIntervalSinceReferenceDate)
        }
    }

    private static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
