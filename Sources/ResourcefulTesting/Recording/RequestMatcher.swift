import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat
import Resourceful

/// Applies ``RequestMatching`` to a request and a recording, and says why they differ.
struct RequestMatcher: Sendable {
    /// How far a recording is from a request, and why.
    struct Mismatch {
        var weight: Int
        var reason: String
    }

    let rules: RequestMatching
    let redaction: CassetteRedaction

    /// `nil` when `recorded` answers `request`; else how far it is from it.
    func mismatch(_ request: TransportRequest, _ recorded: CassetteRequest) -> Mismatch? {
        var weight = 0
        var reasons: [String] = []
        let sent = URLParts(request.url)
        let kept = URLParts(recorded.url)
        if !rules.ignoresOrigin, sent.origin != kept.origin {
            weight += 16
            reasons.append("the origin differs (recorded \(kept.origin))")
        }
        if sent.path != kept.path {
            weight += 8
            reasons.append("the path differs (recorded \(kept.path))")
        }
        if request.method.rawValue.uppercased() != recorded.method.uppercased() {
            weight += 4
            reasons.append("the method differs (recorded \(recorded.method))")
        }
        // Both masked by the rules that wrote the recording (pairs split at `;` too, JSON in
        // values masked), so that a request matches the masked form of itself.
        let sentPairs = CassetteRedaction.queryItems(of: redaction.redactor.maskedURL(request.url))
        if maskedPairs(sentPairs) != maskedPairs(CassetteRedaction.queryItems(of: redaction.redactor.maskedURL(recorded.url))) {
            weight += 2
            reasons.append("the query differs (recorded \"\(redaction.redactor.query(kept.query))\")")
        }
        for name in rules.headers where !sameHeader(name, request, recorded) {
            weight += 1
            reasons.append("the header field \(name) differs")
        }
        if rules.body, !sameBody(request, recorded) {
            weight += 1
            reasons.append("the body differs")
        }
        if weight == 0, let custom = rules.custom, !custom(request, recorded) {
            weight += 1
            reasons.append("the custom matcher refused it")
        }
        return weight == 0 ? nil : Mismatch(weight: weight, reason: reasons.joined(separator: "; "))
    }

    /// The request as an error may name it: method and URL, masked query values replaced.
    func describe(_ request: TransportRequest) -> String {
        "\(request.method.rawValue) \(redaction.redactor.maskedURL(request.url))"
    }

    /// A recording as an error may name it.
    func describe(_ recorded: CassetteRequest) -> String {
        "\(recorded.method) \(redaction.redactor.maskedURL(recorded.url))"
    }

    /// Pairs sorted, with the values of masked names left out.
    private func maskedPairs(_ pairs: [(name: String, value: String)]) -> [String] {
        pairs.map { pair in
            pair.name + "=" + (redaction.redactor.isMasked(formName: pair.name) ? Redactor.mask : pair.value)
        }.sorted()
    }

    private func sameHeader(_ name: String, _ request: TransportRequest, _ recorded: CassetteRequest) -> Bool {
        let sent = HTTPField.Name(name).map { request.headerFields[values: $0].joined(separator: ", ") } ?? ""
        let kept = recorded.headerFields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value).joined(separator: ", ")
        if redaction.redactor.masksHeader(name) { return sent.isEmpty == kept.isEmpty }
        return sent == kept
    }

    private func sameBody(_ request: TransportRequest, _ recorded: CassetteRequest) -> Bool {
        let sent = request.body?.bytes.map { Data(buffer: $0, byteTransferStrategy: .noCopy) } ?? Data()
        let contentType = request.headerFields[.contentType] ?? recorded.contentType
        // A body that cannot be masked, or that the request redacts, was left out of the
        // recording: only its absence there can be compared.
        guard !request.shouldRedactRequestBody, let sentForm = canonical(sent, contentType) else { return recorded.body.isEmpty }
        return sentForm == canonical(recorded.body, recorded.contentType ?? contentType)
    }

    /// A body in a form in which equal bodies are equal bytes: masked, JSON with sorted keys,
    /// form pairs sorted; `nil` when it cannot be masked.
    private func canonical(_ body: Data, _ contentType: String?) -> Data? {
        guard let masked = redaction.redactor.maskedBody(body, contentType: contentType) else { return nil }
        if let contentType, MediaType.isForm(contentType) {
            return Data(maskedPairs(CassetteRedaction.formPairs(String(decoding: masked, as: UTF8.self))).joined(separator: "&").utf8)
        }
        if let object = try? JSONSerialization.jsonObject(with: masked, options: [.fragmentsAllowed]),
            let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        {
            return sorted
        }
        return masked
    }
}

/// A URL string's origin, path and query, read without percent-decoding.
struct URLParts {
    var origin = ""
    var path = ""
    var query = ""

    init(_ url: String) {
        var rest = Substring(url)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        guard let separator = rest.range(of: "://") else {
            path = String(rest)
            return
        }
        let scheme = rest[..<separator.lowerBound].lowercased()
        let afterScheme = rest[separator.upperBound...]
        let slash = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
        var authority = afterScheme[..<slash].lowercased()
        if let at = authority.lastIndex(of: "@") { authority = String(authority[authority.index(after: at)...]) }
        if scheme == "http", authority.hasSuffix(":80") { authority.removeLast(3) }
        if scheme == "https", authority.hasSuffix(":443") { authority.removeLast(4) }
        origin = scheme + "://" + authority
        path = afterScheme[slash...].isEmpty ? "/" : String(afterScheme[slash...])
    }
}
