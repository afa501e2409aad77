/// No value: no parameters to send, or no content to decode.
///
/// Use it as a request's `Parameters` when it sends none, and as its `ResourceType` when the server
/// answers `204 No Content` or an empty body. Decoding `Empty` accepts an empty body and any JSON
/// value, which it ignores. Encoding it as parameters sends nothing.
public struct Empty: Codable, Sendable, Hashable {
    /// Creates the empty value.
    public init() {}

    /// Decodes an empty value, ignoring whatever the decoder holds.
    public init(from decoder: any Decoder) throws {}

    /// Encodes nothing: as parameters, an empty query string or no body.
    public func encode(to encoder: any Encoder) throws {}
}
