package import Foundation
import NIOCore
import NIOFoundationEssentialsCompat

extension Redactor {
    /// A whole body with masked fields replaced, when its media type says how to find them (JSON,
    /// form, multipart, the JSON of event streams' `data` lines and of JSON Lines) and it reads as that type; `nil` when it cannot be masked (no or another
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
            return maskedForm(body)
        }
        if essence == "text/event-stream" { return maskedEventStream(body) }
        if essence == "application/jsonl" || essence == "application/x-ndjson" { return maskedJSONLines(body) }
        if essence == "multipart/form-data", let boundary = MultipartMasking.boundary(of: contentType) {
            return MultipartMasking.mask(
                body, boundary: boundary, isMasked: { isMasked(formName: $0) },
                maskContent: { maskedPartContent($0, contentType: $1, isFile: $2) })
        }
        return nil
    }

    /// A multipart part's content, masked by its own `Content-Type`: JSON, forms, event streams,
    /// JSON Lines and multipart as whole bodies are; plain text (`text/plain`, the type of a part
    /// that names none) as a text value (``maskedText(_:)``), or as JSON when it looks like JSON;
    /// `nil` when it cannot be masked with certainty: another type, unless the part is a file
    /// (`filename=`), which is kept as it is (a document, an image: logs never show multipart
    /// bodies, recordings and cURL exports keep the files they send).
    func maskedPartContent(_ content: Data, contentType: String?, isFile: Bool) -> Data? {
        let essence = contentType.map { String(MediaType.essence(of: $0)) } ?? "text/plain"
        if Self.isMaskable(essence) {
            guard essence != "multipart/form-data" else { return nil }
            return maskedBody(content, contentType: contentType)
        }
        if essence == "text/plain" {
            guard let text = String(validating: content, as: UTF8.self) else { return isFile ? content : nil }
            var trimmed = Substring(text)
            while let first = trimmed.unicodeScalars.first, first.properties.isWhitespace || first == "\u{FEFF}" {
                trimmed = Substring(trimmed.unicodeScalars.dropFirst())
            }
            if trimmed.first == "{" || trimmed.first == "[" || trimmed.first == "\"" {
                let document = Data(trimmed.utf8)
                if let masked = maskedJSON(document) { return masked == document ? content : masked }
                // Quotes around text are text; braces or brackets that are not JSON cannot be masked.
                guard trimmed.first == "\"" else { return nil }
            }
            let shown = maskedText(text)
            return shown == text ? content : Data(shown.utf8)
        }
        return isFile ? content : nil
    }

    /// What stands for a body that is not shown: its size and media type.
    package static func leftOut(_ byteCount: Int, contentType: String?, reason: String) -> String {
        let type = contentType.map { String(MediaType.essence(of: $0)) } ?? ""
        return "<\(byteCount) bytes of \(type.isEmpty ? "unknown type" : type), left out: \(reason)>"
    }

    /// A body as it may be logged: the masked form ``maskedBody(_:contentType:)`` gives (JSON,
    /// form, event streams, JSON Lines), cut to the configured size; otherwise only its size and
    /// type (another type, a body that is not what its type says, or not text). A multipart body
    /// is logged as its size alone: its files (a key file, a document) are no log line's business.
    func body(_ buffer: ByteBuffer, contentType: String?) -> String {
        guard buffer.readableBytes > 0 else { return "" }
        let type = contentType.map { String(MediaType.essence(of: $0)) } ?? ""
        guard type != "multipart/form-data" else { return "<\(buffer.readableBytes) bytes of \(type)>" }
        guard let masked = maskedBody(Data(buffer: buffer, byteTransferStrategy: .noCopy), contentType: contentType) else {
            guard Self.isMaskable(type) else { return "<\(buffer.readableBytes) bytes of \(type.isEmpty ? "unknown type" : type)>" }
            return Self.leftOut(buffer.readableBytes, contentType: contentType, reason: "it cannot be masked")
        }
        guard let text = String(validating: masked, as: UTF8.self), !text.utf8.contains(0) else {
            return Self.leftOut(buffer.readableBytes, contentType: contentType, reason: "it is not text")
        }
        return cut(text)
    }

    /// Whether bodies of the media type `essence` are masked field by field
    /// (``maskedBody(_:contentType:)``), so that one that fails to mask is not what its type says.
    package static func isMaskable(_ essence: String) -> Bool {
        MediaType.isJSON(essence) || MediaType.isForm(essence) || essence == "multipart/form-data" || essence == "text/event-stream"
            || essence == "application/jsonl" || essence == "application/x-ndjson"
    }

    private func cut(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxBodyBytes else { return text }
        let prefix = String(decoding: utf8.prefix(maxBodyBytes), as: UTF8.self)
        return prefix + "… (\(utf8.count) bytes)"
    }

    /// A JSON document with the values of masked keys replaced, in one pass over its bytes
    /// (``JSONMasking``); the document byte for byte when it holds no masked key, or `nil` when it
    /// is not JSON.
    /// ``maskedJSON(_:)`` for one document of a stream.
    func maskedJSONDocument(_ data: Data) -> Data? {
        maskedJSON(data)
    }

    private func maskedJSON(_ data: Data) -> Data? {
        let outcome = data.withUnsafeBytes { raw in
            JSONMasking.mask(raw.bindMemory(to: UInt8.self), isMasked: { names.contains($0) }, maskText: { maskedText($0) })
        }
        switch outcome {
        case .unchanged: return data
        case .masked(let bytes): return Data(bytes)
        case .invalid: return nil
        }
    }
}
