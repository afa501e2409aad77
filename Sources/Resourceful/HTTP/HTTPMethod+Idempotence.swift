package import HTTPTypes

extension HTTPRequest.Method {
    /// Whether sending a request of this method twice has the effect of sending it once
    /// ([RFC 9110 §9.2.2](https://www.rfc-editor.org/rfc/rfc9110#section-9.2.2)): `GET`, `HEAD`,
    /// `OPTIONS`, `TRACE`, `PUT` and `DELETE`. `POST`, `PATCH`, `CONNECT` and any method RFC 9110
    /// does not define are not: such a request is sent again only with an `Idempotency-Key`.
    package var isIdempotent: Bool {
        switch self {
        case .get, .head, .options, .trace, .put, .delete: true
        default: false
        }
    }
}
