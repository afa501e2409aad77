package import Foundation

/// Masks the values of `multipart/form-data` parts whose names are masked, and the content of
/// every other part by its own `Content-Type` (a `metadata` part of JSON, a part holding a form),
/// failing closed.
///
/// A body is masked only when it reads exactly as RFC 2046 and RFC 7578 say, so that no parser
/// can read a field the masker did not see: it starts with the delimiter (no preamble), every
/// line of the structure ends with CRLF, it ends with the closing delimiter (and at most a CRLF),
/// no part holds the delimiter anywhere else (an LF-only delimiter a lenient parser would split
/// at), every part has one `Content-Disposition` with a name (parameters read as servers read
/// them: case-insensitive, quoted or not, `name*=` and RFC 2231 continuations `name*0`, `name*1*`…
/// decoded), none nests another multipart body, no part has a header field that can carry a
/// credential or a URL with userinfo (percent-encoded or not), none is encoded (`Content-Transfer-Encoding: base64`), and the content of each part can be masked by its type (``Redactor/maskedPartContent(_:contentType:isFile:)``:
/// a part of a type the rules cannot mask is kept only when it is a file, `filename=`). Anything
/// else (a body cut short, a boundary that does not match the `Content-Type`, a `name*…`
/// parameter that cannot be read) gives `nil`: the body is left out, never shown as it is.
package enum MultipartMasking {
    /// The `boundary` parameter of a `multipart/form-data` media type; `nil` when it is missing,
    /// given twice, or not a boundary RFC 2046 allows (1 to 70 of its characters, not ending in a
    /// space).
    package static func boundary(of contentType: String) -> String? {
        var found: String?
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            guard found == nil else { return nil }
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            found = value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2 ? String(value.dropFirst().dropLast()) : value
        }
        guard let found, (1...70).contains(found.utf8.count), found.last != " ", found.allSatisfy(isBoundaryCharacter) else { return nil }
        return found
    }

    /// RFC 2046's `bchars`.
    private static func isBoundaryCharacter(_ character: Character) -> Bool {
        guard character.isASCII else { return false }
        return character.isLetter || character.isNumber || "'()+_,-./:=? ".contains(character)
    }

    /// `body` with the content of each part whose `name` is masked replaced by `***`, and that of
    /// every other part as `maskContent` gives it (its content, `Content-Type` and whether it is
    /// a file); `nil` when the body cannot be masked with certainty.
    package static func mask(
        _ body: Data,
        boundary: String,
        isMasked: (String) -> Bool,
        maskContent: (Data, String?, Bool) -> Data?
    ) -> Data? {
        let dash = Data("--\(boundary)".utf8)
        let crlf = Data("\r\n".utf8)
        let nextDelimiter = crlf + dash
        guard body.starts(with: dash) else { return nil }
        var result = Data()
        result.reserveCapacity(body.count)
        var position = body.startIndex
        while true {
            let afterDelimiter = position + dash.count
            let rest = body[afterDelimiter...]
            if rest.starts(with: Data("--".utf8)) {
                // The closing delimiter, then nothing or one CRLF: an epilogue is not shown.
                let epilogue = rest.dropFirst(2)
                guard epilogue.isEmpty || epilogue.elementsEqual(crlf) else { return nil }
                result.append(body[position...])
                return result
            }
            guard rest.starts(with: crlf) else { return nil }
            let partStart = afterDelimiter + crlf.count
            guard let next = body.range(of: nextDelimiter, in: partStart..<body.endIndex) else { return nil }
            guard let masked = maskedPart(body[partStart..<next.lowerBound], dash: dash, isMasked: isMasked, maskContent: maskContent)
            else { return nil }
            result.append(body[position..<partStart])
            result.append(masked)
            result.append(crlf)
            position = next.lowerBound + crlf.count
        }
    }

    /// One part (headers, blank line, content), its content replaced when its name is masked,
    /// else masked by its type.
    private static func maskedPart(
        _ part: Data,
        dash: Data,
        isMasked: (String) -> Bool,
        maskContent: (Data, String?, Bool) -> Data?
    ) -> Data? {
        guard part.range(of: dash) == nil, let headerEnd = part.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        guard let headers = String(validating: part[part.startIndex..<headerEnd.lowerBound], as: UTF8.self) else { return nil }
        var dispositions: [Substring] = []
        var contentTypes: [String] = []
        for line in headers.split(separator: "\r\n", omittingEmptySubsequences: false) {
            // A bare CR or LF, a folded line or a line without a colon reads differently to
            // different parsers.
            guard !line.contains(where: { $0 == "\r" || $0 == "\n" }), let colon = line.firstIndex(of: ":"),
                let first = line.first, first != " ", first != "\t"
            else { return nil }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...]
            // A URL with userinfo in a part's field (`filename="https://user:pass@h/"`, or
            // percent-encoded: `filename*=UTF-8''https%3A%2F%2Fuser%3Apass%40h`) is not shown.
            guard !Redactor.holdsUserinfo(String(value)) else { return nil }
            switch name {
            case "content-disposition": dispositions.append(value)
            case "content-type" where value.trimmingCharacters(in: .whitespaces).lowercased().hasPrefix("multipart/"): return nil
            case "content-type": contentTypes.append(value.trimmingCharacters(in: .whitespaces))
            // Content some parsers decode (base64, quoted-printable) is not what the masker reads.
            case "content-transfer-encoding"
            where !["7bit", "8bit", "binary"].contains(value.trimmingCharacters(in: .whitespaces).lowercased()):
                return nil
            // A part's own credential field (`Authorization` in a part) is not shown either.
            case _ where SensitiveNames.isSensitiveHeader(name): return nil
            default: break
            }
        }
        guard dispositions.count == 1, contentTypes.count <= 1, let parameters = partNames(dispositions[0]), !parameters.names.isEmpty
        else { return nil }
        let headerPart = part[part.startIndex..<headerEnd.upperBound]
        guard !parameters.names.contains(where: isMasked) else { return headerPart + Data(Redactor.mask.utf8) }
        guard let content = maskContent(Data(part[headerEnd.upperBound...]), contentTypes.first, parameters.isFile) else { return nil }
        return headerPart + content
    }

    /// The values of the `name` and `name*` parameters of a `Content-Disposition` value (RFC 2231
    /// continuations `name*0`, `name*1*`… joined and decoded, as Django and Python read them),
    /// names compared without case and values quoted or not, and whether the part is a file (a
    /// `filename` parameter of any form); `nil` when a parameter cannot be read, a `name*…`
    /// parameter included.
    static func partNames(_ disposition: Substring) -> (names: [String], isFile: Bool)? {
        var names: [String] = []
        var isFile = false
        var continuations: [Int: (value: String, encoded: Bool)] = [:]
        var rest = disposition.drop(while: { $0 != ";" })
        while !rest.isEmpty {
            rest = rest.dropFirst().drop(while: { $0 == " " || $0 == "\t" })
            if rest.isEmpty { break }
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let parameter = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...].drop(while: { $0 == " " || $0 == "\t" })
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if character == "\"" {
                        closed = true
                        break
                    }
                    if character == "\\", let escaped = rest.first {
                        // Some parsers keep the backslash: both readings are checked.
                        names.append(value + "\\" + String(escaped))
                        value.append(escaped)
                        rest = rest.dropFirst()
                    } else {
                        value.append(character)
                    }
                }
                guard closed else { return nil }
                rest = rest.drop(while: { $0 == " " || $0 == "\t" })
                guard rest.isEmpty || rest.first == ";" else { return nil }
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            if parameter.hasPrefix("filename") { isFile = true }
            switch parameter {
            case "name": names.append(value)
            case "name*":
                // RFC 5987: charset'language'percent-encoded.
                let encoded = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false).last.map(String.init) ?? value
                names.append(PercentEncoding.decode(encoded))
                names.append(value)
            case _ where parameter.hasPrefix("name*"):
                // RFC 2231: `name*0`, `name*1*`…, each number once.
                var number = parameter.dropFirst("name*".count)
                let encoded = number.hasSuffix("*")
                if encoded { number = number.dropLast() }
                guard !number.isEmpty, number.count <= 3, number.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(number),
                    continuations[index] == nil
                else { return nil }
                continuations[index] = (value, encoded)
            default: break
            }
        }
        if !continuations.isEmpty {
            guard let joined = joinedContinuations(continuations) else { return nil }
            names.append(joined)
        }
        return (names, isFile)
    }

    /// The value RFC 2231 continuations spell: numbered from 0 without a gap, the first encoded
    /// one `charset'language'percent-encoded`; `nil` otherwise.
    private static func joinedContinuations(_ continuations: [Int: (value: String, encoded: Bool)]) -> String? {
        var encodedText = ""
        for index in 0..<continuations.count {
            guard let piece = continuations[index] else { return nil }
            var value = Substring(piece.value)
            if piece.encoded, index == 0 {
                let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count == 3 else { return nil }
                value = parts[2]
            }
            // Decoded once, whole, so that a character split across pieces is read as one.
            encodedText += piece.encoded ? String(value) : value.replacingOccurrences(of: "%", with: "%25")
        }
        return PercentEncoding.decode(encodedText)
    }
}
