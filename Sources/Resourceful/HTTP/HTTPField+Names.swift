import HTTPTypes

extension HTTPField.Name {
    /// `Idempotency-Key`: lets the server recognise a retried create
    /// ([IETF draft](https://datatracker.ietf.org/doc/draft-ietf-httpapi-idempotency-key-header/)).
    // A literal, valid token (RFC 9110 §5.1), so the initializer cannot return nil.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
    /// `Link` ([RFC 8288](https://www.rfc-editor.org/rfc/rfc8288#section-3)).
    // A literal, valid token (RFC 9110 §5.1), so the initializer cannot return nil.
    static let link = HTTPField.Name("Link")!
}
