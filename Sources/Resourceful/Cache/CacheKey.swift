import Foundation
import HTTPTypes

/// Where ``HTTPCacheMiddleware`` files a request's answer: its URL, and who asked.
///
/// Every part of a request that the redaction rules (``APIConfig/redaction``) call a secret is a
/// credential: masked header fields (`Authorization`, `Cookie`, `Proxy-Authorization`, the
/// configured credential field, `X-Api-Key`, any configured masked header) and masked query items
/// (`api_key=`, `access_token=`…). A request that carries any is credentialed, and its answers
/// are filed under a keyed digest of them (HMAC-SHA256 with an ``HTTPCacheDigestKey``), so that
/// they are never served to another credential or to an anonymous call; so is the userinfo of
/// the URL. The key holds the URL without its userinfo and with masked query values replaced,
/// never a secret, and no digest a dictionary could be tried against without the key.
struct CacheKey: Hashable {
    /// The storage key: the masked URL, then the credential's digest when there is one.
    let storageKey: String
    /// The masked URL alone: the key of anonymous answers for the same URL.
    let anonymousKey: String
    /// Whether the request carries a credential.
    var isCredentialed: Bool { storageKey != anonymousKey }

    init(_ request: TransportRequest, redactor: Redactor, digestKey: HTTPCacheDigestKey = .processWide) {
        self.init(target: request.target, headerFields: request.headerFields, redactor: redactor, digestKey: digestKey)
    }

    init(target: RequestTarget, headerFields: HTTPFields, redactor: Redactor, digestKey: HTTPCacheDigestKey = .processWide) {
        var material: [String] = []
        for field in headerFields where redactor.masksHeader(field.name.canonicalName) {
            material.append("h " + field.name.canonicalName + ": " + field.value)
        }
        for item in target.query where redactor.isMasked(decodedFormName: item.name) {
            material.append("q " + item.encodedName + "=" + (item.encodedValue ?? ""))
        }
        // The userinfo of the URL (`https://user:password@host`) is a credential too; the key
        // holds the URL without it.
        let origin = target.origin
        if let separator = origin.range(of: "://"), let at = origin[separator.upperBound...].lastIndex(of: "@") {
            material.append("u " + origin[separator.upperBound..<at])
        }
        anonymousKey = redactor.maskedURL(target)
        // Whatever else masking hides (a path parameter, a URL inside a query value, JSON in one)
        // tells two callers apart too.
        if anonymousKey != target.url { material.append("t " + target.url) }
        guard !material.isEmpty else {
            storageKey = anonymousKey
            return
        }
        // Sorted, so that the order of fields does not make another credential; each part
        // prefixed by its length, so that no two lists of parts give the same bytes.
        // A space never appears in a URL, so no URL can spell another's credentialed key.
        storageKey = anonymousKey + " credential:hmac-sha256:" + digestKey.digest(material.sorted())
    }
}
