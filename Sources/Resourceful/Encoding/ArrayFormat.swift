/// How arrays are written in query strings and form bodies.
///
/// No single form is read the same way by every server stack (see <doc:QueryStrings> for which
/// stack reads which); pick the one your server reads, in ``APIConfig/Coding-swift.struct/arrayFormat``
/// (the `coding.arrayFormat` key) or per request (``RequestOptions/arrayFormat``).
///
/// | format | `tags: ["a", "b"]` | `items: [{id: 1}, {id: 2}]` |
/// | --- | --- | --- |
/// | ``brackets`` | `tags[]=a&tags[]=b` | `items[0][id]=1&items[1][id]=2` |
/// | ``indices`` | `tags[0]=a&tags[1]=b` | `items[0][id]=1&items[1][id]=2` |
/// | ``repeated`` | `tags=a&tags=b` | refused |
/// | ``comma`` | `tags=a,b` | refused |
public enum ArrayFormat: String, Sendable, Hashable, CaseIterable {
    /// `tags[]=a&tags[]=b`, and numbered elements for arrays of objects or arrays: Rails, Rack,
    /// PHP and `qs` read lists of plain values this way. The default.
    case brackets
    /// `tags[0]=a&tags[1]=b`: PHP and `qs` read a list; Rack and Rails read a hash keyed by the
    /// numbers.
    case indices
    /// `tags=a&tags=b`: Python (`parse_qs`, FastAPI, Django's `getlist`), Go's `url.Values`,
    /// Java servlets, ASP.NET, and OpenAPI's default (`style: form`, `explode: true`). Arrays
    /// of objects or arrays cannot be written this way and fail the call with
    /// ``APIError/Kind/invalidRequest``.
    case repeated
    /// `tags=a,b`, a comma inside a value written `%2C`: OpenAPI's `style: form`,
    /// `explode: false`, and `qs` with `comma: true`. Only lists of plain values.
    case comma
}
