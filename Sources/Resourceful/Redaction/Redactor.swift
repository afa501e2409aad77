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

    /// A header field's value as it may be shown: `***` for a masked field; in any other, what a
    /// body of its form would hide, hidden the same way (``maskedFieldValue(_:)``): every URL it
    /// is or holds (`Location`, `Link` targets and `anchor`s, `Refresh` with or without `url=`,
    /// `Referer`, `Origin`, an `X-Callback-Url`, encoded ones too) without its userinfo and with
    /// its masked query values and path parameters replaced, JSON masked as JSON, the values of
    /// masked names in `name=value` pairs (`a=1; password=…`, `password=…&x=1`) and the
    /// credential after an authentication scheme (`Bearer …`, `Basic …`, `Digest …`) replaced;
    /// the whole value when what it hides cannot be located with certainty.
    ///
    /// A field whose value is a list of field names (`Vary`, `Access-Control-Allow-Headers`,
    /// `Connection`…) is shown as it is while it holds only names, commas and spaces
    /// (`authorization,x-api-key`): a name there is not given a value. The quoted strings of a
    /// `Server-Timing` or `Warning` field are prose (`desc="Auth check"`, `"password expires soon"`).
    package func headerValue(_ name: HTTPField.Name, _ value: String) -> String {
        if masksHeader(name.canonicalName) { return Self.mask }
        if Self.fieldNameListFields.contains(name.canonicalName.lowercased()),
            value.unicodeScalars.allSatisfy({ Self.isFieldNameListScalar($0) || $0 == "," || $0 == " " || $0 == "\t" })
        {
            return value
        }
        let lowercased = name.canonicalName.lowercased()
        return maskedFieldValue(
            value, isChallenge: Self.challengeFields.contains(lowercased), quotesProse: Self.quotedProseFields.contains(lowercased))
    }

    /// Header fields whose quoted strings are prose (Server-Timing's `desc`, a `Warning`'s text):
    /// read as a text is (``maskedFieldValue(_:isChallenge:quotesProse:)``).
    static let quotedProseFields: Set<String> = ["server-timing", "warning"]

    /// Header fields whose value is a list of field names (RFC 9110 §7.6.1, §12.5.5; Fetch's CORS
    /// fields).
    static let fieldNameListFields: Set<String> = [
        "vary", "connection", "trailer", "access-control-allow-headers", "access-control-expose-headers",
        "access-control-request-headers",
    ]

    /// The characters field names use in practice (ASCII letters, digits, `-`, `_`, `.`), and the
    /// `*` of `Vary: *`: no separator a secret name could be given a value with (`password|…`).
    private static func isFieldNameListScalar(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.*".unicodeScalars.contains(scalar)
    }

    /// `text` with every URL in it masked: the userinfo of each authority replaced
    /// (``withoutUserinfo(_:)``), and in each word that holds a query, a fragment, a path
    /// parameter or a percent-encoded character (words end at spaces, quotes and angle brackets:
    /// `<…>`, `url='…'`, `anchor="…"`), the values of masked names replaced and encoded URLs
    /// (`https%3A%2F%2Fuser%3Apass%40host`, encoded once or more) masked
    /// (``maskedURL(_:)-(String)``).
    package func maskedURLs(in text: String) -> String {
        let text = Self.withoutUserinfo(text)
        guard text.contains(where: Self.isURLPartCharacter) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var word = ""
        func flush() {
            result += word.contains(where: Self.isURLPartCharacter) ? maskedURL(word) : word
            word = ""
        }
        for character in text {
            if character.isWhitespace || character == "\"" || character == "'" || character == "<" || character == ">" {
                flush()
                result.append(character)
            } else {
                word.append(character)
            }
        }
        flush()
        return result
    }

    /// Whether `character` starts a part of a URL that may hold something to mask: a query, a
    /// fragment, a path parameter or a percent-encoded character.
    private static func isURLPartCharacter(_ character: Character) -> Bool {
        character == "?" || character == "#" || character == ";" || character == "%"
    }

    /// Whether a header field's value is masked: ``SensitiveNames/isSensitiveHeader(_:)``, with
    /// the configured names.
    package func masksHeader(_ name: String) -> Bool {
        names.isSensitiveHeader(name)
    }
}
