public import Resourceful

/// How a replayed request is matched to a recorded one.
///
/// By default the method and the URL must be the same, the query's pairs in any order; values
/// masked when the cassette was written (`***`) match any value. Repeated identical requests are
/// answered by their recordings in order, each once.
public struct RequestMatching: Sendable {
    /// Whether the scheme, host and port may differ: only path and query count.
    public var ignoresOrigin: Bool
    /// Header fields whose values must be the same too (masked ones need only be present).
    public var headers: [String]
    /// Whether bodies must be the same too: JSON compared as values, forms as their pairs in any
    /// order, anything else byte for byte, masked values ignored.
    public var body: Bool
    /// A further condition of your own, asked only of recordings that match otherwise.
    public var custom: (@Sendable (TransportRequest, CassetteRequest) -> Bool)?

    /// Creates matching rules.
    public init(
        ignoresOrigin: Bool = false,
        headers: [String] = [],
        body: Bool = false,
        custom: (@Sendable (TransportRequest, CassetteRequest) -> Bool)? = nil
    ) {
        self.ignoresOrigin = ignoresOrigin
        self.headers = headers
        self.body = body
        self.custom = custom
    }
}
