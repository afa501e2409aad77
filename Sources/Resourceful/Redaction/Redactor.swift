import Logging
import Foundation
package import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// Masks secrets in what is logged: header values, JSON keys, query and form fields whose names
/// ``SensitiveNames`` calls sensitive. Recordings (`ResourcefulTesting`) mask by the same rules.
package struct Redactor: Sendable {
    /// What a masked value is replaced with.
    package static let mask = "***"

    let names: SensitiveNames
    let maxBodyBytes: Int

    package init(settings: APIConfig.LogSettings) {
        names = settings.sensitiveNames
        maxBodyBytes = settings.maxBodyBytes
    }

    /// The header fields as log metadata, masked values replaced.
    func headers(_ fields: HTTPFields) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for field in fields {
            let name = field.name.canonicalName
            let value = headerValue(field.name, field.value)
            if case .string(let existing) = metadata[name] {
                metadata[name] = .string(existing + ", " + value)
            } else {
                metadata[name] = .string(value)
            }
        }
        return metadata
    }

    /// A header field's value as it may be shown: `***` for a masked field; in a field that holds
    /// URLs (`Location`, `Content-Location`, `Link`, `Refresh`), each URL without its userinfo and
    /// with its masked query values replaced (``maskedURL(_:)-(String)``).
    package func headerValue(_ name: HTTPField.Name, _ value: String) -> String {
        if masksHeader(name.canonicalName) { return Self.mask }
        switch name {
        case .location, .contentLocation:
            return maskedURL(value)
        case .link:
            return maskedLinks(value)
        case .refresh:
            // `5; url=https://…`: the part after `url=` is a URL.
            guard let range = value.range(of: "url=", options: .caseInsensitive) else { return value }
            return String(value[..<range.upperBound]) + maskedURL(String(value[range.upperBound...]))
        default:
            return value
        }
    }

    /// Each `<…>` URL of a `Link` value with its masked query values replaced.
    private func maskedLinks(_ value: String) -> String {
        var result = ""
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += rest[...open]
            result += maskedURL(String(rest[rest.index(after: open)..<close]))
            rest = rest[close...]
        }
        return result + rest
    }

    /// Whether a header field's value is masked: ``SensitiveNames/isSensitiveHeader(_:)``, with
    /// the configured names.
    package func masksHeader(_ name: String) -> Bool {
        names.isSensitiveHeader(name)
    }
}
