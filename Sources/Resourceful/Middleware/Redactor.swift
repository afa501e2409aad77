import Logging
package import Foundation
import HTTPTypes
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
            let value = names.contains(name) ? Self.mask : field.value
            if case .string(let existing) = metadata[name] {
                metadata[name] = .string(existing + ", " + value)
            } else {
                metadata[name] = .string(value)
            }
        }
        return metadata
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

    /// `url` with the values of masked query keys replaced.
    package func maskedURL(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let fragment = url[question...].firstIndex(of: "#")
        let query = url[url.index(after: question)..<(fragment ?? url.endIndex)]
        return String(url[...question]) + self.query(String(query)) + (fragment.map { String(url[$0...]) } ?? "")
    }

    /// A whole body with masked fields replaced, when its media type says how to find them (JSON,
    /// form, multipart); any other body as it is.
    package func maskedBody(_ body: Data, contentType: String?) -> Data {
        guard !body.isEmpty, let contentType else { return body }
        let essence = String(MediaType.essence(of: contentType))
        if MediaType.isJSON(essence) {
            return maskedJSON(body) ?? body
        }
        if MediaType.isForm(essence) {
            return Data(query(String(decoding: body, as: UTF8.self)).utf8)
        }
        if essence == "multipart/form-data", let boundary = MultipartMasking.boundary(of: contentType) {
            return MultipartMasking.mask(body, boundary: boundary) { isMasked(formName: $0) }
        }
        return body
    }

    /// A body as it may be logged: JSON and form bodies with masked fields replaced, cut to the
    /// configured size; other content only as its size, since it cannot be masked.
    func body(_ buffer: ByteBuffer, contentType: String?) -> String {
        guard buffer.readableBytes > 0 else { return "" }
        let type = contentType.map { String(MediaType.essence(of: $0)) } ?? ""
        let text: String
        if MediaType.isJSON(type) {
            guard let masked = maskedJSON(buffer) else { return "<\(buffer.readableBytes) bytes, not valid JSON>" }
            text = masked
        } else if MediaType.isForm(type) {
            text = query(String(buffer: buffer))
        } else {
            return "<\(buffer.readableBytes) bytes of \(type.isEmpty ? "unknown type" : type)>"
        }
        return cut(text)
    }

    private func cut(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxBodyBytes else { return text }
        let prefix = String(decoding: utf8.prefix(maxBodyBytes), as: UTF8.self)
        return prefix + "… (\(utf8.count) bytes)"
    }

    /// A JSON document with the values of masked keys replaced, or `nil` when it is not JSON or
    /// holds no masked key (so that it can be kept byte for byte).
    package func maskedJSON(_ data: Data) -> Data? {
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        var masked = false
        let result = mask(object, masked: &masked)
        guard masked else { return nil }
        return try? JSONSerialization.data(withJSONObject: result, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    }

    private func maskedJSON(_ buffer: ByteBuffer) -> String? {
        let data = Data(buffer: buffer, byteTransferStrategy: .noCopy)
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else { return nil }
        var changed = false
        let masked = mask(object, masked: &changed)
        guard let output = try? JSONSerialization.data(withJSONObject: masked, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: output, as: UTF8.self)
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
        let decoded = (formName.replacingOccurrences(of: "+", with: " ")).removingPercentEncoding ?? formName
        let last = decoded.split(whereSeparator: { $0 == "[" || $0 == "]" }).last.map(String.init) ?? decoded
        return names.contains(last)
    }
}
