/// How the parameters of a ``ResourceVerb/create`` or ``ResourceVerb/update`` request become its body.
public enum BodyEncoding: Sendable, Hashable {
    /// JSON through the request's or the injected ``RequestEncoder``; `Content-Type: application/json`.
    case json
    /// `application/x-www-form-urlencoded`, with keys written as in query strings (see <doc:QueryStrings>).
    case formURLEncoded
    /// `multipart/form-data`: each field a part, each ``MultipartFile`` value a file part.
    case multipart
}
