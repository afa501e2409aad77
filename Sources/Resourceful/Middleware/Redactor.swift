import Logging
package import Foundation
package import HTTPTypes
import NIOCore
import NIOFoundationEssentialsCompat

/// Masks secrets in what is logged: header values, JSON keys, query and form fields whose names
/// ``SensitiveNames`` calls sensitive. Recordings (`ResourcefulTesting`) mask by the same rules.
package struct Redactor: Sendable {
    /// What a masked value is replaced with.
    package static let mask = "***"

    private let names: SensitiveNames
    private let maxBodyBytes: Int

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
    /// URLs (`Location`, `Content-Location`, `Link`, `Refresh`), each URL's masked query values
    /// replaced.
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

    /// Whether a header field's value is masked.
    package func masksHeader(_ name: String) -> Bool {
        names.contains(name)
    }

    /// A query string with the values of masked keys replaced.
    package func query(_ query: String) -> String {
        guard !query.isEmpty else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            return isMasked(formName: name) ? name + "=" + Self.mask : String(pair)
        }.joined(separator: "&")
    }

    /// Query items as a query string, with the values of masked names replaced.
    package func query(_ items: [RequestTarget.QueryItem]) -> String {
        var result = ""
        for item in items {
            if !result.isEmpty { result += "&" }
            if item.encodedValue != nil, isMasked(decodedFormName: item.name) {
                result += item.encodedName + "=" + Self.mask
            } else {
                item.write(to: &result)
            }
        }
        return result
    }

    /// `target`'s URL with the values of masked query names replaced.
    package func maskedURL(_ target: RequestTarget) -> String {
        var masked = target
        masked.query = []
        let url = masked.url
        return target.query.isEmpty ? url : url + "?" + query(target.query)
    }

    /// `url` with the values of masked query keys replaced.
    package func maskedURL(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let fragment = url[question...].firstIndex(of: "#")
        let query = url[url.index(after: question)..<(fragment ?? url.endIndex)]
        return String(url[...question]) + self.query(String(query)) + (fragment.map { String(url[$0...]) } ?? "")
    }

    /// A whole body with masked fields replaced, when its media type says how to find them (JSON,
    /// form, multipart) and it reads as that type; `nil` when it cannot be masked (no or another
    /// media type, or not what its type says), so that it is never shown or kept as it is. An
    /// empty body, and JSON without a masked key, are returned byte for byte.
    package func maskedBody(_ body: Data, contentType: String?) -> Data? {
        guard !body.isEmpty else { return body }
        guard let contentType else { return nil }
        let essence = String(MediaType.essence(of: contentType))
        if MediaType.isJSON(essence) {
            return maskedJSON(body)
        }
        if MediaType.isForm(essence) {
            return Data(query(String(decoding: body, as: UTF8.self)).utf8)
        }
        if essence == "multipart/form-data", let boundary = MultipartMasking.boundary(of: contentType) {
            return MultipartMasking.mask(body, boundary: boundary) { isMasked(formName: $0) }
        }
        return nil
    }

    /// What stands for a body that is not shown: its size and media type.
    package static func leftOut(_ byteCount: Int, contentType: String?, reason: String) -> String {
        let type = contentType.map { String(MediaType.essence(of: $0)) } ?? ""
        return "<\(byteCount) bytes of \(type.isEmpty ? "unknown type" : type), left out: \(reason)>"
    }

    /// A body as it may be logged: JSON and form bodies with masked fields replaced, cut to the
    /// configured size; other content only as its size, since it cannot be masked.
    func body(_ buffer: ByteBuffer, contentType: String?) -> String {
        guard buffer.readableBytes > 0 else { return "" }
        let type = contentType.map { String(MediaType.essence(of: $0)) } ?? ""
        guard MediaType.isJSON(type) || MediaType.isForm(type) else {
            return "<\(buffer.readableBytes) bytes of \(type.isEmpty ? "unknown type" : type)>"
        }
        guard let masked = maskedBody(Data(buffer: buffer, byteTransferStrategy: .noCopy), contentType: type) else {
            return "<\(buffer.readableBytes) bytes, not valid JSON>"
        }
        return cut(String(decoding: masked, as: UTF8.self))
    }

    private func cut(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxBodyBytes else { return text }
        let prefix = String(decoding: utf8.prefix(maxBodyBytes), as: UTF8.self)
        return prefix + "… (\(utf8.count) bytes)"
    }

    /// A JSON document with the values of masked keys replaced (keys sorted), the document byte
    /// for byte when it holds no masked key, or `nil` when it is not JSON.
    private func maskedJSON(_ data: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        var masked = false
        let result = mask(object, masked: &masked)
        guard masked else { return data }
        return try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    }

    private func mask(_ value: Any, masked: inout Bool) -> Any {
        switch value {
        case let dictionary as [String: Any]:
            var result: [String: Any] = [:]
            for (key, item) in dictionary {
                if names.contains(key) {
                    result[key] = Self.mask
                    masked = true
                } else {
                    result[key] = mask(item, masked: &masked)
                }
            }
            return result
        case let array as [Any]:
            return array.map { mask($0, masked: &masked) }
        default:
            return value
        }
    }

    /// Whether a query or form name such as `user[password]` or `user%5Bpassword%5D` ends in a masked key.
    package func isMasked(formName: String) -> Bool {
        isMasked(decodedFormName: RequestTarget.QueryItem(encodedName: formName, encodedValue: nil).name)
    }

    /// Whether a decoded query or form name such as `user[password]` ends in a masked key.
    package func isMasked(decodedFormName decoded: String) -> Bool {
        let last = decoded.split(whereSeparator: { $0 == "[" || $0 == "]" }).last.map(String.init) ?? decoded
        return names.contains(last)
    }
}
