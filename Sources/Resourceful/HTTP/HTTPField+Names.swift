import HTTPTypes

extension HTTPField.Name {
    /// `Idempotency-Key`: lets the server recognise a retried create
    /// ([IETF draft](https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/)).
    // A literal, valid token (RFC 9110 §5.1), so the initializer cannot return nil.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// `Link` ([RFC 8288](https://www.rfc-editor.org/rfc/rfc8288#section-3)).
    // A literal, valid token (RFC 9110 §5.1), so the initializer cannot return nil.
    static let link = HTTPField.Name("Link")!
    /// `Refresh`: a delay and a URL to go to (`5; url=https://…`), sent by some servers.
    // A literal, valid token (RFC 9110 §5.1), so the initializer cannot return nil.
    static let refresh = HTTPField.Name("Refresh")!
}

extension HTTPField.Name {
    /// The name of a received field: the ones servers send with nearly every answer, written as
    /// they usually are, are taken as they are instead of being checked and lower-cased again.
    static func received(_ name: String) -> HTTPField.Name? {
        switch name {
        case "Server": .server
        case "Date": .date
        case "Content-Type": .contentType
        case "Content-Length": .contentLength
        case "Connection": .connection
        case "Transfer-Encoding": .transferEncoding
        case "Content-Encoding": .contentEncoding
        case "Cache-Control": .cacheControl
        case "ETag": .eTag
        case "Last-Modified": .lastModified
        case "Vary": .vary
        case "Accept-Ranges": .acceptRanges
        default: HTTPField.Name(name)
        }
    }
}
